// How long a run will take, before it runs: a quick probe of each path's read rate, each case's
// cost from its data set size and parameters, and the fit of a plan into a time budget
// (repetitions and runtimes). Shared by `run --dry-run` and `run --budget`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/plan.h"

namespace feedbench {

// A path's read rates as a short probe measured them.
struct PathRate {
  double cold_bytes_per_second = 0;    // data evicted first: the storage
  double cached_bytes_per_second = 0;  // the same data read again: the page cache
  double random_read_s = 0;            // one 4 KiB read at a random offset of evicted data
  std::uint64_t probe_bytes = 0;       // read by the cold pass
  bool steady = false;                 // the cold pass's rate stopped changing within its caps
  double cold_seconds = 0;
  double cached_seconds = 0;
  std::string how;    // one line: what was read, how, and the rates
  std::string error;  // non-empty: the probe could not read (rates are then 0)
};

// What the probe reads at most (files and bytes), how long its cold pass runs at most, and the
// window over which its rate must stop changing (slope within kProbeSteadyPercent a second).
inline constexpr std::size_t kProbeMaxFiles = 4096;
inline constexpr std::uint64_t kProbeMaxBytes = std::uint64_t(512) << 20;
inline constexpr std::int64_t kProbeMaxNs = 8'000'000'000;
inline constexpr std::int64_t kProbeWindowNs = 2'000'000'000;
inline constexpr double kProbeSteadyPercent = 10;
inline constexpr std::int64_t kProbeRandomNs = 250'000'000;

// Probes a selection: files spread over it (up to kProbeMaxFiles, kProbeMaxBytes) are evicted
// (posix_fadvise, as cold rounds do) and read once with 1 MiB reads by one worker until the
// rate over the last kProbeWindowNs stops changing (the runner's bw_slope criterion), at most
// kProbeMaxBytes or kProbeMaxNs: a store that serves a burst first (a throttle's, a cloud
// disk's credits while they last within the cap) is priced at the rate after it, the last
// window's where the pass had one. Then the same bytes again from the page cache, then evicted
// and read with random 4 KiB reads for at most kProbeRandomNs (the cost of one small read), and
// evicted again. Reads nothing else and writes nothing.
// REQUIRES: !files.empty(). RETURNS: the rates; never throws RunError (error says why).
PathRate probe_read_rate(const FileSet& files);

// One case's estimated cost, in seconds.
struct CaseCost {
  std::string name;
  std::string family;
  int repetitions = 1;
  double prepare_once_s = 0;  // before the first repetition (warming a cold selection)
  double prepare_s = 0;       // before each repetition (eviction, residency, warming again)
  double round_s = 0;         // one round as configured (runtime and max_bytes applied)
  double ramp_s = 0;          // of round_s, ramp_time (file_read)
  // file_read rounds can be cut by a runtime; other families only lose repetitions.
  bool time_cappable = false;
  double min_runtime_s = 1;  // no shorter cap: a steady-state window needs its whole length
};

// Fixed cost per repetition (threads, engines, Google Benchmark's bookkeeping).
inline constexpr double kRepetitionOverheadS = 0.05;

// RETURNS: the cost of `c` on `files` read at `rate`. Rounds are priced with one worker at the
// probe's rates (cold and direct at the cold rate, warm at the cached one; a random read at
// least the probe's random 4 KiB read), so more workers or a deeper queue finish sooner than
// estimated; a time-based round at its ramp_time + runtime unless the selection ends sooner at
// that price; loader cases at least as long as their steps' simulated compute and their
// transform's CPU on every worker at once (at most a core each; a decode at what libjpeg-turbo
// takes here per byte, jpeg.h's decode_seconds_per_byte); stage cases as
// a read, a write and a verifying read at the cold rate.
CaseCost estimate_case(const Case& c, const FileSet& files, const PathRate& rate);

// RETURNS: the seconds `costs` take as planned.
double total_seconds(const std::vector<CaseCost>& costs);

// What --budget chose for one case.
struct BudgetChoice {
  int repetitions = 1;
  std::int64_t runtime_ns = 0;  // a cap on the round's runtime; 0: none needed
};

struct BudgetFit {
  bool fits = false;
  double estimated_s = 0;             // with the choices below (fits) or at the minimum (does not)
  double minimum_s = 0;               // at the fewest repetitions and shortest rounds allowed
  std::vector<BudgetChoice> choices;  // per cost, in order (fits only)
};

// The fewest repetitions --budget lowers a case to (fewer when the config asks for fewer):
// below three a median has no spread, and the diff tool's verdict is weak.
inline constexpr int kBudgetMinRepetitions = 3;
// The shortest time-based round --budget chooses.
inline constexpr std::int64_t kBudgetMinRuntimeNs = 1'000'000'000;

// Fits the plan into `budget_s`: as planned when it fits; else fewer repetitions (down to
// kBudgetMinRepetitions) for every case; else also a common cap on file_read rounds' runtime
// (whole seconds, at least kBudgetMinRuntimeNs, the longest that fits).
// RETURNS: the choices, or fits=false with the minimum the plan needs.
BudgetFit fit_budget(const std::vector<CaseCost>& costs, double budget_s);

// RETURNS: "1h02m", "4m05s", "12.3s": an estimate's precision.
std::string format_estimate(double seconds);

}  // namespace feedbench
