// The comparison of two result documents, on fixtures built in code with planted changes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "feedbench/base/error.h"
#include "feedbench/results/comparison.h"

namespace feedbench {
namespace {

constexpr const char* kSeq =
    "file_read/pattern:sequential/bs:65536/engine:psync/workers:1/state:warm/path:source";
constexpr const char* kRand =
    "file_read/pattern:random/bs:4096/engine:psync/workers:1/state:warm/path:source";

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
  add_case(&next, kSeq, {{"bytes_per_second", {800, 803}}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_TRUE(m.weak);
  EXPECT_EQ(m.repetitions_needed, 4u);
  EXPECT_EQ(m.verdict, Verdict::kRegression);  // the threshold alone decided
  EXPECT_EQ(c.exit_code(false), 1);
}

// The same drop carried by one wild repetition: the spread of NEW explains it.
TEST(ComparisonTest, ADropThatOneWildRepetitionMakesIsNoisy) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", {1000, 1004}}});
  add_case(&next, kSeq, {{"bytes_per_second", {600, 1002}}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_GT(m.new_cv, 0.3);
  EXPECT_NE(m.why_noisy.find("CV"), std::string::npos) << m.why_noisy;
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(c.noisy(), 1u);
  EXPECT_EQ(c.exit_code(false), 0);
  CompareOptions raw;
  raw.noise_rule = false;
  EXPECT_EQ(compare_results(base, next, raw).regressions(), 1u);
}

// ---- A/A: an unchanged system re-run on a host whose load changed -------------------------

constexpr const char* kColdSeq =
    "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source";
constexpr const char* kLoader =
    "loader/batch:16/workers:1/prefetch:2/step:20ms/transform:none/samples:files/epochs:1/"
    "steps:10/warmup:1/acc:1/target:0.9/engine:psync/state:cold/path:source";

void set_load(ResultDocument* d, double before, double after, double cores) {
  d->environment["host"]["load"] = {
      {"loadavg_1m_before", before}, {"loadavg_1m_after", after}, {"online_cores", cores}};
}

// What A/A showed: three tight repetitions per side, a page-cached case 12% slower in the
// second run because the host was busier. Not a regression: the load difference explains it.
TEST(ComparisonTest, AWarmCaseSlowerUnderAHigherHostLoadIsNoisyNotARegression) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(7e9, 3, 0.01)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(6.16e9, 3, 0.01)}});
  set_load(&base, 1.0, 1.2, 2);  // 0.55 per core
  set_load(&next, 2.4, 2.8, 2);  // 1.30 per core
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_NEAR(m.change, -0.12, 0.01);
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_NE(m.why_noisy.find("load"), std::string::npos) << m.why_noisy;
  EXPECT_NEAR(m.noise_band, 0.75, 0.01);  // load per core 0.55 -> 1.30: up to a factor 1.75
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(c.exit_code(false), 0);
  EXPECT_TRUE(c.base_load.known && c.new_load.known);
  EXPECT_NEAR(c.new_load.per_core(), 1.3, 1e-9);
}

// The same load change does not excuse a cold read, which waits on the device: a planted 25%
// slowdown is still caught; and with the load unchanged, so is one in a warm case.
TEST(ComparisonTest, APlantedTwentyFivePercentSlowdownIsStillARegression) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", around(700e6, 3, 0.03)}});
  add_case(&next, kColdSeq, {{"bytes_per_second", around(525e6, 3, 0.03)}});
  add_case(&base, kSeq, {{"bytes_per_second", around(7e9, 3, 0.03)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(5.25e9, 3, 0.03)}});
  set_load(&base, 1.0, 1.2, 2);
  set_load(&next, 1.1, 1.1, 2);
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kColdSeq, "bytes_per_second").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(c, kSeq, "bytes_per_second").verdict, Verdict::kRegression);
  set_load(&next, 2.4, 2.8, 2);
  c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kColdSeq, "bytes_per_second").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(c, kSeq, "bytes_per_second").verdict, Verdict::kNoisy);
  EXPECT_EQ(c.regressions(), 1u);
  EXPECT_EQ(c.noisy(), 1u);
  EXPECT_EQ(c.exit_code(false), 1);
}

