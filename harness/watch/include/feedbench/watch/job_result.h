// A watched job as a result entry `job/NAME`: the loader family's counters (au, stall_fraction,
// wait percentiles) and wait histogram, so `diff` compares two watched runs as it compares loader
// cases, and in `extra` what `report` draws: the passes, the batches in time, the processes' CPU
// and reads over time, the GPUs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/results/environment.h"
#include "feedbench/results/result.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_log.h"
#include "feedbench/watch/process_sampler.h"
#include "feedbench/watch/read_log.h"

namespace feedbench {

// How the watched command ran.
struct JobRun {
  std::vector<std::string> command;
  int exit_code = 0;  // as a shell reports it: the status, or 128 + the signal
  int signal = 0;
  std::int64_t start_ns = 0;  // CLOCK_MONOTONIC at the start: the origin of every series
  double wall_s = 0;
  double tree_cpu_s = 0;  // the job and every descendant it waited for
  std::optional<double> host_cpu_busy;
  LoadSample load_before, load_after;  // the host's, at the job's start and end
};

// What the job's processes did over time, the DataLoader workers (the processes the probe
// recorded fetches in) apart from the rest (the trainer, and any other process of the job).
struct JobProcesses {
  double interval_s = 0;
  RateSeries trainer, workers;
  std::vector<double> device_bps;      // the data device's reads per interval; empty: not counted
  std::optional<double> device_bytes;  // its reads over the whole job (every reader of it)
  std::string device;                  // "7:0 (loop0)", or why it was not counted
  std::string io_why;                  // why some processes' reads are not in the figures ("")
  double span_s = 0;                   // first sample to last
};

// RETURNS: `s` split by `log`'s workers; `dev` the data device (st_dev) whose reads are counted,
// none when not known; `device` names it ("7:0 (loop0)"), or why there is none.
JobProcesses job_processes(const ProcessSamples& s, const JobLog& log, std::int64_t origin_ns,
                           std::optional<std::uint64_t> dev, const std::string& device);

// RETURNS: the cores programs other than the job's process tree took during the job, on average
// (environment.h's other_programs_cores): the tree's CPU the more of what its reaped processes
// counted (run.tree_cpu_s: not a process left to init) and what the sampler saw of each
// (`processes`: not CPU spent after a process's last sample); nullopt where /proc/stat was not read.
std::optional<double> other_programs_cores(const JobRun& run, const JobProcesses& processes);

// What the job read (read_log.h), each data folder's file system and device named.
struct JobReads {
  std::string why_not;  // "" when recorded, else why not
  ReadSummary summary;
  std::vector<std::string> where;       // per summary.folders[i]: "ext4 on 7:0 (loop0)"
  DataRoots roots;                      // data_roots(summary)
  std::vector<std::string> root_where;  // per roots.roots[i], as `where`
  std::vector<std::string> notes;       // what else the reads say: a staged cache read, or passed by
};

// RETURNS: the lines the console prints: the data read, its roots (at most `shown`) with their
// folders summarised, the code and libraries apart, the notes.
std::vector<std::string> job_reads_text(const JobReads& r, std::size_t shown = 3);

// RETURNS: the data device's read rate over the DataLoader passes (from the first ask to the
// last got, by the sampled intervals inside that span), nullopt when not counted or too short.
std::optional<double> device_rate_during(const JobProcesses& p, const JobLog& log, std::int64_t origin_ns);

// RETURNS: each pass's window in time: from its start to its end (or its last got).
std::vector<TimeWindow> pass_windows(const JobLog& log, const JobFigures& f);

// Fills each pass's data_bytes (reads.window_bytes, from read_summary over pass_windows) and
// device_bytes (the data device's count over the pass, sampled intervals prorated).
void attribute_passes(JobFigures& f, const JobLog& log, const ReadSummary& reads, const JobProcesses& p,
                      std::int64_t origin_ns);

// RETURNS: what the passes' sources add to a verdict: "" unless some passes read mostly from the
// device and others mostly from the page cache, then which were which.
std::string pass_sources_text(const JobFigures& f);

// RETURNS: the line the console prints: each group's mean cores, the read rates, the device's.
std::string job_processes_text(const JobProcesses& p);

// RETURNS: the job as one result entry, `name` without "job/". `gpu`: GpuSampler::stop()'s
// figures, or {"measured": false, "why": ...}. An entry without a batch that had a step after
// it is an error entry (nothing to judge), its extra still written. The command's credentials,
// and the values `redact` names (watch --redact), are withheld (withhold_in_command).
BenchmarkEntry job_entry(const std::string& name, const JobRun& run, const JobLog& log, const JobFigures& f,
                         const JobVerdict& v, double target_au, const JobProcesses& processes,
                         const JobReads& reads, const nlohmann::json& gpu,
                         const std::vector<std::string>& redact = {});

}  // namespace feedbench
