// A watched job's processes over time, whatever language it is written in: every interval, for
// each process of the job's tree (the command and its descendants, /proc/PID/task/TID/children,
// else a scan of /proc), its CPU time (/proc/PID/stat: utime + stime, every thread) and its bytes
// read (/proc/PID/io: rchar, every read() the page cache served included; read_bytes, what the
// kernel fetched from storage for it), and every block device's bytes read (/proc/diskstats), of
// which the job's data device is picked once the job has shown what it read. The counts kept are
// cumulative, so halving the samples when they reach the bound loses resolution, never a byte
// or a CPU second of a process that was seen.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace feedbench {

// One process's counts at one sample, since it started. Its read counts hold, besides its own,
// those of every child it has reaped (the kernel adds a reaped child's to its parent's: see
// rate_series).
struct ProcessCounts {
  std::uint64_t cpu_ticks = 0;  // utime + stime, in clock ticks (sysconf(_SC_CLK_TCK))
  std::uint64_t rchar = 0, read_bytes = 0;
  std::int64_t ppid = 0;  // its parent at the sample (/proc/PID/stat field 4)
};

struct ProcessSeries {
  std::int64_t pid = 0;
  std::vector<std::uint32_t> at;  // the samples (indices) it was seen in, rising
  std::vector<ProcessCounts> counts;
};

// A block device's bytes read since boot (sectors read x 512, /proc/diskstats).
struct DeviceCount {
  std::uint64_t dev = 0;  // makedev(major, minor), as st_dev holds it
  std::uint64_t bytes = 0;
};

// RETURNS: each device's count in a /proc/diskstats text (lines it cannot read are skipped).
std::vector<DeviceCount> parse_diskstats(const std::string& text);

struct ProcessSamples {
  std::int64_t interval_ns = 0;  // between samples, after any halving
  std::int64_t ticks_per_second = 100;
  std::vector<std::int64_t> t_ns;                 // each sample's time (CLOCK_MONOTONIC)
  std::vector<std::vector<DeviceCount>> devices;  // every block device's count at each sample
  std::vector<ProcessSeries> processes;
  // Why a part could not be read ("" when it was): /proc/PID/io refused (another user's
  // process, or no permission to trace it).
  std::string io_why;
};

// Rates over the intervals between samples for a group of the processes.
struct RateSeries {
  std::vector<double> t_s;          // each interval's end, in seconds since the origin given
  std::vector<double> cores;        // CPU seconds per second
  std::vector<double> read_bps;     // rchar per second: what the group's read() calls returned
  std::vector<double> storage_bps;  // read_bytes per second: what storage served it
  double cpu_s = 0, read_bytes = 0, storage_bytes = 0;  // over the whole series
};

// RETURNS: the group's rates: per interval, the sum over the processes `in_group` selects of
// what each counted since the sample it was last seen in (a process first seen counts from its
// start; what it did before the first sample is the first interval's). Seconds from `origin_ns`.
// Each process's reads count once: when a parent reaps a child, the kernel adds the child's read
// counts to the parent's (wait_task_zombie in kernel/exit.c adds them to signal->ioac, which
// /proc/PID/io reports), so the parent's next count less what the child's own series counted
// (its last count) is the parent's own, with the reads the child made after it was last seen.
// CPU time is each process's own (utime and stime, not cutime). (A parent in the group whose
// child is not: the group counts the child's reads after it was last seen.)
RateSeries rate_series(const ProcessSamples& s, const std::function<bool(std::int64_t pid)>& in_group,
                       std::int64_t origin_ns);

// RETURNS: device `dev`'s reads per interval (bytes per second; 0 where its count is missing),
// or empty when no sample has it.
std::vector<double> device_rate_series(const ProcessSamples& s, std::uint64_t dev);
// RETURNS: the bytes device `dev` read from the first sample holding it to the last, or nullopt.
std::optional<double> device_bytes_read(const ProcessSamples& s, std::uint64_t dev);

// RETURNS: `s` with every two intervals merged into one (sample 2k-1 and 2k become k, keeping
// each process's latest counts), the interval doubled. Used at the bound; public for tests.
ProcessSamples halve_samples(const ProcessSamples& s);

class ProcessSampler {
 public:
  // Samples the tree under `root` and the block devices every `interval_ns` from start() to
  // stop(). At `max_samples` the samples are halved.
  ProcessSampler(pid_t root, std::int64_t interval_ns, std::size_t max_samples = 4096);
  ~ProcessSampler();
  ProcessSampler(const ProcessSampler&) = delete;
  ProcessSampler& operator=(const ProcessSampler&) = delete;

  // Takes the first sample now and the rest on a thread of its own. RETURNS: "" when started,
  // else why not (the thread refused); then stop() returns the first sample alone.
  std::string start();
  // RETURNS: the samples, with a last one taken now. Call before the root is reaped, so its
  // last counts are still readable.
  ProcessSamples stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The counts of one process, read from a /proc/PID/stat line and /proc/PID/io text.
// RETURNS: nullopt when `stat` is not a stat line; rchar/read_bytes stay 0 when `io` is empty.
std::optional<ProcessCounts> parse_process_counts(const std::string& stat, const std::string& io);

}  // namespace feedbench