// A side whose repetitions spread by about 10% cannot tell a 10% shift from noise.
TEST(ComparisonTest, ASpreadWiderThanTheChangeMakesItNoisy) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", {700e6, 610e6, 790e6}}});
  add_case(&next, kColdSeq, {{"bytes_per_second", {630e6, 560e6, 700e6}}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_NEAR(m.change, -0.1, 1e-9);
  EXPECT_NEAR(m.base_cv, 0.1286, 0.001);
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_EQ(c.exit_code(false), 0);
}

// Measured in an A/A pair on a loaded 2-core machine: p99 latency of a page-cached case, one
// wild repetition in NEW. Three repetitions cannot reach alpha, so the threshold alone used to
// decide ("+241% REGRESSION" at p 0.7); NEW's own spread explains it.
TEST(ComparisonTest, AWeakChangeThatOneSidesSpreadExplainsIsNoisy) {
  ResultDocument base, next;
  add_case(&base, kRand, {{"lat_p99_us", {83.2, 88.32, 78.079}}});
  add_case(&next, kRand, {{"lat_p99_us", {283.647, 363.519, 58.752}}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kRand, "lat_p99_us");
  EXPECT_TRUE(m.weak);
  EXPECT_GT(m.change, 2);
  EXPECT_LT(m.change, m.noise_band);
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_NE(m.why_noisy.find("spread: CV"), std::string::npos) << m.why_noisy;
  EXPECT_EQ(c.exit_code(false), 0);
}

// Measured A/A on a 2-core host at load 7.5: p99 of a page-cached case 1.2 ms in one run,
// 24 ms in the next (a preempted read sets a round's tail). With more runnable tasks than
// cores, tails are noisy; on a quiet host the same change is a regression.
TEST(ComparisonTest, TailsOnAnOversubscribedHostAreNoisy) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"lat_p99_us", {1241, 1250, 1230}}, {"bytes_per_second", around(7e8, 3)}});
  add_case(&next, kColdSeq, {{"lat_p99_us", {24180, 24000, 24300}}, {"bytes_per_second", around(7e8, 3)}});
  set_load(&base, 7.6, 8.0, 2);
  set_load(&next, 7.4, 7.6, 2);
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "lat_p99_us");
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_NE(m.why_noisy.find("oversubscribed"), std::string::npos) << m.why_noisy;
  EXPECT_EQ(c.exit_code(false), 0);
  set_load(&base, 0.4, 0.6, 2);
  set_load(&next, 0.5, 0.5, 2);
  EXPECT_EQ(metric_of(compare_results(base, next, {}), kColdSeq, "lat_p99_us").verdict, Verdict::kRegression);
}

// Three tight repetitions by chance: the run's other cases show rounds vary by 20% here, so
// a 27% shift of one case is within the noise; alone, the same case is a regression.
TEST(ComparisonTest, TheTypicalSpreadOfTheRunsCasesWidensATightCasesBand) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", {289e6, 290e6, 288e6}}});
  add_case(&next, kColdSeq, {{"bytes_per_second", {209e6, 210e6, 211e6}}});
  EXPECT_EQ(compare_results(base, next, {}).regressions(), 1u);
  for (int i = 0; i < 5; ++i) {
    const std::string name = std::string(kColdSeq) + "/n:" + std::to_string(i);
    add_case(&base, name, {{"bytes_per_second", {100e6, 140e6, 180e6}}});
    add_case(&next, name, {{"bytes_per_second", {180e6, 100e6, 140e6}}});
  }
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_NEAR(m.typical_cv, 0.2857, 0.001);
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_EQ(c.regressions(), 0u);
}

// ---- several runs of BASE: the spread between runs ------------------------------------------

// What two unchanged runs showed on a quiet host: a warm case's p99 113.4 -> 133.6 us, five
// tight repetitions a side, p 0.008: "+17.8% REGRESSION". Two more runs of BASE had shown their
// p99 moving 113 -> 125 us between themselves: the change is within three times that, noisy,
// and the figure is named. A 25% throughput drop beyond the runs' own spread is still caught.
TEST(ComparisonTest, ATailWithinTheRunToRunSpreadOfBaseIsNoisyADropBeyondItARegression) {
  ResultDocument base1, base2, next;
  add_case(&base1, kSeq, {{"lat_p99_us", around(113.4, 5)}, {"bytes_per_second", around(3.29e9, 5)}});
  add_case(&base2, kSeq, {{"lat_p99_us", around(125.0, 5)}, {"bytes_per_second", around(3.20e9, 5)}});
  add_case(&next, kSeq, {{"lat_p99_us", around(133.6, 5)}, {"bytes_per_second", around(2.40e9, 5)}});
  // One run of BASE: both changes are regressions, as the gate said before.
  Comparison one = compare_results(base1, next, {});
  EXPECT_EQ(metric_of(one, kSeq, "lat_p99_us").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(one, kSeq, "bytes_per_second").verdict, Verdict::kRegression);

  Comparison c = compare_results({&base1, &base2}, next, {}, {"b1.json", "b2.json"}, "new.json");
  const MetricComparison& tail = metric_of(c, kSeq, "lat_p99_us");
  EXPECT_EQ(tail.base_values.size(), 10u);  // both runs' repetitions, judged together
  ASSERT_EQ(tail.base_run_medians.size(), 2u);
  EXPECT_NEAR(tail.run_spread, 125.0 / 113.4 - 1, 0.01);
  EXPECT_EQ(tail.verdict, Verdict::kNoisy);
  EXPECT_NE(tail.why_noisy.find("run to run: the 2 BASE runs' medians differ by up to x1.10"),
            std::string::npos)
      << tail.why_noisy;
  // 3.29 and 3.20 GB/s: a spread of 2.8%, so up to x1.09; a 26% drop is far beyond it.
  const MetricComparison& rate = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(rate.verdict, Verdict::kRegression) << rate.why_noisy;
  EXPECT_NEAR(rate.noise_band, std::pow(3.29 / 3.20, kRunSpreadFactor) - 1, 0.01);
  EXPECT_EQ(c.regressions(), 1u);
  EXPECT_EQ(c.base_files, (std::vector<std::string>{"b1.json", "b2.json"}));
  EXPECT_EQ(c.base_file, "b1.json");
}

