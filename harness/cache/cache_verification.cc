#include "feedbench/cache/cache_verification.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"

namespace feedbench {
namespace {

std::unordered_map<std::string_view, std::size_t> index_by_path(const FileSet& files) {
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) index.emplace(files.relative_path(i), i);
  return index;
}

}  // namespace

nlohmann::json CacheVerification::to_json() const {
  return {{"method", method},
          {"ok", ok},
          {"problems", problems},
          {"files_checked", files_checked},
          {"bytes_checked", bytes_checked}};
}

std::string CacheVerification::summary(const std::string& cache_root, std::size_t shown) const {
  if (ok) return "";
  return "the cache " + (cache_root.empty() ? std::string() : cache_root + " ") +
         "does not hold what its manifest lists (" + problem_list(shown) + ")";
}

std::string CacheVerification::problem_list(std::size_t shown) const {
  std::string out = plural(problems.size(), "problem", "problems") + ", checked by " + method + ": ";
  for (std::size_t i = 0; i < problems.size() && i < shown; ++i) out += (i ? "; " : "") + problems[i];
  if (problems.size() > shown) out += "; and " + std::to_string(problems.size() - shown) + " more";
  return out;
}

CacheVerification check_cache_listing(const std::string& cache_root, const FileSet& cache_selection,
                                      const FileSet& source_selection) {
  std::string why;
  const std::optional<Manifest> m = read_manifest(cache_root, &why);
  if (m) return check_cache_listing(*m, cache_selection, source_selection);
  CacheVerification v;
  v.method = "listing+sizes+mtimes";
  v.problems.push_back("no complete manifest (" + why + ")");
  return v;
}

CacheVerification check_cache_listing(const Manifest& manifest, const FileSet& cache_selection,
                                      const FileSet& source_selection) {
  CacheVerification v;
  v.method = "listing+sizes+mtimes";
  const Manifest* m = &manifest;
  const auto in_cache = index_by_path(cache_selection);
  const auto in_source = index_by_path(source_selection);
  std::unordered_map<std::string_view, bool> listed;
  listed.reserve(m->files.size());
  for (const ManifestEntry& e : m->files) {
    listed.emplace(e.path, true);
    auto c = in_cache.find(e.path);
    if (c == in_cache.end()) {
      v.problems.push_back("missing from the cache: " + e.path);
      continue;
    }
    ++v.files_checked;
    const std::uint64_t size = cache_selection.file_size(c->second);
    v.bytes_checked += size;
    auto s = in_source.find(e.path);
    if (s == in_source.end()) continue;  // check_cache vouched for the source: not reached
    const std::uint64_t staged = source_selection.file_size(s->second);
    if (size != staged)
      v.problems.push_back("size differs from the staged copy: " + e.path + " (" + std::to_string(size) +
                           " bytes, staged " + std::to_string(staged) + ")");
    else if (cache_selection.mtime_ns(c->second) != source_selection.mtime_ns(s->second))
      v.problems.push_back("modified since staging: " + e.path + " (its mtime is no longer the source's)");
  }
  for (std::size_t i = 0; i < cache_selection.size(); ++i)
    if (!listed.count(cache_selection.relative_path(i)))
      v.problems.push_back("not in the manifest: " + std::string(cache_selection.relative_path(i)));
  if (cache_selection.size() != m->files.size())
    v.problems.push_back("file count: the manifest lists " + std::to_string(m->files.size()) +
                         ", the cache selection holds " + std::to_string(cache_selection.size()));
  if (cache_selection.total_bytes() != m->total_bytes)
    v.problems.push_back("total bytes: the manifest lists " + std::to_string(m->total_bytes) +
                         ", the cache selection holds " + std::to_string(cache_selection.total_bytes()));
  v.ok = v.problems.empty();
  return v;
}

CacheVerification rehash_cache(const std::string& cache_root, const FileSet& cache_selection,
                               const FileSet& source_selection, bool progress) {
  const std::optional<Manifest> m = read_manifest(cache_root);
  if (m) return rehash_cache(cache_root, *m, cache_selection, source_selection, progress);
  CacheVerification v = check_cache_listing(cache_root, cache_selection, source_selection);
  v.method = "sha256";  // nothing to hash against: the listing said why
  return v;
}

CacheVerification rehash_cache(const std::string& cache_root, const Manifest& manifest,
                               const FileSet& cache_selection, const FileSet& source_selection,
                               bool progress) {
  CacheVerification v = check_cache_listing(manifest, cache_selection, source_selection);
  v.method = "sha256";
  VerifyOptions options;
  options.cache_root = cache_root;
  options.progress = progress;
  const VerifyResult r = verify_cache(options);
  for (const std::string& p : r.missing)
    if (std::find(v.problems.begin(), v.problems.end(), "missing from the cache: " + p) == v.problems.end())
      v.problems.push_back("missing from the cache: " + p);
  for (const std::string& p : r.changed)
    v.problems.push_back("content differs from the manifest's SHA-256: " + p);
  for (const std::string& e : r.errors) v.problems.push_back(e);
  // Extra files outside the run's selection are verify's business, not this run's.
  v.files_checked = r.files_checked;
  v.bytes_checked = r.bytes_checked;
  v.ok = v.problems.empty();
  return v;
}

CacheVerification recheck_cache_files(const FileSet& verified) {
  CacheVerification v;
  v.method = "listing+sizes+mtimes";
  const UniqueFd root = verified.open_root();
  if (!root) {
    const int err = errno;
    v.problems.push_back(errno_message("cannot open the cache folder " + verified.root(), err));
    return v;
  }
  for (std::size_t i = 0; i < verified.size(); ++i) {
    const std::string rel(verified.relative_path(i));
    ++v.files_checked;
    struct stat st {};
    if (::fstatat(root.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int err = errno;
      v.problems.push_back(err == ENOENT || err == ENOTDIR ? "removed during the run: " + rel
                                                           : errno_message("cannot look at " + rel, err));
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      v.problems.push_back("no longer a regular file: " + rel);
      continue;
    }
    v.bytes_checked += std::uint64_t(st.st_size);
    const std::int64_t mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (std::uint64_t(st.st_size) != verified.file_size(i))
      v.problems.push_back("size changed during the run: " + rel + " (" + std::to_string(st.st_size) +
                           " bytes, " + std::to_string(verified.file_size(i)) + " before)");
    else if (mtime_ns != verified.mtime_ns(i))
      v.problems.push_back("modified during the run: " + rel + " (its mtime changed)");
  }
  v.ok = v.problems.empty();
  return v;
}

}  // namespace feedbench
