// The estimator: costs from sizes and rates, the budget fit against hand-worked totals, and a
// probe on real files.
#include "feedbench/plan/estimator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "feedbench/base/units.h"
#include "feedbench/dataset/jpeg.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;

Case file_read_case(const std::string& state, int reps = 3) {
  Case c = make_case("file_read", {{"pattern", "sequential"},
                                   {"block_size", 1 << 20},
                                   {"engine", "psync"},
                                   {"queue_depth", 1},
                                   {"workers", 1},
                                   {"cache_state", state},
                                   {"path", "source"}});
  c.repetitions = reps;
  return c;
}

FileSet sized(std::uint64_t files, std::uint64_t each) {
  FileSet f("/data");
  for (std::uint64_t i = 0; i < files; ++i) f.add("f" + std::to_string(i), each, 0);
  f.sort();
  return f;
}

PathRate rates(double cold, double cached) {
  PathRate r;
  r.cold_bytes_per_second = cold;
  r.cached_bytes_per_second = cached;
  return r;
}

TEST(EstimatorTest, FileReadRoundsAtTheProbedRatesWithLimitsApplied) {
  const FileSet files = sized(100, 10'000'000);  // 1 GB
  const PathRate r = rates(100e6, 1e9);
  CaseCost cold = estimate_case(file_read_case("cold"), files, r);
  EXPECT_DOUBLE_EQ(cold.round_s, 10.0);
  EXPECT_NEAR(cold.prepare_s, 100 * 50e-6, 1e-12);
  EXPECT_TRUE(cold.time_cappable);
  CaseCost warm = estimate_case(file_read_case("warm"), files, r);
  EXPECT_DOUBLE_EQ(warm.round_s, 1.0);
  EXPECT_DOUBLE_EQ(warm.prepare_once_s, 10.0) << "the first warming reads from storage";
  Case limited = file_read_case("cold");
  limited.set("runtime", "2s");
  limited.set("ramp_time", "500ms");
  CaseCost l = estimate_case(limited, files, r);
  EXPECT_DOUBLE_EQ(l.round_s, 2.5);
  EXPECT_DOUBLE_EQ(l.ramp_s, 0.5);
  Case capped = file_read_case("cold");
  capped.set("max_bytes", 100'000'000);
  EXPECT_DOUBLE_EQ(estimate_case(capped, files, r).round_s, 1.0);
  // Random small reads cost at least the probe's random read each.
  Case random = file_read_case("cold");
  random.set("pattern", "random");
  random.set("block_size", 4096);
  PathRate seeky = r;
  seeky.random_read_s = 1e-4;
  EXPECT_NEAR(estimate_case(random, files, seeky).round_s, std::ceil(1e9 / 4096) * 1e-4, 1e-9);
  random.set("runtime", "5s");
  EXPECT_DOUBLE_EQ(estimate_case(random, files, seeky).round_s, 5.0) << "priced at its runtime";
  // 3 x (0.005 + 10 + 0.05)
  EXPECT_NEAR(total_seconds({cold}), 3 * (0.005 + 10 + kRepetitionOverheadS), 1e-9);
}

TEST(EstimatorTest, LoaderRoundsPriceTheTransformsCpu) {
  // 64 samples of 128 KiB on 1 worker, a step of 1 us: the reads (at 1 TB/s) and the steps
  // cost nothing; the transform is the round.
  const FileSet files = sized(64, 128 << 10);
  const PathRate r = rates(1e12, 1e12);
  auto loader = [](const std::string& transform) {
    return make_case("loader", {{"batch_size", 8},
                                {"workers", 1},
                                {"prefetch", 2},
                                {"step_time", "1us"},
                                {"transform", transform},
                                {"samples", "files"},
                                {"epochs", 1},
                                {"steps", 0},
                                {"warmup_steps", 1},
                                {"accelerators", 1},
                                {"target_au", 0.9},
                                {"engine", "psync"},
                                {"cache_state", "cold"},
                                {"path", "source"}});
  };
  const double none = estimate_case(loader("none"), files, r).round_s;
  EXPECT_LT(none, 1e-3);
  EXPECT_NEAR(estimate_case(loader("5ms/sample"), files, r).round_s, 64 * 5e-3, 1e-9);
  EXPECT_NEAR(estimate_case(loader("8ms/MiB"), files, r).round_s, 64 * 8e-3 / 8, 1e-9);
  // A decode at what this CPU takes per byte of JPEG: no longer priced as no transform.
  const double per_byte = decode_seconds_per_byte(0, false);
  EXPECT_GT(per_byte, 1e-10) << "a decode costs something";
  EXPECT_LT(per_byte, 1e-6) << "well under a microsecond a byte";
  const double decode = estimate_case(loader("decode"), files, r).round_s;
  EXPECT_NEAR(decode, 64 * (128 << 10) * per_byte, 1e-9);
  EXPECT_GT(decode, 100 * none);
  EXPECT_NEAR(estimate_case(loader("random_resized_crop:224"), files, r).round_s,
              64 * (128 << 10) * decode_seconds_per_byte(224, true), 1e-9);
}

