// What every family does around its measurement, in one place: the CaseRecord it leaves in the
// RunLog, skipping with a reason, the selection a case reads, the page-cache state it starts
// from (and whether that state was achieved), and its counters.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "feedbench/gpu/gpu.h"
#include "feedbench/io/read_tally.h"
#include "feedbench/io/throttle.h"
#include "feedbench/plan/plan.h"
#include "run_context.h"

namespace feedbench {

struct ShareOfRound;

// The thresholds of issue 2: a cold round starts with at most 1% resident, a warm one with at
// least 99%. Anything else is recorded as not achieved, never reported as cold or warm.
inline constexpr double kColdMaxResident = 0.01;
inline constexpr double kWarmMinResident = 0.99;

class CaseRun {
 public:
  CaseRun(const Case& c, RunContext& context, benchmark::State& state);

  CaseRecord& record() { return record_; }

  // Skips the case with `why` (recorded in the result) and logs its record. Call once, then return.
  void skip(const std::string& why);

  // Every rank of the run says whether it can go on (`why`: "" when it can). RETURNS: true when
  // all can; else false after skipping the case, on every rank, with the first failing rank's
  // reason. One rank alone: skips with `why` when it is not "".
  bool agree(const std::string& why);

  // The opening every family that reads a selection shares. Each reason to stop before the
  // round is noted here, the first one kept, and every rank agrees on them (agree()), so that
  // none waits for one that left.

  // Notes `why` as the reason to stop, unless one is noted already ("" notes nothing).
  void note_stop(const std::string& why);
  // RETURNS: whether a reason to stop is noted.
  bool stopping() const { return !why_.empty(); }
  // Notes "no CUDA device: ..." when this process can use none (the case is skipped, the run
  // goes on).
  void need_cuda_device();
  // The files a case on `path_role` reads: its selection, or with a partial cache the tiered
  // set partial_cache_files makes (owned here, so get() stays valid while this lives).
  struct FilesToRead {
    const FileSet* selected = nullptr;
    std::optional<FileSet> tiered;
    // RETURNS: the files to read; nullptr when there are none (the reason is noted).
    const FileSet* get() const { return tiered ? &*tiered : selected; }
  };
  // RETURNS: find_selection then partial_cache_files for `path_role`, noting why there are no
  // files (or why a partial cache cannot be read across ranks).
  FilesToRead files_to_read(const std::string& path_role);
  // Across ranks, unless stopping: checks that the ranks can split `selection` in round `round`
  // (share_round), noting why not, and fills `share`. One process: nothing.
  // REQUIRES: `selection` is not null unless stopping.
  void share_among_ranks(const FileSet* selection, std::uint64_t round, ShareOfRound& share);
  // RETURNS: agree() on the noted reason: true when every rank can go on, else false after
  // skipping the case.
  bool agree() { return agree(why_); }

  // The run's ranks; many() when there are several.
  Cluster& cluster() { return context_.ranks(); }
  bool many() { return cluster().size() > 1; }
  // RETURNS: dataset.share, how ranks split a selection ("per_rank" without a config).
  std::string share_mode() const;
  // RETURNS: how many repetitions of this case ran before this one (each repetition's round
  // is its own epoch of a shuffle).
  std::uint64_t repetition() const;

  // Untimed preparation of `cache_state`: across ranks once per host over `host_files`
  // (prepare_cache_state_per_host), in one process over `files` (prepare_cache_state).
  // RETURNS: as they do (nullopt after skipping the case).
  std::optional<double> prepare(const std::string& cache_state, const FileSet& files,
                                const FileSet& host_files);

  // A case that reads no file (samples served from memory): `cache_state` is moot, so nothing
  // is evicted or warmed (a warm pass over a data set of a million files took 25 s, one over a
  // real data set minutes, for nothing). Records the cache as requested, achieved, method
  // "none" and `why`, with no residency.
  void record_moot_cache_state(const std::string& cache_state, const std::string& why);

