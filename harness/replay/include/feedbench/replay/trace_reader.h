// Reading a watched job's trace (`feedbench watch --trace`, docs/trace-format.md) back, event by
// event: the file is parsed as a stream and each event handed to a visitor and dropped, so a
// trace of millions of reads is read in memory bounded by one event. Every field the replay
// uses is checked; a malformed one is named by its JSON pointer.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace feedbench {

// One DataLoader pass's settings, as otherData.passes records them.
struct TracePass {
  std::int64_t pass = 0;
  std::int64_t batch_size = 0;  // 0: none (batch_size=None)
  std::int64_t num_workers = 0;
  std::optional<std::int64_t> prefetch_factor;  // none without workers
  bool persistent_workers = false;
};

struct TraceHeader {
  std::string format;
  std::int64_t version = 0;
  std::string name;  // the watched job's --name ("" in a trace written before it was recorded)
  std::vector<std::string> command;
  std::vector<TracePass> passes;
  // otherData.paths "relative" (version 2): every open's path is relative to the job's data
  // folder, which the trace does not name.
  bool relative_paths = false;
};

// cat "batch": the trainer's wait (ask to got) or step (got to the next ask) of one batch.
struct TraceBatch {
  bool step = false;  // false: the wait
  std::int64_t pass = 0, batch = 0;
  double ts_us = 0, dur_us = 0;
  double cpu_ms = -1;  // the trainer thread's CPU time in it (< 0: not in the trace)
};

// cat "fetch": a worker building one batch (pass and batch -1 where the trace has null).
struct TraceFetch {
  std::int64_t pid = 0, tid = 0, pass = -1, batch = -1, worker = 0, samples = 0;
  double ts_us = 0, dur_us = 0, cpu_ms = 0;
  double runqueue_ms = 0;  // runnable, waiting for a core (0 where the trace has none)
  // The worker process's CPU outside its fetches: from this fetch's start to its next's, less
  // the fetch's own (after); before its first fetch (startup, on that one). < 0: not in the trace.
  double after_cpu_ms = -1, startup_cpu_ms = -1;
};

// cat "open": a data file opened; (pid, file) names it for the reads.
struct TraceOpen {
  std::int64_t pid = 0;
  std::uint64_t file = 0, size = 0;
  std::string path;  // its bytes (decoded from version 2's %XX); absolute, or beneath the data folder
  double ts_us = 0;
  // A JPEG's dimensions as watch read them from its header (args width and height, both or
  // neither); 0 × 0 where the trace carries none (not a JPEG, or a trace written before them).
  int width = 0, height = 0;
};

// cat "read": one read call of (pid, file) (pass and batch -1 outside every fetch).
struct TraceRead {
  std::int64_t pid = 0, pass = -1, batch = -1;
  std::uint64_t file = 0, offset = 0, bytes = 0;
  double ts_us = 0, dur_us = 0;
};

// What a reader of the trace takes; any may be unset. Events of other kinds (process names,
// categories a later version adds) are passed over.
struct TraceVisitor {
  std::function<void(const TraceHeader&)> header;  // before the first event
  std::function<void(const TraceBatch&)> batch;
  std::function<void(const TraceFetch&)> fetch;
  std::function<void(const TraceOpen&)> open;
  std::function<void(const TraceRead&)> read;
};

// Reads the trace in `in`, named `where` in messages, calling `visit` for its header and each
// event in file order. Throws InputError "<where>: <pointer>: expected ..., got ..." for a
// field the replay needs that is missing or malformed; "<where>: not a feedbench-watch-trace
// (format ...)" for another format; "<where>: version N is newer than this feedbench reads
// (2)"; "<where>: not JSON, so not a trace" for bytes that do not start as JSON does; a path that
// does not decode, or is not absolute (in a relative trace: not beneath its data folder);
// "<where>: cut short at byte N" for a file that ends early; for any other malformed JSON, its
// byte. Every number is bounded by what the replay keeps (a pass or batch number from 0 to
// 2^31 - 1, a read up to 4 GiB - 1, offsets and sizes up to 2^62): one beyond is refused by its
// JSON pointer. REQUIRES: otherData comes before traceEvents (as watch writes it).
void read_trace(std::istream& in, const std::string& where, const TraceVisitor& visit);

// As read_trace on the file at `path`. Throws InputError when it cannot be opened.
void read_trace_file(const std::string& path, const TraceVisitor& visit);

}  // namespace feedbench
