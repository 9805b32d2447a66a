// Staging: copy a selection of the source to a local cache, proving every file by SHA-256
// read back from the device, and recording it in a manifest written last. And the checks on
// such a cache: `verify` (re-hash everything) and check_cache (cheap: manifest vs source).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/cache/manifest.h"
#include "feedbench/dataset/dataset.h"

namespace feedbench {

class Throttle;

// Per-run journal of verified files (sha256sum lines), kept in the cache root while a stage
// is under way so an interrupted stage resumes without re-copying. It also proves which files
// that stage wrote (the manifest is gone by then). Skipped by scan_dataset.
inline constexpr const char* kStageJournalName = "feedbench-journal.fbtmp";

// A stage that would remove more than this share of the files a cache holds needs --prune.
inline constexpr double kPruneShare = 0.10;

struct StageOptions {
  std::string source_root;
  std::string cache_root;             // created when missing
  std::vector<std::string> include;   // globs; empty = every file
  std::optional<HotSetSpec> hot_set;  // --hot-set: how `include`'s exact paths were chosen
  int workers = 0;                    // 0: default_workers(cache)
  std::string label;                  // empty: "fp-" + first 12 hex of the source fingerprint
  bool verify = true;                 // read each copy back from the device and compare
  bool write_manifest = true;         // false only for the benchmark's scratch stagings
  bool progress = false;              // a progress line on stderr (a terminal)
  bool quiet = false;                 // no warnings/notes on stderr (benchmarks)
  bool force = false;                 // stage into a non-empty folder that is not a cache (beside its files)
  bool prune = false;                 // allow removing more than kPruneShare of the cache's files
  const std::atomic<int>* stop = nullptr;  // non-zero (a signal number): stop cleanly
  // Paces the copies' reads of the source (the benchmark's simulated slower source); the
  // read-back check of each copy is not paced. Null: the source's own pace.
  std::shared_ptr<Throttle> source_throttle;
};

struct StageResult {
  std::size_t files_selected = 0;
  std::size_t files_copied = 0;
  std::size_t files_skipped = 0;  // already in place (resume)
  std::size_t files_removed = 0;  // in the cache but no longer in the selection
  std::uint64_t bytes_selected = 0;
  std::uint64_t bytes_copied = 0;
  double seconds = 0;                 // wall time of the whole stage
  double cpu_seconds = 0;             // this process's user + system time during it
  std::vector<std::string> removed;   // relative paths removed from the cache
  std::vector<std::string> warnings;  // e.g. same device
  std::vector<std::string> notes;     // what was left out of the selection or left alone
  std::vector<std::string> errors;    // per file, or the one fatal reason (disk full)
  int stopped_by_signal = 0;          // the signal that interrupted it, else 0
  bool manifest_written = false;
  std::string label;
  std::string source_fingerprint;