  // RETURNS: the selection of `path_role`, or nullptr with the reason in `why` (no skip).
  const FileSet* find_selection(const std::string& path_role, std::string* why) const;

  // A partial cache (dataset.partial_cache, a hot set) on path cache: RETURNS the source's
  // selection with each file at its cache path where the cache holds it, else at its source path
  // (tiered_files; index for index the source's, so rank and count it by context.source); nullopt
  // on any other path, or when `selected` is null. Across ranks sets `why`: a partial cache is
  // read by one process only.
  std::optional<FileSet> partial_cache_files(const std::string& path_role, const FileSet* selected,
                                             std::string* why) const;

  // Records in `extra` the hit share of a skewed round when the run has a cache: "hit_share"
  // and "hit_share_bytes", the fractions of reads (and bytes) on files the cache holds, and
  // "served_by". `reads[i]` is how often file i of `files` was read; `files` is the source's
  // selection when `tiered` (the cache served those hits), else the round's own files (on
  // the source path, what a cache would serve).
  void record_hit_share(const FileSet& files, const std::vector<std::uint64_t>& reads, bool tiered,
                        const std::string& path_role);

  // Across ranks: the lowest rank of each host prepares `host_files` (this host's part of the
  // round) as prepare_cache_state does, every host's residency is gathered and the cache
  // state records each host's; achieved only when every host's was. The worst host's residency
  // is the case's. RETURNS: as prepare_cache_state (nullopt after skipping on every rank).
  std::optional<double> prepare_cache_state_per_host(const std::string& cache_state,
                                                     const FileSet& host_files);

  // RETURNS: the selection of `path_role` ("source" or "cache"), or nullptr after skipping
  // with the reason (no such root, an empty selection, a cache refused as unverified).
  const FileSet* selection(const std::string& path_role);

  // RETURNS: a fresh throttle for this round's reads through `path_role` (dataset.throttle),
  // shared by all its workers; nullptr when that path is not throttled.
  std::shared_ptr<Throttle> throttle(const std::string& path_role) const;

  // Untimed preparation: "cold" evicts, "warm" reads everything once, anything else only
  // measures. Records {"requested", "residency_before", "achieved", "method"} as the cache state.
  // RETURNS: the residency fraction as the round starts, or nullopt after skipping the case
  // because preparation could not read the data (a file vanished or stopped being regular).
  std::optional<double> prepare_cache_state(const std::string& cache_state, const FileSet& files);
  bool cache_state_achieved() const;

  // Records the round's read tally in the record's `extra`: whether it read everything it
  // planned, "round_complete", "bytes_planned", "bytes_read", and on a shortfall "incomplete"
  // (the first one, naming the file); and whether its opens left access times alone, "noatime":
  // true (every open used O_NOATIME), false (none could), "partial", null when nothing was
  // opened, left out for reads of no file. A round that read less (files shrank or vanished) is
  // not a figure: finish() labels it, and the fold excludes it like a cold round that was not cold.
  void record_reads(const ReadTally& read);
  bool round_complete() const;

  // A plain counter (Google Benchmark's rate flags divide by CPU time; feedbench's rates are
  // its own, over the measured time). `binary`: shown with 1024-based suffixes.
  void counter(const char* name, double value, bool binary = false);
  // Sets the host-to-device copy counters (h2d_bytes_per_second, copy_p50_us, copy_p99_us) from
  // a GPU sink's or device step's copies: the copy engine's own rate and its latency.
  void copy_counters(const SinkStats& copies);

  // Sets `label` (Google Benchmark's per-run label), notes a cache state not achieved and an
  // incomplete round after it, and logs the record.
  void finish(const std::string& label = "");

 private:
  const Case& case_;
  RunContext& context_;
  benchmark::State& state_;
  CaseRecord record_;
  std::string why_;  // the first reason to stop before the round; "" while there is none
};

}  // namespace feedbench