// The same case in a run of BASE that moved a third (a memory-bound warm case between two
// runs, its repetitions agreeing within each): NEW a third below the faster run is noisy. A
// case only one run of BASE measured has no run-to-run spread and is judged as before.
TEST(ComparisonTest, AWarmCaseThatMovedAThirdBetweenBaseRunsIsNoisyThere) {
  ResultDocument base1, base2, next;
  add_case(&base1, kSeq, {{"bytes_per_second", around(3.29e9, 5)}});
  add_case(&base2, kSeq, {{"bytes_per_second", around(2.60e9, 5)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(2.19e9, 5)}});
  add_case(&base1, kColdSeq, {{"bytes_per_second", around(700e6, 5)}});
  add_case(&next, kColdSeq, {{"bytes_per_second", around(520e6, 5)}});
  Comparison c = compare_results({&base1, &base2}, next, {}, {"b1.json", "b2.json"}, "new.json");
  EXPECT_EQ(metric_of(c, kSeq, "bytes_per_second").verdict, Verdict::kNoisy);
  const MetricComparison& cold = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_EQ(cold.base_run_medians.size(), 1u);
  EXPECT_EQ(cold.run_spread, 0);
  EXPECT_EQ(cold.verdict, Verdict::kRegression);
  EXPECT_EQ(c.exit_code(false), 1);
}

// A later run of BASE from another config is named: its spread would not be the config's.
TEST(ComparisonTest, ABaseRunFromAnotherConfigIsWarnedAbout) {
  ResultDocument base1, base2, next;
  for (ResultDocument* d : {&base1, &base2, &next}) add_case(d, kSeq, {{"bytes_per_second", around(1e9, 5)}});
  base1.config["sha256"] = next.config["sha256"] = "aaa";
  base2.config["sha256"] = "bbb";
  Comparison c = compare_results({&base1, &base2}, next, {}, {"b1.json", "b2.json"}, "new.json");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0].rfind("BASE run 2 (b2.json) against BASE run 1: config sha256 differs", 0), 0u)
      << c.warnings[0];
}

// ---- other programs' share of the cores ----------------------------------------------------

void set_other_programs(ResultDocument* d, double before, double after, double cores, double other) {
  set_load(d, before, after, cores);
  d->environment["host"]["load"]["other_programs_cores"] = other;
}

constexpr const char* kJob = "job/train.py";

// The journey's watched pair: another program at 94-181% CPU during "after", AU 0.85 -> 0.555
// on one measurement a side: "au -34.7% REGRESSION (weak)", exit 1. Other programs took 1.3 of
// 2 cores after, 0.1 before: a CPU-bound job may lose up to that share, so noisy, exit 0,
// with the shares named. The load average alone (it counts the job itself too) did not say.
TEST(ComparisonTest, AWatchedJobSlowerWhileOtherProgramsTookTheCoresIsNoisy) {
  ResultDocument base, next;
  add_case(&base, kJob, {{"au", {0.85}}});
  add_case(&next, kJob, {{"au", {0.555}}});
  set_load(&base, 1.9, 2.0, 2);
  set_load(&next, 2.0, 2.1, 2);
  Comparison before = compare_results(base, next, {});
  EXPECT_EQ(metric_of(before, kJob, "au").verdict, Verdict::kRegression);  // what diff said

  set_other_programs(&base, 1.9, 2.0, 2, 0.1);
  set_other_programs(&next, 2.0, 2.1, 2, 1.3);
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kJob, "au");
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_NE(m.why_noisy.find("other programs took 0.1 of 2 cores BASE, 1.3 NEW"), std::string::npos)
      << m.why_noisy;
  EXPECT_NEAR(m.noise_band, (1 - 0.05) / (1 - 0.65) - 1, 1e-9);
  EXPECT_TRUE(c.base_load.other_known && c.new_load.other_known);
  EXPECT_NEAR(c.new_load.other_share(), 0.65, 1e-9);
  EXPECT_EQ(c.exit_code(false), 0);
}

// The busier side being better is no excuse, a small difference in the share explains only a
// small change, and a cold read (waiting on the device) is not CPU-bound: regressions all.
TEST(ComparisonTest, OtherProgramsExplainOnlyWhatTheirShareCan) {
  ResultDocument base, next;
  add_case(&base, kJob, {{"au", around(0.85, 5)}});
  add_case(&next, kJob, {{"au", around(0.60, 5)}});
  add_case(&base, kColdSeq, {{"bytes_per_second", around(700e6, 5)}});
  add_case(&next, kColdSeq, {{"bytes_per_second", around(420e6, 5)}});
  set_other_programs(&base, 1.0, 1.0, 2, 1.2);  // BASE was the busier: NEW's drop is unexplained
  set_other_programs(&next, 1.0, 1.0, 2, 0.1);
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kJob, "au").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(c, kColdSeq, "bytes_per_second").verdict, Verdict::kRegression);
  set_other_programs(&base, 1.0, 1.0, 2, 0.1);
  set_other_programs(&next, 1.0, 1.0, 2, 0.3);  // up to x1.11: not a 29% drop
  c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kJob, "au").verdict, Verdict::kRegression);
  set_other_programs(&next, 1.0, 1.0, 2, 1.8);  // the job's AU: noisy; the cold read: not
  c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kJob, "au").verdict, Verdict::kNoisy);
  EXPECT_EQ(metric_of(c, kColdSeq, "bytes_per_second").verdict, Verdict::kRegression);
}