  // RETURNS: 0 done, 1 failed (errors), 128+signal when interrupted.
  int exit_code() const;
};

// Stages options.source_root (the include selection) into options.cache_root.
// Ownership: the cache's files that feedbench wrote are those its complete JSON manifest lists,
// or the journal of an interrupted stage; no other file is ever removed or overwritten (a file
// in the way with the very bytes of the source is adopted).
// Throws InputError (exit 2, nothing changed) when: the source is missing; the cache is the
// source, inside it or around it (compared by device and inode, so symlinks and bind mounts are
// seen through); the selection is empty (naming the globs); a symlink in the selection leads
// out of the source root; the cache folder is non-empty but not a feedbench cache (unless
// options.force), or holds a MANIFEST.sha256 / feedbench-manifest.json feedbench did not write;
// a file feedbench did not write, a symlink or a non-folder is where the selection needs to
// write; or more than kPruneShare of the cache's files would be removed (unless options.prune).
// Everything else (no space before or during the copy, I/O errors, hash mismatches,
// interruption) is in the result.
// NOTE: test hook: FEEDBENCH_STAGE_TEST_DELAY_MS sleeps that long after each file, so tests can
// interrupt a stage half way.
StageResult stage(const StageOptions& options);

struct VerifyOptions {
  std::string cache_root;
  std::string source_root;  // empty: do not check the source
  int workers = 0;          // 0: by device, as for stage
  bool progress = false;
  const std::atomic<int>* stop = nullptr;
  // With source_root: every source file the manifest lists re-hashed from the device and
  // compared with the SHA-256 it was staged with (verify --fingerprint full).
  bool source_every_byte = false;
};

struct VerifyResult {
  std::size_t files_checked = 0;
  std::uint64_t bytes_checked = 0;
  std::vector<std::string> missing;             // in the manifest, not in the cache
  std::vector<std::string> changed;             // content differs from the manifest's hash
  std::vector<std::string> extra;               // in the cache, not in the manifest
  std::vector<std::string> errors;              // unreadable files and the like
  std::vector<std::string> source_differences;  // "added: x", "removed: y", "changed: z"
  bool source_checked = false;
  bool source_matches = true;
  std::size_t source_files_hashed = 0;  // source_every_byte: the source files re-hashed
  std::uint64_t source_bytes_hashed = 0;
  double seconds = 0;
  int stopped_by_signal = 0;
  bool ok() const;
};

// Re-hashes every file of the cache's manifest from the device (O_DIRECT, or evicted first);
// with a source root, compares the source's listing with the manifest's fingerprint and, with
// source_every_byte, re-hashes every source file it lists too.
// Throws InputError when the cache has no complete manifest ("... run feedbench stage") or the
// source is missing.
VerifyResult verify_cache(const VerifyOptions& options);

// For `feedbench run`: is this a cache of exactly this selection?
// RETURNS: "" when `cache_root` has a complete manifest whose source fingerprint equals
// source_selection.fingerprint(); else the reason, ending with what to run.
std::string check_cache(const std::string& cache_root, const FileSet& source_selection);
// The same over a manifest already read (`manifest` nullopt: `why_no_manifest` says why), so a
// caller that also needs the manifest reads MANIFEST.sha256 once.
// `run_include` (when given): the globs the run selects; a manifest staged with other globs is
// named as such, with the stage command that caches the run's selection (keeping the label).
// Every command in a reason, run as printed, makes the check pass.
std::string check_cache(const std::string& cache_root, const FileSet& source_selection,
                        const std::optional<Manifest>& manifest, const std::string& why_no_manifest,
                        const std::vector<std::string>* run_include = nullptr);

// RETURNS: `feedbench stage --from SRC --to CACHE [--include G]... [--label L] [--prune]`, each
// word quoted for a POSIX shell where needed; the label is left out when it is the default
// ("fp-<fingerprint>", which would name the old data).
std::string stage_command(const std::string& source_root, const std::string& cache_root,
                          const std::vector<std::string>& include, const std::string& label,
                          bool prune = false);
// RETURNS: the command that stages `m`'s selection again: its globs, or for a hot set the spec
// that made it ("--include 'train/**' --hot-set 10% --seed 42"), never its list of paths.
std::string restage_command(const std::string& source_root, const std::string& cache_root, const Manifest& m,
                            bool prune = false);

// RETURNS: feedbench-manifest.json of a complete manifest, or nullopt.
std::optional<nlohmann::json> read_manifest_json(const std::string& cache_root);

// RETURNS: the temporary name a staged file is written under before it is renamed to `path`:
// "<folder>/.fb-<16 hex of SHA-256 of the file name>.fbtmp", 26 bytes whatever the name's
// length, so a 255-byte name stages.
std::string stage_temporary_path(const std::string& path);

// RETURNS: the default worker count for copies onto/reads from `path`: 1 on a spinning disk,
// else 4 (virtual disks that call themselves rotational count as solid state).
int default_workers(const std::string& path);

}  // namespace feedbench
