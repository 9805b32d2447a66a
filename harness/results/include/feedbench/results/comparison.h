// Comparison of two result documents (BASE and NEW): cases matched by identity, metrics judged
// with a direction, a threshold on the median of repetitions and a Mann-Whitney U test, and
// warnings when the two runs are not comparable. What `feedbench diff` prints and exits on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/results/counters.h"
#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: the counters diff judges (feedbench/results/counters.h, those marked judged), in table order.
std::vector<const CounterInfo*> judged_metrics();
// RETURNS: the judged counter's row, or nullptr when diff does not judge `name`.
const CounterInfo* find_metric(const std::string& name);

struct CompareOptions {
  std::vector<std::string> metrics;       // judged metrics; empty = per family, the table's gates
  double threshold = 0.05;                // relative change of the median that counts
  double alpha = 0.05;                    // significance level of the two-sided test
  std::vector<std::string> match_ignore;  // case-name keys left out of the identity ("bs")
  // A case of BASE that NEW did not measure (absent, or every repetition excluded, errored or
  // skipped) fails the diff unless this is set: nothing measured is not a success.
  bool allow_missing = false;
  // ECMAScript regular expressions searched in each case's name (BASE's or NEW's): a case
  // that matches an exclude, or none of the includes (when any), is left out altogether.
  std::vector<std::string> include, exclude;
  // The noise rule: a change beyond the threshold that the spread of either side, or (for
  // cases served from memory) the host's load difference, could explain is "noisy", not a
  // regression. Off only to see the raw verdicts.
  bool noise_rule = true;
};

// How loaded the host was during a run: environment.host.load of a result file.
struct HostLoad {
  double before = 0, after = 0;  // 1-minute load average before and after the run
  double cores = 0;              // online cores
  bool known = false;            // the file recorded it (older files did not)
  // The average number of cores programs outside the measured job (or feedbench) took during
  // the measurement: other_programs_cores, recorded by newer files only.
  double other_cores = 0;
  bool other_known = false;
  // RETURNS: the run's load per online core: the mean of before and after, over cores.
  double per_core() const;
  // RETURNS: the share of the online cores other programs took, within [0, 1] (0 unless
  // other_known and cores are).
  double other_share() const;
};

// RETURNS: environment.host.load of the document, known = false when absent; other_known
// false when it has no number other_programs_cores.
HostLoad host_load(const ResultDocument& doc);

// RETURNS: the loads of several runs of one side as one: the means of their figures, known (or
// other_known) only when every run recorded them.
HostLoad mean_host_load(const std::vector<HostLoad>& runs);

// Two loads per core count as equal when they differ by at most kLoadTolerance of the larger,
// or by kLoadToleranceFloor per core on a near-idle host: a share of the CPU that changed by
// 10% cannot explain a larger change, so equal loads, however high, explain no significant one.
inline constexpr double kLoadTolerance = 0.10;
inline constexpr double kLoadToleranceFloor = 0.10;

// RETURNS: whether both loads are known and differ by more than the tolerance above.
bool loads_differ(const HostLoad& base, const HostLoad& next);

// A repetition the outlier rule (feedbench/base/statistics.h: outlier_indices) sets aside: diff
// judges its case's metric without it, and `run` warns when it writes one.
struct OutlierRepetition {
  std::string case_name;              // the case, as its file names it
  std::string metric;                 // the metric it is an outlier of
  std::int64_t repetition_index = 0;  // Google Benchmark's, from 0
  double value = 0;                   // its value of the metric
  double median = 0;                  // the median of the case's counted repetitions, it included
};

// RETURNS: the outlier repetitions of `doc`, in its case order: per case, among the repetitions
// diff judges (counted, as compare_results says), of each metric that gates the case's family.
std::vector<OutlierRepetition> outlier_repetitions(const ResultDocument& doc);

enum class Verdict {
  kUnchanged,    // within the threshold, or beyond it but not significant
  kRegression,   // worse than the threshold and significant (or weak: see `weak`)
  kImprovement,  // better than the threshold and significant (or weak)
  kNoisy,        // beyond the threshold, but within what the noise could explain: no verdict
};

