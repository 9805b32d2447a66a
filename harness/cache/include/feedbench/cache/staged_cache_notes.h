// What the folders a job read say of caches staged by `feedbench stage`: a data folder inside a
// staged cache, checked now as `run` checks a cache before measuring it (listing, sizes, mtimes),
// and a staged cache the job's command names whose source the job read instead. `feedbench
// watch` prints these notes under its verdict. Every scan is bounded by the manifest's file
// count: a selection with more files than the manifest lists is stale, and is not listed whole.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/cache/manifest.h"

namespace feedbench {

// RETURNS: whether `m` lists a file directly in the folder `rel` (relative to its cache root,
// "" the root itself): a manifest above a data folder is that data's only when it lists what is
// there.
bool manifest_lists_folder(const Manifest& m, const std::string& rel);

// A staged cache found for a data folder: its root and manifest, or why the manifest at the
// folder itself cannot be read.
struct StagedCache {
  std::string root;
  std::optional<Manifest> manifest;  // none: `why` says why it cannot be read
  std::string why;
};

// RETURNS: the cache staged by feedbench stage that holds the data folder `folder`: the nearest
// folder at or above it whose manifest lists a file in `folder`; a manifest at `folder` itself
// that cannot be read, with why; else none. A manifest above the data that does not list it
// (planted, or another cache's) is never taken for it, nor its source scanned.
std::optional<StagedCache> staged_cache_of(const std::filesystem::path& folder);

// REQUIRES: `read_folders` the data folders a job read, as the kernel resolved them, most bytes
// first (the first five are looked at); `named_folders` the folders its command line names.
// RETURNS: one line per finding, "cache: read from ROOT, a cache staged by feedbench stage from
// SOURCE (label L); verified now: ..." or "...; not verified: WHY" for each staged cache a read
// folder lies in (once per cache; "... whose manifest cannot be read (WHY): not verified" for a
// manifest at the folder that cannot be read), then "cache: read from the source S though a
// cache of it is staged at ROOT (label L): point the job at the cache ..." for each named folder
// holding a manifest whose source the job read; none when there is nothing to say.
std::vector<std::string> staged_cache_notes(const std::vector<std::string>& read_folders,
                                            const std::vector<std::string>& named_folders);

}  // namespace feedbench
