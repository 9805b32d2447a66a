// A watched job's trace (`feedbench watch --trace FILE`): what a faithful replay needs, in
// Chrome's trace-event format (JSON object form), so that it also opens in Perfetto and
// chrome://tracing. Documented in docs/trace-format.md; format "feedbench-watch-trace", version 1.
//
// Events (times in µs since the job started, as trace-event "ts"/"dur"):
//   cat "batch": the trainer's "wait" (ask to got) and "step" (got to the next ask) per batch,
//                args {pass, batch}
//   cat "fetch": a worker building a batch, args {pass, batch, worker, samples, cpu_ms}
//   cat "open":  a file opened to read (an instant), args {file, path, size}
//   cat "read":  one read call, args {file, offset, bytes, pass, batch} (pass and batch null when
//                the read was no batch's fetch); (pid, file) names the open it read
// and "otherData" holds the format, version, the job's name, command, the origin's CLOCK_MONOTONIC time and
// the passes' loader settings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedbench/watch/job_log.h"

namespace feedbench {

inline constexpr const char* kJobTraceFormat = "feedbench-watch-trace";
inline constexpr int kJobTraceVersion = 1;

struct JobTraceCounts {
  std::uint64_t events = 0, reads = 0, reads_in_batches = 0, opens = 0;
};

// Writes the trace of `log` and the read recorder's files under `records_dir` (read_log.h) to
// `path` through a temporary name, streaming the reads (memory bounded by the log, not the
// reads). `origin_ns`: the job's start; `name`: the job's (watch --name), which a replay's
// entry carries. RETURNS: what it wrote. Throws RunError when it cannot write, InputError for a
// malformed record.
JobTraceCounts write_job_trace(const std::string& path, const JobLog& log, const std::string& records_dir,
                               std::int64_t origin_ns, const std::vector<std::string>& command,
                               const std::string& name = "job");

}  // namespace feedbench
