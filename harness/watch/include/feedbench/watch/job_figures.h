// A watched job's data wait, in the method's words: per batch the wait (ask to got) and the step
// (got to the next ask of the same pass), AU = step / (step + wait) over every batch that has a
// step after it, the first batch of each pass apart (worker start-up), and the verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/base/histogram.h"
#include "feedbench/watch/job_log.h"

namespace feedbench {

struct JobPassFigures {
  std::int64_t id = 0;
  std::size_t epoch = 0;                 // its index in JobLog::epochs
  std::uint64_t batches = 0, steps = 0;  // steps: batches with a step after them
  double au = 0, stall_fraction = 0;
  double first_wait_ms = 0;  // the pass's first batch: its workers' start-up and first reads
  double wait_p50_ms = 0, wait_p99_ms = 0, wait_max_ms = 0;
  double wall_s = 0;   // first ask to the last got (or StopIteration)
  bool ended = false;  // false: abandoned before StopIteration
  // Where its bytes came from (job_result.h's attribute_passes): the data it first read, what
  // the data device read meanwhile; nullopt where either was not measured.
  std::optional<double> data_bytes, device_bytes;
};

struct JobFigures {
  std::vector<JobPassFigures> passes;
  std::uint64_t batches = 0, steps = 0, samples = 0;
  double wait_s = 0, step_s = 0;  // over batches with a step after them
  double au = 0, stall_fraction = 0;
  Histogram wait_ns;  // every batch's wait, first batches included
  double wait_p50_ms = 0, wait_p99_ms = 0, wait_max_ms = 0;
  double first_wait_ms_max = 0;  // the longest first-batch wait of any pass
  double first_wait_s = 0;       // the passes' first batches' waits, of those in wait_s
  double au_after_first = 0;     // AU without each pass's first batch (the workers started)
  // (wait + step) / step: how much faster the job's loop would run were data instant.
  double headroom = 1;
  // The workers' fetches: CPU time over wall time (0 to 1; nullopt without fetches), and wall.
  std::optional<double> fetch_cpu_share;
  double fetch_s = 0;
  double fetch_cpu_s = 0;
  double fetch_runqueue_s = 0;  // runnable, waiting for a core
  // (CPU + runqueue) / wall of the fetches: the share a worker wanted a core (nullopt without).
  std::optional<double> fetch_cpu_wanted_share;
  double loop_s = 0;  // the passes' wall time together (first ask to last got)
  // The workers' fetches over what they could have fetched (each pass's workers x its wall):
  // low, the batches were ready before the trainer asked (nullopt without workers).
  std::optional<double> worker_busy_share;
};

// RETURNS: the figures of `log`; passes with no batch are left out.
JobFigures job_figures(const JobLog& log);

// The batches in time, for a chart: every batch, or when there are more than the bound, runs of
// consecutive batches of one pass (batches_per_point of them) as one point.
struct JobTimeline {
  std::size_t batches_per_point = 1;
  std::vector<double> t_s;                     // the point's last got, seconds since the origin
  std::vector<double> wait_ms;                 // the mean wait of its batches
  std::vector<std::optional<double>> step_ms;  // the mean step of those with one (a pass's last has none)
  std::vector<std::int64_t> pass;              // the pass's id
};

// RETURNS: the timeline of `log`'s batches, times from `origin_ns` (CLOCK_MONOTONIC), at most
// about `max_points` points (each pass's batches grouped alike).
JobTimeline job_timeline(const JobLog& log, std::int64_t origin_ns, std::size_t max_points = 2000);

// What held the job back, or that nothing did.
struct JobVerdict {
  // "fed", "startup" (the workers' start-up, each pass's first batch, is most of the wait),
  // "handover" (the workers were mostly idle, batches ready: the wait is the trainer's own cost
  // of taking one), "cpu", "storage" (blocked while reading data), "blocked" (blocked off the
  // CPU with no read of data seen), or "" (nothing to judge: no batch with a step).
  std::string by;
  std::string text;  // the whole verdict, every figure behind it (the result's extra.verdict)
  // Its first line, short: the verdict and its deciding figure, "storage-bound: AU 45.0% (target
  // 90.0%), data wait 55.0% of the loop"; `text` is its details.
  std::string line;
};

// RETURNS: the verdict on `f` at `target_au`, given the host's CPU busy share over the job
// (cores.h; nullopt when unknown) and the `cores` it may use: fed at or above the target; else
// start-up when the passes' first batches hold at least half the wait; else the hand-over when
// the workers were busy less than half the time they had (the batches were ready); else CPU when the usable
// workers' fetches kept the cores busy or mostly wanted a core (on CPU or waiting for one); else
// storage when the workers were mostly blocked in their fetches while the job read `data_bytes`
// of data; else "blocked" (blocked off the CPU with no read of data seen, or `data_bytes` nullopt:
// the reads were not recorded), never storage without reads.
JobVerdict job_verdict(const JobFigures& f, double target_au, std::optional<double> host_cpu_busy,
                       unsigned cores, std::optional<std::uint64_t> data_bytes);

}  // namespace feedbench
