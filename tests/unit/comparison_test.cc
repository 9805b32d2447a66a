// The comparison of two result documents, on fixtures built in code with planted changes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "feedbench/comparison.h"
#include "feedbench/error.h"

namespace feedbench {
namespace {

constexpr const char* kSeq = "file_read/pattern:sequential/bs:65536/engine:psync/workers:1/state:warm/path:source";
constexpr const char* kRand = "file_read/pattern:random/bs:4096/engine:psync/workers:1/state:warm/path:source";

// Repetition i of a value: `center` with a small deterministic wobble of +-`spread` (relative).
std::vector<double> around(double center, int n, double spread = 0.01) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + spread * std::sin(1.7 * i + 0.3)));
  return v;
}

// Adds one case: per repetition an "iteration" entry with these counters, then aggregates
// carrying a misleading value, which diff must ignore while repetitions exist.
void add_case(ResultDocument* d, const std::string& name,
              const std::map<std::string, std::vector<double>>& metrics, bool achieved = true) {
  const std::size_t reps = metrics.begin()->second.size();
  const std::string gb_name = name + "/iterations:1/repeats:" + std::to_string(reps) + "/manual_time";
  for (std::size_t i = 0; i < reps; ++i) {
    BenchmarkEntry e;
    e.name = e.run_name = gb_name;
    e.run_type = "iteration";
    e.case_name = name;
    e.repetitions = static_cast<std::int64_t>(reps);
    e.repetition_index = static_cast<std::int64_t>(i);
    e.real_time = 10;
    e.cache = {{"requested", "warm"}, {"residency_before", achieved ? 1.0 : 0.4}, {"achieved", achieved}};
    for (const auto& [metric, values] : metrics) e.counters[metric] = values[i];
    d->benchmarks.push_back(e);
  }
  BenchmarkEntry agg;
  agg.name = gb_name + "_median";
  agg.run_name = gb_name;
  agg.run_type = "aggregate";
  agg.aggregate_name = "median";
  agg.case_name = name;
  for (const auto& [metric, values] : metrics) agg.counters[metric] = 1e12;
  d->benchmarks.push_back(agg);
}

const MetricComparison& metric_of(const Comparison& c, const std::string& id, const std::string& metric) {
  for (const CaseComparison& k : c.cases)
    if (k.identity == id)
      for (const MetricComparison& m : k.metrics)
        if (m.metric == metric) return m;
  ADD_FAILURE() << "no " << metric << " for " << id;
  static MetricComparison none;
  return none;
}

const CaseComparison& case_of(const Comparison& c, const std::string& id) {
  for (const CaseComparison& k : c.cases)
    if (k.identity == id) return k;
  ADD_FAILURE() << "no case " << id;
  static CaseComparison none;
  return none;
}

TEST(ComparisonTest, TwentyPercentThroughputDropOverNineRepetitionsIsARegression) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(0.8e9, 9)}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(m.verdict, Verdict::kRegression);
  EXPECT_FALSE(m.weak);
  EXPECT_NEAR(m.change, -0.2, 0.01);
  EXPECT_LT(m.p, 0.001);
  EXPECT_EQ(m.base_values.size(), 9u);  // repetitions only: the aggregate was ignored
  EXPECT_EQ(c.regressions(), 1u);
  EXPECT_EQ(c.exit_code(false), 1);
}

TEST(ComparisonTest, TwoPercentDropIsWithinTheThresholdEvenWhenSignificant) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9, 0.002)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(0.98e9, 9, 0.002)}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_LT(m.p, 0.05);  // clearly different, but small
  EXPECT_EQ(m.verdict, Verdict::kUnchanged);
  EXPECT_EQ(c.exit_code(false), 0);
}

