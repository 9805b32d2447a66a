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

#include "feedbench/results/result.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_log.h"
#include "feedbench/watch/process_sampler.h"

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

// RETURNS: `s` split by `log`'s workers; `device` names the counted device (or why none).
JobProcesses job_processes(const ProcessSamples& s, const JobLog& log, std::int64_t origin_ns,
                           const std::string& device);

// RETURNS: the line the console prints: each group's mean cores, the read rates, the device's.
std::string job_processes_text(const JobProcesses& p);

// RETURNS: the job as one result entry, `name` without "job/". `gpu`: GpuSampler::stop()'s
// figures, or {"measured": false, "why": ...}. An entry without a batch that had a step after
// it is an error entry (nothing to judge), its extra still written.
BenchmarkEntry job_entry(const std::string& name, const JobRun& run, const JobLog& log, const JobFigures& f,
                         const JobVerdict& v, double target_au, const JobProcesses& processes,
                         const nlohmann::json& gpu);

}  // namespace feedbench
