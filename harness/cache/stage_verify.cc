// Verification of staged files by SHA-256 read back from the device; the manifest that records a
// verified stage; and `feedbench verify`: every file of a cache's manifest re-hashed in
// parallel, the source compared by fingerprint.
#include "stage_verify.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <fcntl.h>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"
#include "feedbench/build_info.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"

namespace feedbench {

namespace fs = std::filesystem;

namespace {

// hash_from_device over `open(direct)`, which opens the file (O_DIRECT when `direct`) or returns
// -1 with errno set.
template <class Open>
std::string hash_opened_from_device(const Open& open, AlignedBuffer& buf, std::atomic<bool>& direct_ok,
                                    std::uint64_t* bytes, int* err, const std::atomic<int>* stop) {
  *err = 0;
  *bytes = 0;
  auto stopped = [stop] { return stop && stop->load(); };
  std::string digest;
  if (direct_ok.load(std::memory_order_relaxed)) {
    UniqueFd fd(open(/*direct=*/true));
    if (!fd && errno != EINVAL) {
      *err = errno;
      return "";
    }
    if (fd) {
      int rc = hash_whole_file(fd.get(), buf, stopped, &digest, bytes);
      if (rc == 0) return digest;
      if (!(rc == EINVAL && *bytes == 0)) {
        *err = rc;
        return "";
      }
    }
    direct_ok = false;  // e.g. tmpfs on older kernels: fall back to evict + read
  }
  UniqueFd fd(open(/*direct=*/false));
  if (!fd) {
    *err = errno;
    return "";
  }
  // Clean pages are dropped; the read below then comes from the device (on tmpfs the pages
  // are the device).
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  int rc = hash_whole_file(fd.get(), buf, stopped, &digest, bytes);
  if (rc != 0) {
    *err = rc;
    return "";
  }
  return digest;
}

}  // namespace

std::string hash_from_device(const std::string& path, AlignedBuffer& buf, std::atomic<bool>& direct_ok,
                             std::uint64_t* bytes, int* err, const std::atomic<int>* stop) {
  return hash_opened_from_device([&](bool direct) { return open_source(path, nullptr, direct); }, buf,
                                 direct_ok, bytes, err, stop);
}

std::string hash_from_device(int cache_fd, const std::string& relative, AlignedBuffer& buf,
                             std::atomic<bool>& direct_ok, std::uint64_t* bytes, int* err,
                             const std::atomic<int>* stop) {
  return hash_opened_from_device([&](bool direct) { return open_cached(cache_fd, relative, direct); }, buf,
                                 direct_ok, bytes, err, stop);
}

std::string hash_of_file(const std::string& path, AlignedBuffer& buf) {
  UniqueFd fd(open_source(path));
  if (!fd) return "";
  std::string digest;
  std::uint64_t bytes = 0;
  return hash_whole_file(
             fd.get(), buf, [] { return false; }, &digest, &bytes) == 0
             ? digest
             : "";
}

bool VerifyResult::ok() const {
  return !stopped_by_signal && missing.empty() && changed.empty() && extra.empty() && errors.empty() &&
         source_matches;
}

namespace {

// What re-hashing the files a manifest lists beneath one folder found.
struct Rehashed {
  std::vector<std::string> missing, changed, errors;  // relative paths; errors: messages
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  bool stopped = false;
};

// Re-hashes every file of `files` beneath `root` (open as `root_fd`) from the device (O_DIRECT, or
// evicted first), `workers` at once, each opened beneath it through no link; `what` ("verifying", "hashing
// the source") heads the progress line, `whose` ("a cache's") names the files in messages.
// RETURNS: what differs from the listed SHA-256.
Rehashed rehash_listed(int root_fd, const std::string& root, const std::vector<ManifestEntry>& files,
                       int workers, const VerifyOptions& options, const char* what,
                       const std::string& whose) {
  Rehashed out;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> direct_ok{true};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;
  auto work = [&] {
    AlignedBuffer buf(kStageChunk);
    while (!(options.stop && options.stop->load())) {
      std::size_t k = next.fetch_add(1);
      if (k >= files.size()) break;
      const ManifestEntry& e = files[k];
      const std::string path = root + "/" + e.path;
      std::uint64_t got = 0;
      int err = 0;
      const std::string hex = hash_from_device(root_fd, e.path, buf, direct_ok, &got, &err, options.stop);
      std::lock_guard lock(mutex);
      if (err == ENOENT || err == ENXIO) out.missing.push_back(e.path);  // ENXIO: not a regular file
      else if (err == EINTR) break;
      else if (err == ELOOP)
        out.errors.push_back(path + ": a symbolic link on the way, not followed (" + whose +
                             " files are read through its own folders only)");
      else if (err) out.errors.push_back(errno_message("cannot read " + path, err));
      else if (hex != e.sha256) out.changed.push_back(e.path);
      bytes += got;
      ++done;
    }
  };
  std::vector<std::thread> threads;
  const int n = std::min<int>(std::max(1, workers), int(std::max<std::size_t>(1, files.size())));
  for (int w = 0; w < n; ++w) {
    const std::string refused = start_thread(threads, work, "verify worker", w, n);
    if (!refused.empty()) {
      if (threads.empty()) throw RunError(refused);  // nothing could check the files
      break;                                         // the started ones check every file between them
    }
  }
  {
    ProgressTicker ticker(options.progress, [&] {
      std::fprintf(stderr, "\r\033[K%s  %zu/%zu files  %s", what, done.load(), files.size(),
                   format_size(double(bytes.load())).c_str());
      std::fflush(stderr);
    });
    for (auto& t : threads) t.join();
  }
  out.stopped = options.stop && options.stop->load();
  out.files = done.load();
  out.bytes = bytes.load();
  std::sort(out.missing.begin(), out.missing.end());
  std::sort(out.changed.begin(), out.changed.end());
  return out;
}

// The source's listing against the manifest's (names, sizes, mtimes, by the cached copies,
// which carry the source's): what moved, in result.source_differences.
void compare_source_listing(const FileSet& source, const FileSet& present,
                            const std::set<std::string>& listed, VerifyResult& result) {
  std::map<std::string, std::pair<std::uint64_t, std::int64_t>> cached;
  for (std::size_t i = 0; i < present.size(); ++i)
    cached[std::string(present.relative_path(i))] = {present.file_size(i), present.mtime_ns(i)};
  std::set<std::string> seen;
  for (std::size_t i = 0; i < source.size(); ++i) {
    std::string rel(source.relative_path(i));
    seen.insert(rel);
    auto c = cached.find(rel);
    if (!listed.count(rel)) result.source_differences.push_back("added to the source: " + rel);
    else if (c != cached.end() &&
             (c->second.first != source.file_size(i) || c->second.second != source.mtime_ns(i)))
      result.source_differences.push_back("changed in the source: " + rel);
  }
  for (const std::string& rel : listed)
    if (!seen.count(rel)) result.source_differences.push_back("removed from the source: " + rel);
  if (result.source_differences.empty())
    result.source_differences.push_back("the source selection's fingerprint differs from the manifest's");
}

}  // namespace

VerifyResult verify_cache(const VerifyOptions& options) {
  const auto start = StageClock::now();
  VerifyResult result;
  if (options.cache_root.empty()) throw InputError("--cache: the cache folder is required");
  if (!fs::is_directory(options.cache_root))
    throw InputError("--cache " + options.cache_root + ": not a folder");
  if (options.source_every_byte && options.source_root.empty())
    throw InputError("--fingerprint full: re-hashes the source against the manifest; give --source SRC");
  std::string why;
  std::optional<Manifest> m = read_manifest(options.cache_root, &why);
  if (!m)
    throw InputError(options.cache_root + " has no complete manifest (" + why + "): run feedbench stage");
  const std::string cache = resolve_maybe_missing(options.cache_root);
  FileSet present = scan_dataset(cache);
  std::set<std::string> listed;
  for (const ManifestEntry& e : m->files) listed.insert(e.path);
  for (std::size_t i = 0; i < present.size(); ++i)
    if (!listed.count(std::string(present.relative_path(i))))
      result.extra.emplace_back(present.relative_path(i));

  // Every listed file hashed from the device, in parallel; every file listed opened beneath the
  // cache folder: never out of the cache, never through a link.
  const int workers = std::max(1, options.workers > 0 ? options.workers : default_workers(cache));
  const UniqueFd cache_fd(::open(cache.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!cache_fd) throw InputError(errno_message("--cache " + options.cache_root, errno));
  Rehashed copies =
      rehash_listed(cache_fd.get(), cache, m->files, workers, options, "verifying", "a cache's");
  result.missing = std::move(copies.missing);
  result.changed = std::move(copies.changed);
  result.errors = std::move(copies.errors);
  if (copies.stopped) result.stopped_by_signal = options.stop->load();
  result.files_checked = copies.files;
  result.bytes_checked = copies.bytes;

  if (!options.source_root.empty() && !result.stopped_by_signal) {
    FileSet source = scan_dataset(options.source_root, m->include);
    result.source_checked = true;
    result.source_matches = source.fingerprint() == m->source_fingerprint;
    if (!result.source_matches) compare_source_listing(source, present, listed, result);
    if (options.source_every_byte) {
      // Every byte of each source file the manifest lists, against the SHA-256 it was staged
      // with: a change that kept the file's size and mtime shows here alone.
      const std::string root = resolve_maybe_missing(options.source_root);
      const int source_workers = std::max(1, options.workers > 0 ? options.workers : default_workers(root));
      const UniqueFd source_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!source_fd) throw InputError(errno_message("--source " + options.source_root, errno));
      Rehashed src = rehash_listed(source_fd.get(), root, m->files, source_workers, options,
                                   "hashing the source", "a source's");
      if (src.stopped) result.stopped_by_signal = options.stop->load();
      for (const std::string& rel : src.changed)
        result.source_differences.push_back("content differs from the manifest in the source: " + rel);
      for (std::string& e : src.errors) result.errors.push_back(std::move(e));
      if (!src.changed.empty()) result.source_matches = false;
      result.source_files_hashed = src.files;
      result.source_bytes_hashed = src.bytes;
    }
  }
  result.seconds = seconds_since(start);
  return result;
}

void record_stage(const StageOptions& options, const StagePlan& plan, const std::vector<std::string>& hashes,
                  StageResult& result) {
  Manifest m;
  m.label = plan.label;
  m.source_root = plan.source;
  m.source_fingerprint = plan.source_fingerprint;
  m.include = options.include;
  m.hot_set = options.hot_set;
  m.total_bytes = plan.selection.total_bytes();
  m.created_utc = utc_timestamp();
  m.feedbench_version = build::kVersion;
  for (std::size_t i = 0; i < plan.selection.size(); ++i) {
    FB_CHECK(!hashes[i].empty(), "a staged file without a hash");
    m.files.push_back({std::string(plan.selection.relative_path(i)), hashes[i]});
  }
  const std::optional<Manifest>& old = plan.old_manifest;
  bool unchanged = !plan.changes() && old && old->source_fingerprint == m.source_fingerprint &&
                   old->label == m.label && old->include == m.include && old->sums_text() == m.sums_text();
  if (options.write_manifest && !unchanged) {
    try {
      write_manifest(plan.cache, m);
    } catch (const RunError& e) {
      result.errors.push_back(std::string(e.what()) + " (the cache has no manifest; free space and re-run)");
    }
  }
  if (result.errors.empty()) {
    result.manifest_written = true;
    ::unlink((plan.cache + "/" + kStageJournalName).c_str());
  }
}

}  // namespace feedbench