TEST(ComparisonTest, ChangeBeyondThresholdButNotSignificantIsNoRegression) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", {80, 90, 100, 110, 120, 85, 95, 105, 115}}});
  add_case(&next, kSeq, {{"bytes_per_second", {75, 84, 94, 103, 113, 80, 89, 99, 108}}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_LT(m.change, -0.05);
  EXPECT_GT(m.p, 0.05);
  EXPECT_EQ(m.verdict, Verdict::kUnchanged);
}

TEST(ComparisonTest, TwentyPercentDropOnTwoRepetitionsIsAWeakRegression) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", {1000, 1004}}});
  add_case(&next, kSeq, {{"bytes_per_second", {600, 1002}}});  // one noisy repetition
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_TRUE(m.weak);
  EXPECT_EQ(m.repetitions_needed, 4u);
  EXPECT_EQ(m.verdict, Verdict::kRegression);  // the threshold alone decided
  EXPECT_EQ(c.exit_code(false), 1);
}

TEST(ComparisonTest, ImprovementIsReportedAndIsNotARegression) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1.3e9, 9)}});
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kSeq, "bytes_per_second").verdict, Verdict::kImprovement);
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(c.improvements(), 1u);
  EXPECT_EQ(c.exit_code(false), 0);
}

TEST(ComparisonTest, RisingLatencyIsARegression) {
  ResultDocument base, next;
  add_case(&base, kRand, {{"bytes_per_second", around(4e8, 9)}, {"lat_p99_us", around(100, 9)}});
  add_case(&next, kRand, {{"bytes_per_second", around(4e8, 9)}, {"lat_p99_us", around(150, 9)}});
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kRand, "bytes_per_second").verdict, Verdict::kUnchanged);
  const MetricComparison& lat = metric_of(c, kRand, "lat_p99_us");
  EXPECT_EQ(lat.direction, Direction::kLowerIsBetter);
  EXPECT_EQ(lat.verdict, Verdict::kRegression);
  EXPECT_EQ(c.exit_code(false), 1);
}

TEST(ComparisonTest, FallingLatencyIsAnImprovement) {
  ResultDocument base, next;
  add_case(&base, kRand, {{"lat_p99_us", around(100, 9)}});
  add_case(&next, kRand, {{"lat_p99_us", around(70, 9)}});
  EXPECT_EQ(metric_of(compare_results(base, next, {}), kRand, "lat_p99_us").verdict,
            Verdict::kImprovement);
}

TEST(ComparisonTest, MissingAndAddedCasesAreListed) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 5)}});
  add_case(&base, kRand, {{"bytes_per_second", around(1e8, 5)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 5)}});
  add_case(&next, "file_read/pattern:shuffled_files/bs:65536", {{"bytes_per_second", around(1e9, 5)}});
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(case_of(c, kRand).status, CaseStatus::kRemoved);
  EXPECT_EQ(case_of(c, "file_read/pattern:shuffled_files/bs:65536").status, CaseStatus::kAdded);
  EXPECT_EQ(case_of(c, kSeq).status, CaseStatus::kCompared);
  // A case BASE measured and NEW did not is a failure unless the caller accepts it.
  EXPECT_TRUE(case_of(c, kRand).missing());
  EXPECT_EQ(c.missing(), 1u);
  EXPECT_EQ(c.exit_code(false), 1);
  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(compare_results(base, next, allow).exit_code(false), 0);
}

TEST(ComparisonTest, NoCommonCaseIsBadInput) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&next, kRand, {{"bytes_per_second", around(1e9, 3)}});
  try {
    compare_results(base, next, {}, "a.json", "b.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no case in common"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a.json"), std::string::npos) << e.what();
  }
}

TEST(ComparisonTest, UnknownMetricAndBadOptionsAreBadInput) {
  ResultDocument base;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  CompareOptions o;
  o.metrics = {"furlongs_per_fortnight"};
  EXPECT_THROW(compare_results(base, base, o), InputError);
  o = {};
  o.alpha = 1.5;
  EXPECT_THROW(compare_results(base, base, o), InputError);
  o = {};
  o.match_ignore = {"nosuchkey"};
  EXPECT_THROW(compare_results(base, base, o), InputError);
}