// A file from before other_programs_cores was recorded: only the load average counts.
TEST(ComparisonTest, WithoutOtherProgramsOnOneSideOnlyTheLoadAverageCounts) {
  ResultDocument base, next;
  add_case(&base, kJob, {{"au", around(0.85, 5)}});
  add_case(&next, kJob, {{"au", around(0.60, 5)}});
  set_load(&base, 1.0, 1.0, 2);
  set_other_programs(&next, 1.0, 1.0, 2, 1.8);
  Comparison c = compare_results(base, next, {});
  EXPECT_FALSE(c.base_load.other_known);
  EXPECT_TRUE(c.new_load.other_known);
  EXPECT_EQ(metric_of(c, kJob, "au").verdict, Verdict::kRegression);
}

// Measured on a host at load 10: 9 repetitions per side whose rounds spread by 65% (CV), and
// a block size 4x smaller: -94%, p < 0.001. A spread in percent cannot explain a factor of 18.
TEST(ComparisonTest, AWideSpreadDoesNotHideAChangeByALargeFactor) {
  ResultDocument base, next;
  std::vector<double> b, n;
  for (int i = 0; i < 9; ++i) {
    b.push_back(i % 2 ? 0.5e9 : 2.0e9);
    n.push_back(i % 2 ? 0.03e9 : 0.11e9);
  }
  add_case(&base, kColdSeq, {{"bytes_per_second", b}});
  add_case(&next, kColdSeq, {{"bytes_per_second", n}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_GT(m.base_cv, 0.55);
  EXPECT_LT(m.change, -0.9);
  EXPECT_EQ(m.verdict, Verdict::kRegression);
}

// ---- the gate's blind spots: one outlier repetition, the same high load on both sides -------

constexpr double kMiB = 1048576;

std::vector<double> mib(std::initializer_list<double> values) {
  std::vector<double> v;
  for (double x : values) v.push_back(x * kMiB);
  return v;
}

// Seen in the field: one baseline repetition at half the others' rate made a clean 25% drop
// "unchanged" (p 0.15: 19.0 ranks below every NEW value). Set aside, the drop is a regression.
TEST(ComparisonTest, OneOutlierRepetitionInBaseDoesNotHideAClean25PercentDrop) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", mib({39.7, 41.7, 37.7, 19.0, 39.8})}});
  add_case(&next, kColdSeq, {{"bytes_per_second", mib({30.1, 29.8, 30.3, 29.9, 30.0})}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_EQ(m.verdict, Verdict::kRegression) << m.why_noisy;
  EXPECT_FALSE(m.weak);               // 4 vs 5 can still reach alpha
  EXPECT_NEAR(m.p, 2.0 / 126, 1e-9);  // complete separation of 4 and 5
  EXPECT_NEAR(m.change, 30.0 / 39.75 - 1, 1e-9);
  EXPECT_EQ(m.base_values, mib({39.7, 41.7, 37.7, 39.8}));
  ASSERT_EQ(m.base_set_aside.size(), 1u);
  EXPECT_EQ(m.base_set_aside[0].repetition_index, 3);
  EXPECT_EQ(m.base_set_aside[0].metric, "bytes_per_second");
  EXPECT_EQ(m.base_set_aside[0].case_name, kColdSeq);
  EXPECT_DOUBLE_EQ(m.base_set_aside[0].value, 19.0 * kMiB);
  EXPECT_DOUBLE_EQ(m.base_set_aside[0].median, 39.7 * kMiB);
  EXPECT_TRUE(m.new_set_aside.empty());
  EXPECT_EQ(c.exit_code(false), 1);
  // The raw verdicts set it aside too: the rule is about which values are judged, not noise.
  CompareOptions raw;
  raw.noise_rule = false;
  EXPECT_EQ(compare_results(base, next, raw).regressions(), 1u);
  // What a run records and warns about when it writes BASE.
  const std::vector<OutlierRepetition> recorded = outlier_repetitions(base);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].case_name, kColdSeq);
  EXPECT_EQ(recorded[0].repetition_index, 3);
  EXPECT_TRUE(outlier_repetitions(next).empty());
}

// The other side: a drop carried by one wild NEW repetition is set aside, not a regression.
TEST(ComparisonTest, OneOutlierRepetitionInNewIsSetAsideToo) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", mib({40.1, 39.8, 40.3, 39.9, 40.0})}});
  add_case(&next, kColdSeq, {{"bytes_per_second", mib({40.2, 39.7, 10.0, 40.1, 39.9})}});
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_EQ(m.verdict, Verdict::kUnchanged);
  ASSERT_EQ(m.new_set_aside.size(), 1u);
  EXPECT_EQ(m.new_set_aside[0].repetition_index, 2);
  EXPECT_TRUE(m.base_set_aside.empty());
}

