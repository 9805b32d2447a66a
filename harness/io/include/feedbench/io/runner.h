// Runs one measured round: `workers` harness threads, each with its own Engine, read what the
// Workload hands them. Threads and engines are set up before the clock starts; the round's
// time runs from the release of all workers to the last completion.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/base/histogram.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/engine.h"
#include "feedbench/io/read_tally.h"
#include "feedbench/io/workload.h"

namespace feedbench {

// A steady-state criterion, as fio's `ss`: over the last `window` of a time-based round, the
// throughput samples' slope (least squares, in percent of their mean per second) or spread
// (largest distance from their mean, in percent of it) is at most `limit_percent`. Samples
// are taken every window/10; the first full window starts after ramp_time.
struct SteadyStateSpec {
  enum class Metric { bw, iops };
  enum class Mode { slope, spread };
  Metric metric = Metric::bw;
  Mode mode = Mode::slope;
  double limit_percent = 2;
  std::int64_t window_ns = 5'000'000'000;
};

// RETURNS: the canonical text, "bw_slope:2%:5s" (metric_mode:limit%:window).
std::string format_steady_state(const SteadyStateSpec& spec);
// RETURNS: the spec of a canonical text. Throws InputError naming the text when malformed.
SteadyStateSpec parse_steady_state(const std::string& text);

// Judges steady state from throughput samples taken at a fixed interval: the runner feeds it
// one sample per interval; tests feed it directly.
class SteadyStateDetector {
 public:
  // REQUIRES: interval_ns > 0.
  SteadyStateDetector(const SteadyStateSpec& spec, std::int64_t interval_ns);
  // Adds one interval's rate (bytes or reads per second). RETURNS: true once the last
  // window's samples meet the criterion (and from then on).
  bool add(double rate);
  bool reached() const { return reached_; }
  std::size_t window_samples() const { return samples_.size(); }
  // The last full window's criterion value in percent (slope or spread), NaN before one.
  double last_value() const { return last_value_; }
  // The last full window's mean rate, 0 before one.
  double last_mean() const { return last_mean_; }

 private:
  SteadyStateSpec spec_;
  double interval_s_;
  std::size_t window_;           // samples per window
  std::vector<double> samples_;  // ring of the last window_ samples
  std::size_t next_ = 0, count_ = 0;
  bool reached_ = false;
  double last_value_;
  double last_mean_ = 0;
};

// Why a round ended before its workload ran out. The workload running out is "" here; the
// family tells max_bytes from the end of the selection by the workload's plan.
inline constexpr const char* kStoppedByRuntime = "runtime";
inline constexpr const char* kStoppedBySteadyState = "steady_state";

struct RoundOptions {
  std::string engine = "psync";
  EngineOptions engine_options;  // direct, queue_depth, block_size
  unsigned workers = 1;
  bool record_latency = true;     // per-read latency into the histogram (off: overhead check)
  unsigned max_open_files = 256;  // per worker, for patterns that revisit files (random)
  // Time-based rounds. The round stops at the current block: once runtime has passed (after
  // ramp), no worker submits another read; reads in flight complete and count. Figures cover
  // what completed from the end of ramp to the last completion; 0: no limit.
  std::int64_t runtime_ns = 0;
  std::int64_t ramp_ns = 0;  // read, then excluded from every figure (bytes, reads, latency, CPU)
  std::optional<SteadyStateSpec> steady_state;  // REQUIRES: runtime_ns > 0; ends the round once reached
  // Sink gpu: each worker's completed reads go on through a StagingRing over the copy engine
  // this makes (called once by each worker thread, concurrently, before the clock; nullptr with *why: the
  // round fails with why). The round's time then runs to the last copy's end. Unset: reads end in host
  // memory.
  std::function<std::unique_ptr<CopyEngine>(unsigned worker, std::string* why)> copy_engine;
};

// The steady-state outcome of a round with a criterion.
struct SteadyStateResult {
  bool reached = false;
  double reached_after_s = 0;  // from the end of ramp, when reached
  double value_percent = 0;    // the last full window's slope or spread; NaN without one
  double window_rate = 0;      // the last full window's mean rate (bytes or reads a second); 0 without one
  std::size_t samples = 0;     // samples taken after ramp
};

// A round's figures. Its read tally (bytes read and planned, shortfalls, opens) counts the
// bytes after ramp, and every open of the round, ramp included (`files` is not). Planned counts
// only reads submitted, so a round cut by runtime is complete() unless files shrank.
struct RoundStats : ReadTally {
  std::uint64_t reads = 0;             // completed read calls
  std::uint64_t files = 0;             // files opened
  std::uint64_t whole_file_reads = 0;  // of `files`, read whole by one open -> read -> close request
  std::int64_t elapsed_ns = 0;
  std::int64_t start_ns = 0;  // steady_clock time of the measured start (end: start_ns + elapsed_ns)
  double cpu_seconds = 0;     // user+system CPU of the workers, start signal to last completion
  double cpu_util = 0;        // cpu_seconds / (elapsed × online cores), 0..1
  Histogram latency;          // per read, ns, merged across workers
  std::string error;          // first error; non-empty means the round failed
  // Time-based rounds: kStoppedByRuntime or kStoppedBySteadyState when the round was cut, ""
  // when the workload ran out first. The figures above exclude the ramp.
  std::string stopped_by;
  std::uint64_t ramp_bytes = 0;
  std::int64_t ramp_elapsed_ns = 0;  // start to the end of ramp (0 without ramp)
  std::optional<SteadyStateResult> steady_state;
  // With a copy engine: what the rings moved after ramp, merged over workers (blocked_ns summed).
  std::optional<SinkStats> sink;

  double seconds() const { return double(elapsed_ns) * 1e-9; }
};

// RETURNS: the round's figures. An engine the system refuses, or a failed read, ends the
// round with `error` set (the case is then skipped with that reason); never throws RunError.
// Files that shrank or vanished since the scan do not end it: their reads come back short
// (or are not made), and the round is not complete(). A round whose workload ran out during
// ramp_time measured nothing: `error` says so.
// Throws InputError for options an engine cannot take.
RoundStats run_round(const FileSet& files, Workload& workload, const RoundOptions& options);

}  // namespace feedbench