struct MetricComparison {
  std::string metric;
  Direction direction = Direction::kHigherIsBetter;
  std::vector<double> base_values, new_values;  // per repetition judged (outliers set aside)
  // Repetitions the outlier rule set aside, in each side's order: the median, the test and the
  // spread are of the values above, which one wild repetition then cannot flip.
  std::vector<OutlierRepetition> base_set_aside, new_set_aside;
  double base_median = 0, new_median = 0;
  double change = 0;  // (new - base) / base; +-infinity when base is 0 and new is not
  double p = 1;       // two-sided Mann-Whitney U p-value
  bool exact = true;  // exact test or normal approximation
  // Too few repetitions for the test to reach alpha at all: the threshold alone decided.
  bool weak = false;
  std::size_t repetitions_needed = 0;  // per side, to let the test reach alpha (when weak)
  // Coefficient of variation (sample stddev / |mean|) of each side's repetitions; 0 below 2.
  double base_cv = 0, new_cv = 0;
  // The median CV of this metric over every compared case of both files: what three
  // repetitions of one case cannot estimate on their own. The band uses the larger.
  double typical_cv = 0;
  // With several BASE runs: each run's median of this metric (in the order given), and the
  // largest ratio between two of them, less 1 (0.34: the runs' medians differ by up to a
  // factor 1.34). Repetitions within one run cannot show how far a second run lands; these can.
  std::vector<double> base_run_medians;
  double run_spread = 0;
  // The largest change the noise could explain, as a ratio - 1 (0.75: up to a factor 1.75
  // either way): from the spreads (within runs, and between BASE's runs), and for cases served
  // from memory or CPU-bound the host load and other programs' share of the cores; 0 with the
  // noise rule off.
  double noise_band = 0;
  bool below_floor = false;  // |new - base| below the metric's floor: not judged
  // When kNoisy: "spread: CV 9.1% BASE, 2.0% NEW ...", the runs' spread, the load, or "other
  // programs took 0.1 of 2 cores BASE, 1.8 NEW ...".
  std::string why_noisy;
  Verdict verdict = Verdict::kUnchanged;
};

enum class CaseStatus {
  kCompared,          // judged on its metrics
  kRemoved,           // only in BASE
  kAdded,             // only in NEW
  kCacheNotAchieved,  // no repetition of BASE counts (cache state not achieved, short round)
  kErrored,           // every repetition of BASE errored or was skipped: not judged
  kNoMetrics,         // none of the judged metrics is in both files for this case
  kNotMeasured,       // in NEW, but none of its repetitions counts (excluded, errored, skipped),
                      // or NEW lacks every metric BASE judges the case on
  kTooFewSteps,       // a loader run measured fewer steps than it needs to judge (extra.judged
                      // false) in BASE or NEW: its figures are recorded, but no change is judged
};

struct CaseComparison {
  std::string identity;   // the matching key (case name without ignored keys)
  std::string base_name;  // case name in BASE ("" when added)
  std::string new_name;   // case name in NEW ("" when removed)
  CaseStatus status = CaseStatus::kCompared;
  std::string note;  // why not judged, or "from aggregates" when only aggregates existed
  std::vector<MetricComparison> metrics;
  // Metrics the case is judged on that BASE has and NEW lacks (absent or null in some counted
  // repetition of NEW): as missing as an absent case. The note names each with NEW's file.
  std::vector<std::string> missing_metrics;

  bool regressed() const;
  bool improved() const;
  // RETURNS: no regression and at least one metric noisy.
  bool noisy() const;
  // RETURNS: whether NEW lacks a measurement BASE has (kRemoved, kNotMeasured, or a metric
  // in missing_metrics).
  bool missing() const;
};

struct GeomeanSummary {
  std::string metric;
  Direction direction = Direction::kHigherIsBetter;
  double ratio = 1;       // geometric mean of NEW/BASE medians over the compared cases
  std::size_t cases = 0;  // how many cases went into it
};

struct Comparison {
  std::string base_file, new_file;
  // Every BASE run given (base_file first): their repetitions are judged together, and the
  // spread between them bounds what an unchanged NEW may differ by.
  std::vector<std::string> base_files;
  CompareOptions options;
  std::vector<std::string> warnings;  // comparability ("config sha256 differs: ...")
  std::vector<CaseComparison> cases;  // compared first, then not judged, removed, added
  std::vector<GeomeanSummary> geomeans;
  HostLoad base_load, new_load;    // as the files recorded them (BASE's: mean_host_load)
  std::size_t excluded_cases = 0;  // left out by --include / --exclude
  // A confirmation re-run judged instead of NEW's own repetitions (replace_cases), if any.
  std::string rerun_file;
  std::vector<std::string> rerun_cases;  // identities it replaced