// Seen on a real run: a p99 of 3.8 us among repetitions at 5.0 us is many MADs away, but 1.2 us
// is below lat_p99_us's floor of 5 us, a change diff does not judge: not an outlier either.
TEST(ComparisonTest, AStepBelowTheMetricsFloorIsNoOutlier) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"lat_p99_us", {5.0, 4.9, 5.1, 5.0, 3.8}}});
  add_case(&next, kColdSeq, {{"lat_p99_us", {100, 101, 99, 100, 180}}});
  const Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "lat_p99_us");
  EXPECT_TRUE(m.base_set_aside.empty());
  ASSERT_EQ(m.new_set_aside.size(), 1u);
  EXPECT_EQ(m.new_set_aside[0].repetition_index, 4);
}

// Fewer than four repetitions: nothing is set aside, however wild.
TEST(ComparisonTest, BelowFourRepetitionsNothingIsSetAside) {
  ResultDocument base, next;
  add_case(&base, kColdSeq, {{"bytes_per_second", mib({40, 41, 10})}});
  add_case(&next, kColdSeq, {{"bytes_per_second", mib({40, 41, 39})}});
  const Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kColdSeq, "bytes_per_second");
  EXPECT_TRUE(m.base_set_aside.empty());
  EXPECT_EQ(m.base_values.size(), 3u);
  EXPECT_TRUE(outlier_repetitions(base).empty());
}

TEST(ComparisonTest, LoadsDifferBeyondTenPercentOfTheLarger) {
  HostLoad a, b;
  a.known = b.known = true;
  a.cores = b.cores = 2;
  a.before = a.after = 10.0;  // 5.0 per core
  b.before = b.after = 9.2;   // 4.6: within 10% of 5.0
  EXPECT_FALSE(loads_differ(a, b));
  b.before = b.after = 8.8;  // 4.4
  EXPECT_TRUE(loads_differ(a, b));
  a.before = a.after = 0.2;  // 0.1 and 0.2 per core: within the 0.1 floor of a near-idle host
  b.before = b.after = 0.4;
  EXPECT_FALSE(loads_differ(a, b));
  b.known = false;
  EXPECT_FALSE(loads_differ(a, b));
}

// Seen on a loaded host: both runs at about 5 runnable tasks per core, a page-cached case 25%
// slower with p < 0.001, called noisy because "the host was oversubscribed". The same load on
// both sides cannot explain a difference between them: a regression.
TEST(ComparisonTest, EqualHighLoadsOnBothSidesDoNotMakeASignificantDropNoisy) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(800 * kMiB, 9)}, {"lat_p99_us", around(100, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(600 * kMiB, 9)}, {"lat_p99_us", around(150, 9)}});
  set_load(&base, 10.0, 10.1, 2);  // 5.03 per core
  set_load(&next, 10.1, 9.9, 2);   // 5.00
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_LT(m.p, 0.001);
  EXPECT_EQ(m.verdict, Verdict::kRegression) << m.why_noisy;
  EXPECT_LT(m.noise_band, 0.05);  // the spread's band only
  // A tail on the same oversubscribed host: with a test to go on, a regression too.
  EXPECT_EQ(metric_of(c, kSeq, "lat_p99_us").verdict, Verdict::kRegression);
  EXPECT_EQ(c.noisy(), 0u);
  EXPECT_EQ(c.exit_code(false), 1);
}

// Loads that differ between the runs (5.03 and 1.05 per core) may still explain the drop of a
// case served from memory, and a tail on the oversubscribed host, as before.
TEST(ComparisonTest, LoadsThatDifferStillMakeAWarmCasesDropNoisy) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(800 * kMiB, 9)}, {"lat_p99_us", around(100, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(600 * kMiB, 9)}, {"lat_p99_us", around(150, 9)}});
  set_load(&base, 10.0, 10.1, 2);
  set_load(&next, 2.0, 2.2, 2);
  Comparison c = compare_results(base, next, {});
  const MetricComparison& m = metric_of(c, kSeq, "bytes_per_second");
  EXPECT_EQ(m.verdict, Verdict::kNoisy);
  EXPECT_NE(m.why_noisy.find("host load (load per core 5.03 BASE, 1.05 NEW)"), std::string::npos)
      << m.why_noisy;
  EXPECT_NEAR(m.noise_band, 5.025 - 1, 1e-9);  // a factor L, the oversubscribed side's load per core
  const MetricComparison& tail = metric_of(c, kSeq, "lat_p99_us");
  EXPECT_EQ(tail.verdict, Verdict::kNoisy);
  EXPECT_NE(tail.why_noisy.find("oversubscribed"), std::string::npos) << tail.why_noisy;
  EXPECT_EQ(c.exit_code(false), 0);
}

// ---- per-family defaults and floors ---------------------------------------------------------

