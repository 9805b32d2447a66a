// One trial of `feedbench qualify`: K accelerators of a workload reading through one path, run
// as `feedbench run` of a loader config of two epochs (the first cold, the second the steady
// state), and what its result file says of each state: AU, what limited it, what one
// accelerator needs. The config and the reading are pure, so unit tests check both.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accelerator_search.h"
#include "feedbench/results/card.h"
#include "feedbench/results/result.h"
#include "workload_profiles.h"

namespace feedbench {

// The folder of one accelerator's epoch in a qualify data set: "unit_000". A trial of K reads
// the first K (dataset.include), so each accelerator's share is one epoch of steps_to_judge steps.
std::string unit_folder(int index);

struct TrialPlan {
  const WorkloadProfile* profile = nullptr;
  std::string path;  // "store" or "cache"
  int accelerators = 1;
  std::string store_data, cache_data;  // the data set's folders (cache_data: path cache only)
  std::chrono::nanoseconds step{0};    // the profile's step ÷ speedup
  double step_scale = 1;               // a trace's: its recorded steps × this (1 ÷ speedup)
  double target_au = 0.9;
  std::uint64_t seed = 42;
};

// RETURNS: the experiment config of the trial (one loader case).
nlohmann::json trial_config(const TrialPlan& plan);

// RETURNS: the command line (after the program's name) of accelerator `unit`'s replay in a trial
// of a --like trace: `replay TRACE --source <path's data>/unit_NNN`, two epochs, the first cold,
// the steps scaled, written to `out`. A trial of K runs K of them at once.
std::vector<std::string> replay_args(const TrialPlan& plan, int unit, const std::string& out);

// What the trial found in one state, from its epoch's figures.
struct StateFigures {
  bool judged = false;
  std::string why_not;  // not judged: why
  double au = 0;
  std::string limit_by;         // the loader's: "storage", "cpu", "handover", "page_cache", ""
  std::string limit_line;       // its few words
  double host_cpu_busy = 0;     // share of the usable cores busy, every process
  double transform_share = 0;   // of the workers' read + transform time
  double bytes_per_second = 0;  // what the trainers consumed
  std::optional<double> device_bytes_per_second;
  bool served_from_memory = false;
  double cores_used = 0;  // feedbench's own CPU in that epoch, in cores
};

struct TrialResult {
  int accelerators = 0;
  std::array<StateFigures, 2> states;  // by FedState
  unsigned cores = 1;
  double mean_sample_bytes = 0;
  PerAccelerator need;  // one accelerator's need at its step, AU 100% (cpu_cores: at the cold epoch's AU)
  ResultDocument document;

  // RETURNS: what the search needs: each state's judgement, AU and the cores' headroom.
  TrialOutcome outcome() const;
};

// RETURNS: the trial's figures read from its result document. Throws InputError when the
// document holds no loader entry with epochs (a result of some other run).
TrialResult read_trial(ResultDocument document, int accelerators);

// RETURNS: K replays' results as one trial of K accelerators: a state is judged where every
// replay judged it, and its AU is the lowest (every accelerator must keep the target, as K real
// jobs each timing its own AU); the figures and the document are that replay's, but for the
// rate the K took together and the cores they used together. REQUIRES: `each` not empty.
TrialResult combine_replays(std::vector<TrialResult> each);

// RETURNS: the limit of a card's cell in words, from the trial that fell short (or, for a cell
// that never did, the largest that kept the target): "the store's bandwidth: 310 MiB/s read",
// "the host's CPU: decode and transforms, 2 cores 97% busy", "none found up to 64 accelerators
// (the search's cap)".
std::string cell_limit(const WorkloadProfile& profile, const std::string& path, const FedAnswer& answer,
                       const TrialResult& deciding, FedState state, int cap);

// A child `feedbench` (this program) run to its end, its output to `log`.
struct ChildRun {
  int exit_code = -1;      // -1: killed
  bool timed_out = false;  // stopped at the deadline
  bool stopped = false;    // stopped because *stop was set
};

// Runs this program once per `args` (after the program's name), all at once, each one's stdout
// and stderr to its `logs` entry, and waits for all. At `deadline`, or when *stop becomes
// non-zero, every child still running gets SIGTERM (it stops cleanly), then SIGKILL after 10 s.
// Throws RunError when one cannot start (those started are stopped first).
// REQUIRES: args.size() == logs.size().
std::vector<ChildRun> run_this_program(const std::vector<std::vector<std::string>>& args,
                                       const std::vector<std::string>& logs,
                                       std::chrono::steady_clock::time_point deadline,
                                       const std::atomic<int>* stop);

}  // namespace feedbench