CaseCost cost(int reps, double round, bool cappable = true, double prepare = 0) {
  CaseCost c;
  c.repetitions = reps;
  c.round_s = round;
  c.time_cappable = cappable;
  c.prepare_s = prepare;
  return c;
}

TEST(EstimatorTest, BudgetKeepsAPlanThatFits) {
  BudgetFit fit = fit_budget({cost(5, 10), cost(5, 2)}, 100);
  ASSERT_TRUE(fit.fits);
  EXPECT_NEAR(fit.estimated_s, 5 * 10.05 + 5 * 2.05, 1e-9);
  EXPECT_EQ(fit.choices[0].repetitions, 5);
  EXPECT_EQ(fit.choices[0].runtime_ns, 0);
}

TEST(EstimatorTest, BudgetLowersRepetitionsFirst) {
  // 4 reps: 4 x 12.1 = 48.4 fits 50; 5 reps (60.5) does not.
  BudgetFit fit = fit_budget({cost(5, 10), cost(5, 2)}, 50);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.choices[0].repetitions, 4);
  EXPECT_EQ(fit.choices[1].repetitions, 4);
  EXPECT_EQ(fit.choices[0].runtime_ns, 0);
}

TEST(EstimatorTest, BudgetThenCapsFileReadRuntimesInWholeSeconds) {
  // At 3 reps: 3 x (min(30, T) + 0.05) + 3 x (5 + 0.05) loader-like, uncappable.
  // Budget 40: 3T + 0.15 + 15.15 <= 40 -> T <= 8.23 -> 8s.
  BudgetFit fit = fit_budget({cost(5, 30), cost(3, 5, false)}, 40);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.choices[0].repetitions, 3);
  EXPECT_EQ(fit.choices[0].runtime_ns, 8'000'000'000);
  EXPECT_EQ(fit.choices[1].runtime_ns, 0) << "only file_read rounds are cut";
  EXPECT_NEAR(fit.estimated_s, 3 * 8.05 + 3 * 5.05, 1e-9);
  EXPECT_LE(fit.estimated_s, 40);
}

TEST(EstimatorTest, BudgetNeverCutsARoundBelowItsSteadyStateWindow) {
  CaseCost ss = cost(3, 30);
  ss.min_runtime_s = 5;
  BudgetFit fit = fit_budget({ss, cost(3, 30)}, 3 * 5.05 + 3 * 2.05);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.choices[0].runtime_ns, 5'000'000'000);
  EXPECT_EQ(fit.choices[1].runtime_ns, 2'000'000'000);
}

TEST(EstimatorTest, BudgetRefusesBelowTheMinimumAndSaysIt) {
  // Minimum: 3 reps of a 1s round, and the uncappable 3 x 5s.
  BudgetFit fit = fit_budget({cost(5, 30), cost(3, 5, false)}, 10);
  EXPECT_FALSE(fit.fits);
  EXPECT_NEAR(fit.minimum_s, 3 * 1.05 + 3 * 5.05, 1e-9);
  EXPECT_TRUE(fit.choices.empty());
  // A config asking for fewer than three repetitions keeps its own.
  BudgetFit one = fit_budget({cost(1, 30)}, 5);
  ASSERT_TRUE(one.fits);
  EXPECT_EQ(one.choices[0].repetitions, 1);
  EXPECT_EQ(one.choices[0].runtime_ns, 4'000'000'000);
}

TEST(EstimatorTest, EstimatesReadLikePeopleWriteThem) {
  EXPECT_EQ(format_estimate(12.34), "12.3s");
  EXPECT_EQ(format_estimate(245), "4m05s");
  EXPECT_EQ(format_estimate(3720), "1h02m");
}

TEST(EstimatorTest, ProbeReadsASampleTwiceAndNamesTheRates) {
  testing::TempDir dir;
  FileSet files(dir.path());
  for (int i = 0; i < 20; ++i) {
    const std::string rel = "f" + std::to_string(i) + ".bin";
    testing::write_file(dir / rel, std::string(300'000, char('a' + i)));
    files.add(rel, 300'000, 0);
  }
  files.sort();
  PathRate r = probe_read_rate(files);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.probe_bytes, 20u * 300'000) << "up to 64 files spread over the selection";
  EXPECT_GT(r.cold_bytes_per_second, 0);
  EXPECT_GE(r.cached_bytes_per_second, 0);
  EXPECT_NE(r.how.find("of 20 files"), std::string::npos) << r.how;
  EXPECT_GT(r.random_read_s, 0) << "random 4 KiB reads were timed";
}

}  // namespace
}  // namespace feedbench