// A loader case fed smaller files reads fewer bytes per second while AU improves: the loader
// gates on AU and its wait p99, not on bytes_per_second, which follows demand.
TEST(ComparisonTest, TheLoaderGatesOnAuAndWaitP99NotOnBytesPerSecond) {
  ResultDocument base, next;
  add_case(&base, kLoader,
           {{"bytes_per_second", around(100e6, 9)},
            {"samples_per_second", around(700, 9)},
            {"au", around(0.95, 9, 0.001)},
            {"wait_p99_ms", around(3.0, 9)},
            {"stall_fraction", around(0.05, 9)}});
  add_case(&next, kLoader,
           {{"bytes_per_second", around(60e6, 9)},
            {"samples_per_second", around(700, 9)},
            {"au", around(0.98, 9, 0.001)},
            {"wait_p99_ms", around(2.9, 9)},
            {"stall_fraction", around(0.02, 9)}});
  Comparison c = compare_results(base, next, {});
  const CaseComparison& k = case_of(c, kLoader);
  std::vector<std::string> judged;
  for (const MetricComparison& m : k.metrics) judged.push_back(m.metric);
  EXPECT_EQ(judged, (std::vector<std::string>{"au", "wait_p99_ms"}));
  EXPECT_EQ(metric_of(c, kLoader, "au").verdict, Verdict::kUnchanged);  // +3.2%: below 5%
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(c.exit_code(false), 0);
}

TEST(ComparisonTest, AnAuDropOfTenPointsIsALoaderRegression) {
  ResultDocument base, next;
  add_case(&base, kLoader, {{"au", around(0.95, 9, 0.002)}, {"wait_p99_ms", around(3.0, 9)}});
  add_case(&next, kLoader, {{"au", around(0.85, 9, 0.002)}, {"wait_p99_ms", around(9.0, 9)}});
  Comparison c = compare_results(base, next, {});
  EXPECT_EQ(metric_of(c, kLoader, "au").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(c, kLoader, "wait_p99_ms").verdict, Verdict::kRegression);
  EXPECT_EQ(c.exit_code(false), 1);
}

// A loader run with fewer measured steps than it needs to judge records its figures, but its
// AU says nothing yet: diff must not call a change of it a regression (or an improvement) and
// fail a CI gate on it, whichever side was short; the case is listed as not judged, with why.
TEST(ComparisonTest, ALoaderCaseWithTooFewStepsIsNotJudged) {
  for (const bool base_short : {true, false}) {
    ResultDocument base, next;
    add_case(&base, kLoader, {{"au", around(0.95, 9, 0.002)}, {"wait_p99_ms", around(3.0, 9)}});
    add_case(&next, kLoader, {{"au", around(0.75, 9, 0.002)}, {"wait_p99_ms", around(9.0, 9)}});
    add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
    add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 9)}});
    for (BenchmarkEntry& e : (base_short ? base : next).benchmarks)
      if (e.case_name == kLoader && e.run_type == "iteration")
        e.extra = {{"judged", false}, {"measured_steps_first_epoch", 3}, {"min_measured_steps", 10}};
    Comparison c = compare_results(base, next, {});
    const CaseComparison& k = c.cases.front();
    ASSERT_EQ(k.identity, kLoader);
    EXPECT_EQ(k.status, CaseStatus::kTooFewSteps);
    EXPECT_TRUE(k.metrics.empty());
    EXPECT_EQ(k.note, std::string(base_short ? "BASE" : "NEW") +
                          " measured 3 steps per trainer, 10 needed to judge its figures (raise steps)");
    EXPECT_EQ(c.regressions(), 0u);
    EXPECT_EQ(c.compared(), 1u) << "only the file_read case";
    EXPECT_EQ(c.exit_code(false), 0);
    for (const GeomeanSummary& g : c.geomeans) EXPECT_NE(g.metric, "au") << "a short run's AU is no ratio";
  }
}

// 0.001 -> 0.013 is "+1200%" and 1.2 points: below the stall fraction's floor of 2 points.
// Wait times below 1 ms and p99 latencies within 5 us are not judged either.
TEST(ComparisonTest, ChangesBelowAMetricsFloorAreNotJudged) {
  ResultDocument base, next;
  add_case(&base, kLoader, {{"stall_fraction", around(0.001, 9)}, {"wait_p99_ms", around(0.2, 9)}});
  add_case(&next, kLoader, {{"stall_fraction", around(0.013, 9)}, {"wait_p99_ms", around(0.6, 9)}});
  add_case(&base, kRand, {{"lat_p99_us", around(2.0, 9)}});
  add_case(&next, kRand, {{"lat_p99_us", around(4.0, 9)}});
  CompareOptions o;
  o.metrics = {"stall_fraction", "wait_p99_ms", "lat_p99_us"};
  Comparison c = compare_results(base, next, o);
  const MetricComparison& stall = metric_of(c, kLoader, "stall_fraction");
  EXPECT_GT(stall.change, 10);
  EXPECT_LT(stall.p, 0.001);
  EXPECT_TRUE(stall.below_floor);
  EXPECT_EQ(stall.verdict, Verdict::kUnchanged);
  EXPECT_EQ(metric_of(c, kLoader, "wait_p99_ms").verdict, Verdict::kUnchanged);
  EXPECT_EQ(metric_of(c, kRand, "lat_p99_us").verdict, Verdict::kUnchanged);
  EXPECT_EQ(c.regressions(), 0u);
  // Beyond the floor the same metric is judged: 0.01 -> 0.10 is 9 points.
  ResultDocument worse;
  add_case(&worse, kLoader, {{"stall_fraction", around(0.10, 9)}, {"wait_p99_ms", around(0.2, 9)}});
  add_case(&worse, kRand, {{"lat_p99_us", around(40.0, 9)}});
  c = compare_results(base, worse, o);
  EXPECT_EQ(metric_of(c, kLoader, "stall_fraction").verdict, Verdict::kRegression);
  EXPECT_EQ(metric_of(c, kRand, "lat_p99_us").verdict, Verdict::kRegression);
}

