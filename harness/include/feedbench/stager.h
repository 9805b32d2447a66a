// Staging: copy a selection of the source to a local cache, proving every file by SHA-256
// read back from the device, and recording it in a manifest written last. And the checks on
// such a cache: `verify` (re-hash everything) and check_cache (cheap: manifest vs source).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/dataset.h"

namespace feedbench {

// Per-run journal of verified files (sha256sum lines), kept in the cache root while a stage
// is under way so an interrupted stage resumes without re-copying. Skipped by scan_dataset.
inline constexpr const char* kStageJournalName = "feedbench-journal.fbtmp";

struct StageOptions {
  std::string source_root;
  std::string cache_root;             // created when missing
  std::vector<std::string> include;   // globs; empty = every file
  int workers = 0;                    // 0: default_workers(cache)
  std::string label;                  // empty: "fp-" + first 12 hex of the source fingerprint
  bool verify = true;                 // read each copy back from the device and compare
  bool write_manifest = true;         // false only for the benchmark's scratch stagings
  bool progress = false;              // a progress line on stderr (a terminal)
  bool quiet = false;                 // no warnings/notes on stderr (benchmarks)
  const std::atomic<int>* stop = nullptr;  // non-zero (a signal number): stop cleanly
};

struct StageResult {
  std::size_t files_selected = 0;
  std::size_t files_copied = 0;
  std::size_t files_skipped = 0;   // already in place (resume)
  std::size_t files_removed = 0;   // in the cache but no longer in the selection
  std::uint64_t bytes_selected = 0;
  std::uint64_t bytes_copied = 0;
  double seconds = 0;        // wall time of the whole stage
  double cpu_seconds = 0;    // this process's user + system time during it
  std::vector<std::string> removed;   // relative paths removed from the cache
  std::vector<std::string> warnings;  // e.g. same device
  std::vector<std::string> errors;    // per file, or the one fatal reason (disk full)
  int stopped_by_signal = 0;          // the signal that interrupted it, else 0
  bool manifest_written = false;
  std::string label;
  std::string source_fingerprint;

  // RETURNS: 0 done, 1 failed (errors), 128+signal when interrupted.
  int exit_code() const;
};

// Stages options.source_root (the include selection) into options.cache_root.
// Throws InputError (exit 2, nothing changed) when: the source is missing, the cache is inside
// the source or the source inside the cache, a symlink in the selection leads out of the source
// root, or the cache folder is non-empty but not a feedbench cache. Everything else (no space
// before or during the copy, I/O errors, hash mismatches, interruption) is in the result.
// NOTE: test hook: FEEDBENCH_STAGE_TEST_DELAY_MS sleeps that long after each file, so tests can
// interrupt a stage half way.
StageResult stage(const StageOptions& options);

struct VerifyOptions {
  std::string cache_root;
  std::string source_root;  // empty: do not check the source
  int workers = 0;          // 0: by device, as for stage
  bool progress = false;
  const std::atomic<int>* stop = nullptr;
};

struct VerifyResult {
  std::size_t files_checked = 0;
  std::uint64_t bytes_checked = 0;
  std::vector<std::string> missing;   // in the manifest, not in the cache
  std::vector<std::string> changed;   // content differs from the manifest's hash
  std::vector<std::string> extra;     // in the cache, not in the manifest
  std::vector<std::string> errors;    // unreadable files and the like
  std::vector<std::string> source_differences;  // "added: x", "removed: y", "changed: z"
  bool source_checked = false;
  bool source_matches = true;
  double seconds = 0;
  int stopped_by_signal = 0;
  bool ok() const;
};

// Re-hashes every file of the cache's manifest from the device (O_DIRECT, or evicted first).
// Throws InputError when the cache has no complete manifest ("... run feedbench stage") or the
// source is missing.
VerifyResult verify_cache(const VerifyOptions& options);

// For `feedbench run`: is this a cache of exactly this selection?
// RETURNS: "" when `cache_root` has a complete manifest whose source fingerprint equals
// source_selection.fingerprint(); else the reason, ending with what to run.
std::string check_cache(const std::string& cache_root, const FileSet& source_selection);

// RETURNS: feedbench-manifest.json of a complete manifest, or nullopt.
std::optional<nlohmann::json> read_manifest_json(const std::string& cache_root);

// RETURNS: the default worker count for copies onto/reads from `path`: 1 on a spinning disk,
// else 4 (virtual disks that call themselves rotational count as solid state).
int default_workers(const std::string& path);

}  // namespace feedbench
