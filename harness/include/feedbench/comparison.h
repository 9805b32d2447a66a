// Comparison of two result documents (BASE and NEW): cases matched by identity, metrics judged
// with a direction, a threshold on the median of repetitions and a Mann-Whitney U test, and
// warnings when the two runs are not comparable. What `feedbench diff` prints and exits on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/result.h"

namespace feedbench {

enum class Direction { kHigherIsBetter, kLowerIsBetter };

struct MetricInfo {
  const char* name;
  Direction direction;
  bool judged_by_default;
};

// RETURNS: every metric diff knows a direction for (throughput, latency, loader, real_time).
const std::vector<MetricInfo>& known_metrics();
// RETURNS: the metric's description, or nullptr when diff does not know it.
const MetricInfo* find_metric(const std::string& name);

struct CompareOptions {
  std::vector<std::string> metrics;  // judged metrics; empty = the default set
  double threshold = 0.05;           // relative change of the median that counts
  double alpha = 0.05;               // significance level of the two-sided test
  std::vector<std::string> match_ignore;  // case-name keys left out of the identity ("bs")
  // A case of BASE that NEW did not measure (absent, or every repetition excluded, errored or
  // skipped) fails the diff unless this is set: nothing measured is not a success.
  bool allow_missing = false;
};

enum class Verdict {
  kUnchanged,    // within the threshold, or beyond it but not significant
  kRegression,   // worse than the threshold and significant (or weak: see `weak`)
  kImprovement,  // better than the threshold and significant (or weak)
};

struct MetricComparison {
  std::string metric;
  Direction direction = Direction::kHigherIsBetter;
  std::vector<double> base_values, new_values;  // per repetition
  double base_median = 0, new_median = 0;
  double change = 0;   // (new - base) / base; +-infinity when base is 0 and new is not
  double p = 1;        // two-sided Mann-Whitney U p-value
  bool exact = true;   // exact test or normal approximation
  // Too few repetitions for the test to reach alpha at all: the threshold alone decided.
  bool weak = false;
  std::size_t repetitions_needed = 0;  // per side, to let the test reach alpha (when weak)
  Verdict verdict = Verdict::kUnchanged;
};

enum class CaseStatus {
  kCompared,         // judged on its metrics
  kRemoved,          // only in BASE
  kAdded,            // only in NEW
  kCacheNotAchieved, // no repetition of BASE counts (cache state not achieved, short round)
  kErrored,          // every repetition of BASE errored or was skipped: not judged
  kNoMetrics,        // none of the judged metrics is in both files for this case
  kNotMeasured,      // in NEW, but none of its repetitions counts (excluded, errored, skipped)
};

struct CaseComparison {
  std::string identity;   // the matching key (case name without ignored keys)
  std::string base_name;  // case name in BASE ("" when added)
  std::string new_name;   // case name in NEW ("" when removed)
  CaseStatus status = CaseStatus::kCompared;
  std::string note;       // why not judged, or "from aggregates" when only aggregates existed
  std::vector<MetricComparison> metrics;

  bool regressed() const;
  bool improved() const;
  // RETURNS: whether NEW lacks a measurement BASE has (kRemoved or kNotMeasured).
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
  CompareOptions options;
  std::vector<std::string> warnings;  // comparability ("config sha256 differs: ...")
  std::vector<CaseComparison> cases;  // compared first, then not judged, removed, added
  std::vector<GeomeanSummary> geomeans;

  std::size_t regressions() const;   // cases with at least one regressed metric
  std::size_t improvements() const;  // cases with an improvement and no regression
  std::size_t missing() const;       // cases BASE measured and NEW did not
  std::size_t compared() const;      // cases judged on their metrics (status kCompared)
  // RETURNS: 1 when a case regressed, when a case is missing (unless options.allow_missing),
  // when no case was compared at all, or when `strict` and there are warnings; else 0.
  int exit_code(bool strict) const;
};

// RETURNS: the identity diff matches on: the case name (Google Benchmark's run name without
// its decorations when a file has none) with the `/key:value` segments of `ignore` removed.
std::string case_identity(const BenchmarkEntry& entry, const std::vector<std::string>& ignore);

// RETURNS: one line per difference that makes BASE and NEW hard to compare: config hash,
// feedbench and Google Benchmark versions, CPU model, kernel, instance type (where the machine
// says it), per path role the file system type and device; then, named with what they mean,
// the changes that read other data or in another order and so pass for speed: the shuffle
// seed ("shuffle seed differs: 42 → 43: access order changed"), the selection (config.selection,
// else the config's dataset.include), the manifest label, and per role the data set
// fingerprint, file count, total bytes and file-size percentiles (dataset.<role>.file_size).
std::vector<std::string> comparability_warnings(const ResultDocument& base,
                                                const ResultDocument& next);

// Compares NEW against BASE. `base_file`/`new_file` only name them in messages. Each side is
// judged on its counted repetitions only: those not errored and not excluded by
// exclusion_reason() (result.h), the same rule every reporter folds by.
// RETURNS: the comparison. Throws InputError for an unknown metric, a threshold or alpha out of
// range, a --match-ignore key no case has, and when the files have no case in common.
Comparison compare_results(const ResultDocument& base, const ResultDocument& next,
                           const CompareOptions& options, const std::string& base_file = "BASE",
                           const std::string& new_file = "NEW");

}  // namespace feedbench