// file_read gates on throughput and p99 latency: the count of reads follows the block size.
TEST(ComparisonTest, FileReadGatesOnThroughputAndP99Latency) {
  ResultDocument base, next;
  add_case(&base, kRand,
           {{"bytes_per_second", around(4e8, 9)},
            {"items_per_second", around(1e5, 9)},
            {"lat_p99_us", around(100, 9)},
            {"lat_p50_us", around(50, 9)}});
  add_case(&next, kRand,
           {{"bytes_per_second", around(4e8, 9)},
            {"items_per_second", around(0.5e5, 9)},
            {"lat_p99_us", around(100, 9)},
            {"lat_p50_us", around(90, 9)}});
  Comparison c = compare_results(base, next, {});
  std::vector<std::string> judged;
  for (const MetricComparison& m : case_of(c, kRand).metrics) judged.push_back(m.metric);
  EXPECT_EQ(judged, (std::vector<std::string>{"bytes_per_second", "lat_p99_us"}));
  EXPECT_EQ(c.exit_code(false), 0);
  for (const CounterInfo* m : judged_metrics())  // every gating metric has a direction and a row
    for (const std::string& family : m->gates)
      EXPECT_TRUE(family == "file_read" || family == "loader" || family == "stage" || family == "job" ||
                  family == "replay" || family == "checkpoint")
          << m->name;
}

// ---- choosing cases -------------------------------------------------------------------------

TEST(ComparisonTest, IncludeAndExcludeChooseCasesByName) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(0.5e9, 9)}});  // regressed
  add_case(&base, kColdSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kColdSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&base, kRand, {{"bytes_per_second", around(1e9, 9)}});  // missing in NEW
  CompareOptions o;
  o.exclude = {"state:warm"};
  Comparison c = compare_results(base, next, o);
  EXPECT_EQ(c.compared(), 1u);
  EXPECT_EQ(c.excluded_cases, 2u);
  EXPECT_EQ(c.exit_code(false), 0);
  o = {};
  o.include = {"pattern:sequential"};
  c = compare_results(base, next, o);
  EXPECT_EQ(c.compared(), 2u);
  EXPECT_EQ(c.regressions(), 1u);
  EXPECT_EQ(c.missing(), 0u);
  o.exclude = {"warm"};  // exclude wins over include
  EXPECT_EQ(compare_results(base, next, o).regressions(), 0u);
  o = {};
  o.include = {"no such case"};
  EXPECT_THROW(compare_results(base, next, o), InputError);
}

TEST(ComparisonTest, ABadIncludeOrExcludeExpressionIsBadInputNamingTheOption) {
  ResultDocument base;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  for (const char* option : {"--include", "--exclude"}) {
    CompareOptions o;
    (std::string(option) == "--include" ? o.include : o.exclude) = {"state:(warm"};
    try {
      compare_results(base, base, o);
      ADD_FAILURE() << "expected InputError for " << option;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(option) + " state:(warm"), std::string::npos)
          << e.what();
    }
  }
}

// A confirmation re-run of the flagged case replaces NEW's repetitions of it, and only it.
TEST(ComparisonTest, AConfirmationReRunReplacesTheCasesItMeasured) {
  ResultDocument base, next, rerun;
  add_case(&base, kColdSeq, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&base, kRand, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&next, kColdSeq, {{"bytes_per_second", around(0.8e9, 3)}});  // a fluke
  add_case(&next, kRand, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&rerun, kColdSeq, {{"bytes_per_second", around(1.01e9, 3)}});
  EXPECT_EQ(compare_results(base, next, {}).regressions(), 1u);
  std::vector<std::string> replaced;
  ResultDocument confirmed = replace_cases(next, rerun, {}, &replaced);
  EXPECT_EQ(replaced, (std::vector<std::string>{kColdSeq}));
  Comparison c = compare_results(base, confirmed, {});
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(c.compared(), 2u);
  EXPECT_NEAR(metric_of(c, kColdSeq, "bytes_per_second").new_median, 1.01e9, 1e7);
  ResultDocument unrelated;
  add_case(&unrelated, kLoader, {{"au", {0.9}}});
  EXPECT_THROW(replace_cases(next, unrelated, {}, &replaced), InputError);
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
  EXPECT_EQ(metric_of(compare_results(base, next, {}), kRand, "lat_p99_us").verdict, Verdict::kImprovement);
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

// A metric that gates the case in BASE and that NEW lacks (removed from the file, or null,
// which is how a NaN is written) is no pass: nothing measured is not a success, for a metric
// as for a case. The case is missing, named with the metric and NEW's file.
TEST(ComparisonTest, AGatedMetricThatNewLacksIsMissing) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&base, kRand, {{"bytes_per_second", around(1e8, 9)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 9)}});
  add_case(&next, kRand, {{"items_per_second", around(1e5, 9)}});  // no bytes_per_second
  Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  const CaseComparison& k = case_of(c, kRand);
  EXPECT_TRUE(k.missing());
  EXPECT_EQ(k.status, CaseStatus::kNotMeasured);
  EXPECT_EQ(k.missing_metrics, (std::vector<std::string>{"bytes_per_second"}));
  EXPECT_NE(k.note.find("bytes_per_second missing in NEW (new.json)"), std::string::npos) << k.note;
  EXPECT_EQ(c.missing(), 1u);
  EXPECT_EQ(c.exit_code(false), 1);
  EXPECT_EQ(c.exit_code(true), 1);
  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(compare_results(base, next, allow).exit_code(false), 0);
}

