// Planning a stage, the first of its phases (plan, copy, verify and record): every refusal, and
// what the stage will copy, keep and remove, decided before the cache is changed. Private to the
// harness: stage() in feedbench/cache/stager.h runs the phases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/base/unique_fd.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/dataset/dataset.h"

namespace feedbench {

// What a stage will do, decided from the source, the options and what the cache holds.
struct StagePlan {
  std::string source;  // the source root, resolved
  std::string cache;   // the cache root, resolved (plan_stage creates it)
  FileSet selection;   // what the cache will hold, in the selection's order
  std::string source_fingerprint;
  std::string label;                     // options.label, else "fp-" + the first 12 hex of the fingerprint
  std::optional<Manifest> old_manifest;  // the cache's complete manifest, when it has one
  // Every file of the cache feedbench provably wrote (its manifest or the journal of an
  // interrupted stage lists it, or it holds the source's very bytes and is adopted):
  // relative path -> sha256.
  std::map<std::string, std::string> owned;
  std::vector<std::size_t> to_copy;  // selection indexes not in place (resume skips the rest)
  std::uint64_t bytes_to_copy = 0;
  std::vector<std::string> hashes;     // by selection index: a kept file's sha256; "" to copy
  std::vector<std::string> to_remove;  // files of ours no longer selected
  // Temporaries an interrupted stage left, only under names a stage of this cache writes.
  std::vector<std::string> stale_temporaries;
  std::vector<std::string> notes;     // what was left out of the selection or left alone
  std::vector<std::string> warnings;  // e.g. source and cache on the same device
  UniqueFd lock;                      // the cache's exclusive lock, held as long as the plan lives

  std::size_t files_kept() const { return selection.size() - to_copy.size(); }
  // RETURNS: whether the cache changes at all (a copy or a removal).
  bool changes() const { return !to_copy.empty() || !to_remove.empty(); }
};

// Plans staging options.source_root (the include selection) into options.cache_root: creates
// the cache folder and locks it, and changes nothing else.
// REQUIRES: the refusals of stage() (feedbench/cache/stager.h) are thrown from here, as InputError.
// RETURNS: the plan; a file is kept when the cache's manifest or journal knows its hash and its
// size and mtime still equal the source's.
StagePlan plan_stage(const StageOptions& options);

// The cache file system's room, as statvfs reports it (unknown: free is UINT64_MAX).
struct CacheSpace {
  std::uint64_t free = UINT64_MAX;  // bytes an unprivileged writer may still use
  std::uint64_t size = 0;           // the file system's size in bytes
  std::uint64_t block = 4096;       // its allocation unit
};

// RETURNS: the room on the file system that holds `path`.
CacheSpace cache_space(const std::string& path);

// RETURNS: "" when the plan's copies (in whole blocks) plus a margin (2% and up to 64 MiB, at
// most 5% of the file system) fit in `space.free`, or nothing is to be copied; else the error
// naming the bytes needed, the margin, the bytes free and the shortfall.
std::string space_refusal(const StagePlan& plan, const CacheSpace& space);

}  // namespace feedbench
