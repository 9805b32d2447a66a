// A watched job's trace (`feedbench watch --trace FILE`): what a faithful replay needs, in
// Chrome's trace-event format (JSON object form), so that it also opens in Perfetto and
// chrome://tracing. Documented in docs/trace-format.md; format "feedbench-watch-trace", version 2
// (version 1 wrote paths as JSON strings, a byte that was no UTF-8 replaced: lossy).
//
// Events (times in µs since the job started, as trace-event "ts"/"dur"):
//   cat "batch": the trainer's "wait" (ask to got) and "step" (got to the next ask) per batch,
//                args {pass, batch}
//   cat "fetch": a worker building a batch, args {pass, batch, worker, samples, cpu_ms}
//   cat "open":  a file opened to read (an instant), args {file, path, size}, and {width, height}
//                where the file is a JPEG (its header, read after the job exited); path in
//                encode_trace_path's form, absolute or (otherData.paths "relative") under the
//                job's data folder
//   cat "read":  one read call, args {file, offset, bytes, pass, batch} (pass and batch null when
//                the read was no batch's fetch); (pid, file) names the open it read
// and "otherData" holds the format, version, the job's name, command, the origin's CLOCK_MONOTONIC time and
// the passes' loader settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/watch/job_log.h"

namespace feedbench {

inline constexpr const char* kJobTraceFormat = "feedbench-watch-trace";
inline constexpr int kJobTraceVersion = 2;

// RETURNS: `path` (any bytes but NUL) as the trace writes it: valid UTF-8 as it is, and each
// byte that is not part of a valid UTF-8 sequence, each control character and '%' itself as
// %XX (two upper-case hexadecimal digits), so that every name the kernel takes travels in a JSON
// string and comes back byte for byte ("lat\xe9" is "lat%E9", "100%" is "100%25").
std::string encode_trace_path(std::string_view path);

// RETURNS: the bytes `text` encodes (encode_trace_path's inverse), nullopt when a '%' is not
// followed by two hexadecimal digits or encodes a NUL byte.
std::optional<std::string> decode_trace_path(std::string_view text);

struct JobTraceCounts {
  std::uint64_t events = 0, reads = 0, reads_in_batches = 0, opens = 0;
  std::uint64_t jpeg_dimensions = 0;  // opens carrying a JPEG's width and height
  std::string data_root;              // with relative paths: the folder they are relative to
};

struct JobTraceOptions {
  // Paths relative to the job's data folder (the deepest holding every file a batch read),
  // written as otherData.paths "relative": the trace names no folder of this machine. Files
  // outside it (read outside every batch) are left out with their reads; in the command, the
  // data folder reads "." and any other absolute path its last name.
  bool relative_paths = false;
  std::vector<std::string> redact;  // watch --redact: withheld in the command (withhold_in_command)
};
// Writes the trace of `log` and the read recorder's files under `records_dir` (read_log.h) to
// `path` through a temporary name, each JPEG's open with the dimensions its header declares once
// the job is gone (read_jpeg_dimensions; no dimensions for a file gone or not a JPEG), streaming the reads
// (memory bounded by the log, not the reads). `origin_ns`: the job's start; `name`: the job's (watch --name),
// which a replay's entry carries. The command's credentials are withheld (withhold_in_command, with this
// process's environment). RETURNS: what it wrote. Throws RunError when it cannot write,
// InputError for a malformed record or, with relative paths, a job whose batches read no file
// or files of no common folder below '/' (nothing written).
JobTraceCounts write_job_trace(const std::string& path, const JobLog& log, const std::string& records_dir,
                               std::int64_t origin_ns, const std::vector<std::string>& command,
                               const std::string& name = "job", const JobTraceOptions& options = {});

}  // namespace feedbench