  std::size_t regressions() const;   // cases with at least one regressed metric
  std::size_t improvements() const;  // cases with an improvement and no regression
  std::size_t noisy() const;         // cases with a noisy metric and no regression
  // RETURNS: whether some judged metric was weak (too few repetitions for the test).
  bool any_weak() const;
  std::size_t missing() const;   // cases BASE measured and NEW did not
  std::size_t compared() const;  // cases judged on their metrics (status kCompared)
  // RETURNS: 1 when a case regressed, when a case is missing (unless options.allow_missing),
  // when no case was compared at all, or when `strict` and there are warnings; else 0.
  int exit_code(bool strict) const;
};

// RETURNS: the identity diff matches on: the case name (Google Benchmark's run name without
// its decorations when a file has none) with the `/key:value` segments of `ignore` removed; a
// replay's as replay_as_job says.
std::string case_identity(const BenchmarkEntry& entry, const std::vector<std::string>& ignore);

// RETURNS: a replay's identity as the job it replays, so that a faithful replay matches the
// watched job and a what-if matches the same what-if on another machine:
// replay/job:NAME[/what-ifs] is job/NAME[/what-ifs], its default conditions (state:cold,
// path:source) left out; any other identity as it is.
std::string replay_as_job(const std::string& identity);

// RETURNS: one line per difference that makes BASE and NEW hard to compare: config hash,
// feedbench and Google Benchmark versions, CPU model, kernel, instance type (where the machine
// says it), per path role the file system type and device; then, named with what they mean,
// the changes that read other data or in another order and so pass for speed: the shuffle
// seed ("shuffle seed differs: 42 → 43: access order changed"), the selection (config.selection,
// else the config's dataset.include), the manifest label, and per role the data set
// fingerprint, file count, total bytes and file-size percentiles (dataset.<role>.file_size).
std::vector<std::string> comparability_warnings(const ResultDocument& base, const ResultDocument& next);

// A confirmation re-run: `rerun` measured some cases again. RETURNS: `next` with the entries of
// every case `rerun` has (matched by case_identity with `ignore`) replaced by rerun's; their
// identities in `replaced`. Throws InputError when rerun has no case of `next`. Pass NEW with
// std::move where it is not needed after: its entries then move instead of being copied.
ResultDocument replace_cases(ResultDocument next, const ResultDocument& rerun,
                             const std::vector<std::string>& ignore, std::vector<std::string>* replaced);

// Compares NEW against BASE. `base_file`/`new_file` only name them in messages. Each side is
// judged on its counted repetitions only: those not errored and not excluded by
// exclusion_reason() (result.h), the same rule every reporter folds by; and of those, per
// metric, without its outliers (base_set_aside, new_set_aside). Host load explains a change
// only when the two loads differ (loads_differ), or when the verdict is weak (no test to go on).
// Without options.metrics, each case is judged on the metrics that gate its family (the
// table's `gates`); a change below a metric's floor is unchanged, and one the noise could
// explain is noisy (options.noise_rule). Such a metric BASE has and NEW lacks makes the case
// missing (missing_metrics); one only NEW has is noted, not judged.
// RETURNS: the comparison. Throws InputError for an unknown metric, a threshold or alpha out of
// range, a --match-ignore key no case has, a bad --include/--exclude expression, and when the
// files have no case in common (after --include/--exclude).
Comparison compare_results(const ResultDocument& base, const ResultDocument& next,
                           const CompareOptions& options, const std::string& base_file = "BASE",
                           const std::string& new_file = "NEW");

// The factor on the spread between BASE's runs that an unchanged NEW may still differ by (on a
// log scale, from BASE's median). Simulated with runs whose medians shift normally from run to
// run, five repetitions each, judged as diff judges: against three runs of BASE an unchanged
// fourth is called worse in 1.5 to 4% of metrics (the more where runs shift and repetitions
// agree; 40% with one run of BASE there), and a 30% drop is caught in 90% of tries where runs
// and repetitions spread by 5%, 45% where by 10%.
// A wider factor makes the gate blind sooner; a narrower one makes it cry wolf.
inline constexpr double kRunSpreadFactor = 2;

// As above, with several runs of BASE (one config, one build, measured apart: `base_runs`,
// named `base_files` in messages, at least one). Each case's BASE repetitions are those of
// every run together; each metric's band widens to kRunSpreadFactor times the largest ratio
// between two runs' medians (on a log scale), so a change no larger than unchanged runs show
// between themselves is noisy, named with that figure. Comparability warnings also name a
// BASE run that is not comparable with the first.
// REQUIRES: base_runs not empty, one name in base_files per run.
// RETURNS: the comparison. Throws as above.
Comparison compare_results(const std::vector<const ResultDocument*>& base_runs, const ResultDocument& next,
                           const CompareOptions& options, const std::vector<std::string>& base_files,
                           const std::string& new_file = "NEW");

}  // namespace feedbench