TEST(ComparisonTest, ChosenMetricsAreTheOnlyOnesJudged) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}, {"lat_p50_us", around(50, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(0.5e9, 9)}, {"lat_p50_us", around(50, 9)}});
  CompareOptions o;
  o.metrics = {"lat_p50_us", "real_time"};
  Comparison c = compare_results(base, next, o);
  const CaseComparison& k = case_of(c, kSeq);
  ASSERT_EQ(k.metrics.size(), 2u);
  EXPECT_EQ(k.metrics[0].metric, "lat_p50_us");
  EXPECT_EQ(k.metrics[1].metric, "real_time");
  EXPECT_DOUBLE_EQ(k.metrics[1].base_median, 10e6);  // 10 ms in ns
  EXPECT_EQ(c.exit_code(false), 0);
}

TEST(ComparisonTest, ACaseWhoseEveryRepetitionWasExcludedInNewIsMissing) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(0.5e9, 9)}}, /*achieved=*/false);
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kSeq);
  EXPECT_EQ(k.status, CaseStatus::kNotMeasured);
  EXPECT_TRUE(k.missing());
  EXPECT_NE(k.note.find("every repetition excluded in NEW (repetition 0: warm not achieved: 40.0% "
                        "resident before the round"),
            std::string::npos)
      << k.note;
  EXPECT_TRUE(k.metrics.empty());
  EXPECT_EQ(c.exit_code(false), 1);
}

TEST(ComparisonTest, BaseWithoutACountedRepetitionIsNotJudgedAndADiffOfNothingFails) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}}, /*achieved=*/false);
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kSeq);
  EXPECT_EQ(k.status, CaseStatus::kCacheNotAchieved);
  EXPECT_FALSE(k.missing());
  EXPECT_NE(k.note.find("every repetition excluded in BASE"), std::string::npos) << k.note;
  EXPECT_EQ(c.compared(), 0u);
  EXPECT_EQ(c.exit_code(false), 1) << "a diff that compared nothing is not a pass";
  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(compare_results(base, next, allow).exit_code(false), 1);
}

TEST(ComparisonTest, OnlyCountedRepetitionsAreJudged) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  // A warm round that was not warm, and one that read a tenth of its plan, both "fast".
  next.benchmarks[0].counters["bytes_per_second"] = 50e9;
  next.benchmarks[0].cache["achieved"] = false;
  next.benchmarks[1].counters["bytes_per_second"] = 60e9;
  next.benchmarks[1].extra = {{"round_complete", false}, {"bytes_planned", 800}, {"bytes_read", 100}};
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kSeq);
  EXPECT_EQ(k.status, CaseStatus::kCompared);
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(m.new_values.size(), 7u);
  for (double v : m.new_values) EXPECT_LT(v, 2e9);
  EXPECT_NE(k.note.find("7 of 9 repetitions counted in NEW"), std::string::npos) << k.note;
  EXPECT_NE(k.note.find("short round: read 100 B of 800 B planned"), std::string::npos) << k.note;
  EXPECT_EQ(c.exit_code(false), 0);
}

TEST(ComparisonTest, ACaseSkippedInNewIsMissing) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&base, kRand, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  BenchmarkEntry failed;
  failed.name = failed.run_name = failed.case_name = kRand;
  failed.error_occurred = true;
  failed.error_message = "O_DIRECT unsupported on tmpfs";
  next.benchmarks.push_back(failed);
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kRand);
  EXPECT_EQ(k.status, CaseStatus::kNotMeasured);  // skipped in NEW: as missing as absent
  EXPECT_EQ(k.note, "errored in NEW: O_DIRECT unsupported on tmpfs");
  EXPECT_EQ(c.exit_code(false), 1);
}

