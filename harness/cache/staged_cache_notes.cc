// What the folders a job read say of staged caches (staged_cache_notes.h).
#include "feedbench/cache/staged_cache_notes.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <system_error>

#include "feedbench/cache/cache_verification.h"
#include "feedbench/cache/stager.h"
#include "feedbench/dataset/dataset.h"

namespace feedbench {

namespace fs = std::filesystem;

bool manifest_lists_folder(const Manifest& m, const std::string& rel) {
  const std::string prefix = rel.empty() ? "" : rel + "/";
  const auto at = std::lower_bound(m.files.begin(), m.files.end(), prefix,
                                   [](const ManifestEntry& e, const std::string& p) { return e.path < p; });
  return at != m.files.end() && at->path.starts_with(prefix) &&
         at->path.find('/', prefix.size()) == std::string::npos;
}

std::optional<StagedCache> staged_cache_of(const fs::path& folder) {
  std::error_code ec;
  std::string rel;
  for (fs::path p = folder; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / kManifestJsonName, ec)) {
      StagedCache c{p.string(), std::nullopt, ""};
      try {
        c.manifest = read_manifest(c.root, &c.why);
      } catch (const std::runtime_error& e) {  // InputError or RunError: say why, judge on
        c.why = e.what();
      }
      if (c.manifest ? manifest_lists_folder(*c.manifest, rel) : p == folder) return c;
    }
    if (p == p.root_path()) break;
    rel = rel.empty() ? p.filename().string() : p.filename().string() + "/" + rel;
  }
  return std::nullopt;
}

std::vector<std::string> staged_cache_notes(const std::vector<std::string>& read_folders,
                                            const std::vector<std::string>& named_folders) {
  std::vector<std::string> notes;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < read_folders.size() && i < 5; ++i) {
    const std::optional<StagedCache> c = staged_cache_of(read_folders[i]);
    if (!c || !seen.insert(c->root).second) continue;
    const std::string& root = c->root;
    if (!c->manifest) {
      notes.push_back("cache: read from " + root +
                      ", a cache staged by feedbench stage whose manifest cannot be read (" + c->why +
                      "): not verified");
      continue;
    }
    const Manifest& m = *c->manifest;
    std::string check;
    try {
      ScanOptions bounded;
      bounded.limits.max_files = m.files.size() + 1;
      const FileSet source = scan_dataset(m.source_root, m.include, bounded);
      const std::string stale = check_cache(root, source, m, "");
      const CacheVerification v = check_cache_listing(m, scan_dataset(root, m.include, bounded), source);
      check =
          !stale.empty() ? "not verified: " + stale
          : v.ok
              ? "verified now: it holds the " + std::to_string(v.files_checked) +
                    " files its manifest lists, sizes and mtimes as staged (feedbench verify re-hashes them)"
              : "not verified: " + v.summary(root, 3);
    } catch (const std::runtime_error& e) {  // the source gone, a folder unreadable, more files
      check = std::string("not verified: ") + e.what();
    }
    notes.push_back("cache: read from " + root + ", a cache staged by feedbench stage from " + m.source_root +
                    " (label " + m.label + "); " + check);
  }
  // A cache the command names (its manifest at the named folder) while the job read its source.
  for (const std::string& f : named_folders) {
    std::error_code ec;
    std::string root = fs::weakly_canonical(fs::absolute(f), ec).string();
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (seen.count(root) || !fs::exists(fs::path(root) / kManifestJsonName, ec)) continue;
    std::optional<Manifest> m;
    try {
      m = read_manifest(root);
    } catch (const std::runtime_error&) {
    }
    if (!m) continue;
    const std::string source = fs::weakly_canonical(m->source_root).string();
    for (std::size_t i = 0; i < read_folders.size() && i < 5; ++i)
      if (read_folders[i] == source || read_folders[i].starts_with(source + "/")) {
        notes.push_back("cache: read from the source " + source + " though a cache of it is staged at " +
                        root + " (label " + m->label +
                        "): point the job at the cache to read the staged copy");
        break;
      }
  }
  return notes;
}

}  // namespace feedbench
