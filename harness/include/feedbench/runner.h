// Runs one measured round: `workers` harness threads, each with its own Engine, read what the
// Workload hands them. Threads and engines are set up before the clock starts; the round's
// time runs from the release of all workers to the last completion.
#pragma once

#include <cstdint>
#include <string>

#include "feedbench/dataset.h"
#include "feedbench/engine.h"
#include "feedbench/histogram.h"
#include "feedbench/workload.h"

namespace feedbench {

struct RoundOptions {
  std::string engine = "psync";
  EngineOptions engine_options;  // direct, queue_depth, block_size
  unsigned workers = 1;
  bool record_latency = true;  // per-read latency into the histogram (off: overhead check)
  unsigned max_open_files = 256;  // per worker, for patterns that revisit files (random)
};

struct RoundStats {
  std::uint64_t bytes = 0;  // bytes actually read
  std::uint64_t reads = 0;  // completed read calls
  std::uint64_t files = 0;  // files opened
  std::int64_t elapsed_ns = 0;
  double cpu_seconds = 0;  // user+system CPU of the workers, start signal to last completion
  double cpu_util = 0;     // cpu_seconds / (elapsed × online cores), 0..1
  Histogram latency;       // per read, ns, merged across workers
  std::string error;       // first error; non-empty means the round failed

  double seconds() const { return double(elapsed_ns) * 1e-9; }
};

// RETURNS: the round's figures. An engine the system refuses, or a failed read, ends the
// round with `error` set (the case is then skipped with that reason); never throws RunError.
// Throws InputError for options an engine cannot take.
RoundStats run_round(const FileSet& files, Workload& workload, const RoundOptions& options);

}  // namespace feedbench
