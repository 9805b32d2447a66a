// What `run` checks on a staged cache before it measures it, beyond check_cache's "the manifest
// describes this source selection": that the folder still holds what the manifest lists. The
// cheap check compares the listing, file count, sizes and mtimes (copies keep the source's
// mtime); the full one re-hashes every file from the device as `verify` does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/cache/manifest.h"
#include "feedbench/dataset/dataset.h"

namespace feedbench {

struct CacheVerification {
  std::string method;  // "listing+sizes+mtimes" or "sha256" (which includes the listing check)
  bool ok = false;
  std::vector<std::string> problems;  // "missing from the cache: a/b.bin", ...
  std::size_t files_checked = 0;      // files the manifest lists that were looked at (or hashed)
  std::uint64_t bytes_checked = 0;    // their bytes in the cache (listing) or bytes hashed

  // RETURNS: {"method", "ok", "problems", "files_checked", "bytes_checked"}.
  nlohmann::json to_json() const;
  // RETURNS: "the cache X does not hold what its manifest lists (3 problems: ...; ...)", at
  // most `shown` problems named; "" when ok.
  std::string summary(const std::string& cache_root = "", std::size_t shown = 5) const;
  // RETURNS: "3 problems, checked by METHOD: P1; P2; P3", at most `shown` named, then "; and N
  // more": what summary() puts in its parentheses.
  std::string problem_list(std::size_t shown = 5) const;
};

// The cheap check: every file the manifest lists is in `cache_selection` with the size and
// mtime of the same file in `source_selection`, nothing else is, and the file count and total
// bytes agree with the manifest.
// REQUIRES: cache_selection and source_selection scanned with the run's include globs, and
// check_cache(cache_root, source_selection) == "" (the source is as it was when staged).
// RETURNS: the verification; a missing manifest is a problem, not an exception.
CacheVerification check_cache_listing(const std::string& cache_root, const FileSet& cache_selection,
                                      const FileSet& source_selection);
// The same over the cache's manifest, already read.
CacheVerification check_cache_listing(const Manifest& manifest, const FileSet& cache_selection,
                                      const FileSet& source_selection);

// The listing check plus verify_cache's SHA-256 of every listed file, read from the device.
// `progress`: a progress line on stderr. REQUIRES: as check_cache_listing.
CacheVerification rehash_cache(const std::string& cache_root, const FileSet& cache_selection,
                               const FileSet& source_selection, bool progress);
// The same over the cache's manifest, already read (verify_cache still reads it for itself).
CacheVerification rehash_cache(const std::string& cache_root, const Manifest& manifest,
                               const FileSet& cache_selection, const FileSet& source_selection,
                               bool progress);

// The check at a run's end: the cache files the run verified before its first case, looked at
// again, cheaply (present, a regular file, the same size and mtime; not re-hashed), so a cache
// changed under the run (a stage --prune, a copy rewritten) is found, not taken as verified.
// `verified`: the cache selection as it was scanned and checked before the first case.
// RETURNS: method "listing+sizes+mtimes", files_checked every file looked at, bytes_checked the
// bytes of those still there; problems "removed during the run: P", "no longer a regular file:
// P", "size changed during the run: P (N bytes, M before)", "modified during the run: P (its
// mtime changed)", "cannot look at P: why"; ok when there are none.
CacheVerification recheck_cache_files(const FileSet& verified);

}  // namespace feedbench