TEST(ComparisonTest, AggregatesAreTheFallbackWhenNoRepetitionsExist) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  BenchmarkEntry agg;
  agg.name = agg.run_name = agg.case_name = kSeq;
  agg.run_type = "aggregate";
  agg.aggregate_name = "median";
  agg.counters["bytes_per_second"] = 0.7e9;
  next.benchmarks.push_back(agg);
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kSeq);
  EXPECT_NE(k.note.find("aggregate"), std::string::npos);
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(m.new_values.size(), 1u);
  EXPECT_TRUE(m.weak);
  EXPECT_EQ(m.verdict, Verdict::kRegression);
}

TEST(ComparisonTest, MatchIgnoreLeavesAKeyOutOfTheIdentity) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, "file_read/pattern:sequential/bs:4096/engine:psync/workers:1/state:warm/path:source",
           {{"bytes_per_second", around(0.3e9, 9)}});
  EXPECT_THROW(compare_results(base, next, {}), InputError);  // nothing in common
  CompareOptions o;
  o.match_ignore = {"bs"};
  Comparison c = compare_results(base, next, o);
  const std::string id = "file_read/pattern:sequential/engine:psync/workers:1/state:warm/path:source";
  const CaseComparison& k = case_of(c, id);
  EXPECT_EQ(k.base_name, kSeq);
  EXPECT_NE(k.new_name.find("bs:4096"), std::string::npos);
  EXPECT_EQ(metric_of(c, id, "bytes_per_second").verdict, Verdict::kRegression);
}

TEST(ComparisonTest, IdentityDropsGoogleBenchmarkDecorationsWithoutACanonicalName) {
  BenchmarkEntry e;
  e.name = e.run_name = e.case_name = "BM_read/4096/iterations:1/repeats:5/manual_time";
  EXPECT_EQ(case_identity(e, {}), "BM_read/4096");
  e.case_name = "file_read/bs:4096/qd:1";
  EXPECT_EQ(case_identity(e, {"qd"}), "file_read/bs:4096");
}

TEST(ComparisonTest, GeometricMeanSummarisesRatiosOverCommonCases) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", {100, 100, 100}}});
  add_case(&base, kRand, {{"bytes_per_second", {100, 100, 100}}});
  add_case(&next, kSeq, {{"bytes_per_second", {80, 80, 80}}});
  add_case(&next, kRand, {{"bytes_per_second", {125, 125, 125}}});
  Comparison c = compare_results(base, next, {});
  ASSERT_EQ(c.geomeans.size(), 1u);
  EXPECT_EQ(c.geomeans[0].metric, "bytes_per_second");
  EXPECT_EQ(c.geomeans[0].cases, 2u);
  EXPECT_NEAR(c.geomeans[0].ratio, 1.0, 1e-12);
}

TEST(ComparisonTest, ComparabilityWarningsAndStrict) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  base.config = {{"sha256", "aaaa"}};
  next.config = {{"sha256", "bbbb"}};
  base.tool = next.tool = {{"version", "0.1.0"}, {"benchmark_version", "1.7.1"}};
  base.environment = {{"host", {{"cpu_model", "EPYC"}, {"kernel", "6.1"}}},
                      {"paths", {{"source", {{"fs_type", "ext4"}, {"device", "nvme0n1"}}}}}};
  next.environment = base.environment;
  EXPECT_EQ(compare_results(base, base, {}).warnings.size(), 0u);
  next.environment["host"]["kernel"] = "6.8";
  next.environment["paths"]["source"]["device"] = "sda";
  Comparison c = compare_results(base, next, {});
  ASSERT_EQ(c.warnings.size(), 3u);
  EXPECT_EQ(c.warnings[0], "config sha256 differs: BASE \"aaaa\", NEW \"bbbb\"");
  EXPECT_EQ(c.warnings[1], "kernel differs: BASE \"6.1\", NEW \"6.8\"");
  EXPECT_EQ(c.warnings[2], "source path device differs: BASE \"nvme0n1\", NEW \"sda\"");
  EXPECT_EQ(c.exit_code(false), 0);
  EXPECT_EQ(c.exit_code(true), 1);
}

}  // namespace
}  // namespace feedbench
