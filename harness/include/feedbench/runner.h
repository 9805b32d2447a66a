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
  // What the reads asked for within each file's size at the scan (a read past a file's end is
  // planned short); a round that read less is not a measurement of the selection.
  std::uint64_t bytes_planned = 0;
  std::uint64_t short_reads = 0;     // reads that returned less than planned (a file shrank)
  std::uint64_t files_vanished = 0;  // opens that found the file gone (ENOENT) since the scan
  std::string incomplete;            // the first shortfall, naming the file; "" when none
  std::uint64_t noatime_opens = 0;   // of `files`, opened with O_NOATIME
  std::int64_t elapsed_ns = 0;
  double cpu_seconds = 0;  // user+system CPU of the workers, start signal to last completion
  double cpu_util = 0;     // cpu_seconds / (elapsed × online cores), 0..1
  Histogram latency;       // per read, ns, merged across workers
  std::string error;       // first error; non-empty means the round failed

  double seconds() const { return double(elapsed_ns) * 1e-9; }
  // RETURNS: true when every planned byte was read (a file that grew may give more).
  bool complete() const { return short_reads == 0 && files_vanished == 0 && bytes >= bytes_planned; }
};

// RETURNS: the round's figures. An engine the system refuses, or a failed read, ends the
// round with `error` set (the case is then skipped with that reason); never throws RunError.
// Files that shrank or vanished since the scan do not end it: their reads come back short
// (or are not made), and the round is not complete().
// Throws InputError for options an engine cannot take.
RoundStats run_round(const FileSet& files, Workload& workload, const RoundOptions& options);

}  // namespace feedbench