// One gated metric missing (NEW run without latency) does not stop the others being judged:
// a throughput drop is still a regression, and the missing p99 is still named.
TEST(ComparisonTest, AMissingGatedMetricLeavesTheOthersJudged) {
  ResultDocument base, next;
  add_case(&base, kRand, {{"bytes_per_second", around(1e8, 9)}, {"lat_p99_us", around(100, 9)}});
  add_case(&next, kRand, {{"bytes_per_second", around(0.7e8, 9)}});
  Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  const CaseComparison& k = case_of(c, kRand);
  EXPECT_EQ(k.status, CaseStatus::kCompared);
  EXPECT_EQ(metric_of(c, kRand, "bytes_per_second").verdict, Verdict::kRegression);
  EXPECT_EQ(k.missing_metrics, (std::vector<std::string>{"lat_p99_us"}));
  EXPECT_TRUE(k.missing());
  EXPECT_NE(k.note.find("lat_p99_us missing in NEW (new.json)"), std::string::npos) << k.note;
  // Without the drop, the missing p99 alone fails the diff unless it is allowed.
  ResultDocument same = next;
  for (BenchmarkEntry& e : same.benchmarks) e.counters["bytes_per_second"] = 1e8;
  EXPECT_EQ(compare_results(base, same, {}).exit_code(false), 1);
  CompareOptions allow;
  allow.allow_missing = true;
  EXPECT_EQ(compare_results(base, same, allow).exit_code(false), 0);
}

// Some repetitions of NEW without the metric: judged on the rest, and the gap named, since
// the repetition that lacks it may be the one that would have shown the change.
TEST(ComparisonTest, AGatedMetricMissingInSomeRepetitionsOfNewIsNamed) {
  ResultDocument base, next;
  add_case(&base, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  add_case(&next, kSeq, {{"bytes_per_second", around(1e9, 3)}});
  next.benchmarks[1].counters.erase("bytes_per_second");
  Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  const CaseComparison& k = case_of(c, kSeq);
  EXPECT_EQ(k.status, CaseStatus::kCompared);
  EXPECT_EQ(metric_of(c, kSeq, "bytes_per_second").new_values.size(), 2u);
  EXPECT_TRUE(k.missing());
  EXPECT_NE(k.note.find("bytes_per_second missing in 1 of 3 repetitions of NEW (new.json)"),
            std::string::npos)
      << k.note;
  EXPECT_EQ(c.exit_code(false), 1);
}

// The other side: a gated metric only NEW has has no baseline. Not judged, not a failure,
// but said, so a reader does not take the case as judged on it.
TEST(ComparisonTest, AGatedMetricOnlyNewHasIsNotedNotJudged) {
  ResultDocument base, next;
  add_case(&base, kRand, {{"bytes_per_second", around(1e8, 9)}});
  add_case(&next, kRand, {{"bytes_per_second", around(1e8, 9)}, {"lat_p99_us", around(100, 9)}});
  Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  const CaseComparison& k = case_of(c, kRand);
  EXPECT_EQ(k.status, CaseStatus::kCompared);
  EXPECT_FALSE(k.missing());
  ASSERT_EQ(k.metrics.size(), 1u);
  EXPECT_NE(k.note.find("lat_p99_us not in BASE (base.json): not judged"), std::string::npos) << k.note;
  EXPECT_EQ(c.exit_code(false), 0);
}

// Second family: the loader's AU missing in NEW fails the same way.
TEST(ComparisonTest, TheLoadersAuMissingInNewIsMissing) {
  ResultDocument base, next;
  add_case(&base, kLoader, {{"au", around(0.95, 9, 0.002)}, {"wait_p99_ms", around(3.0, 9)}});
  add_case(&next, kLoader, {{"wait_p99_ms", around(3.0, 9)}});
  Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  const CaseComparison& k = case_of(c, kLoader);
  EXPECT_EQ(k.missing_metrics, (std::vector<std::string>{"au"}));
  EXPECT_EQ(c.exit_code(false), 1);
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
