// Reference p-values come from enumerating every split of the pooled sample (exact) and from
// the textbook normal approximation with tie and continuity correction.
#include <gtest/gtest.h>

#include "feedbench/base/statistics.h"

namespace feedbench {
namespace {

TEST(StatisticsTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
}

TEST(StatisticsTest, QuantileOfSortedIsTheNearestOrderStatistic) {
  const std::vector<std::uint64_t> one{7};
  EXPECT_EQ(quantile_of_sorted(one, 0.0), 7u);
  EXPECT_EQ(quantile_of_sorted(one, 1.0), 7u);
  // 11 values: q * 10 is the index; 0.99 * 10 = 9.9 rounds to the last, 0.04 * 10 to the first.
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i <= 10; ++i) v.push_back(100 + i * i);
  EXPECT_EQ(quantile_of_sorted(v, 0.0), 100u);
  EXPECT_EQ(quantile_of_sorted(v, 0.04), 100u);
  EXPECT_EQ(quantile_of_sorted(v, 0.5), 125u);
  EXPECT_EQ(quantile_of_sorted(v, 0.9), 181u);
  EXPECT_EQ(quantile_of_sorted(v, 0.99), 200u);
  EXPECT_EQ(quantile_of_sorted(v, 1.0), 200u);
  // Sizes above 2^32 come back whole.
  const std::vector<std::uint64_t> big{1ull << 40, 3ull << 40};
  EXPECT_EQ(quantile_of_sorted(big, 1.0), 3ull << 40);
}

TEST(StatisticsTest, MedianAbsoluteDeviation) {
  // Median 39.7; deviations 0, 2.0, 2.0, 20.7, 0.1: their median is 2.0.
  EXPECT_NEAR(median_absolute_deviation({39.7, 41.7, 37.7, 19.0, 39.8}), 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(median_absolute_deviation({5, 5, 5, 9}), 0);
  EXPECT_DOUBLE_EQ(median_absolute_deviation({3}), 0);
}

// The baseline repetitions that hid a 25% drop: one of five at half the others' rate.
TEST(StatisticsTest, OneWildRepetitionIsAnOutlier) {
  EXPECT_EQ(outlier_indices({39.7, 41.7, 37.7, 19.0, 39.8}), std::vector<std::size_t>{3});
  // Its fence: 3.5 x 1.4826 x MAD 2.0 = 10.4 from the median 39.7; 29.4 is just outside.
  EXPECT_EQ(outlier_indices({39.7, 41.7, 37.7, 29.2, 39.8}), std::vector<std::size_t>{3});
  EXPECT_TRUE(outlier_indices({39.7, 41.7, 37.7, 29.4, 39.8}).empty());
  EXPECT_TRUE(outlier_indices({30.1, 29.8, 30.3, 29.9, 30.0}).empty());
  // Either side of the median.
  EXPECT_EQ(outlier_indices({100, 101, 99, 100, 180}), std::vector<std::size_t>{4});
}

// A deviation below the caller's minimum (a metric's floor) is no outlier, however many MADs.
TEST(StatisticsTest, AnOutlierMustDeviateByTheMinimumGiven) {
  const std::vector<double> p99{5.0, 4.9, 5.1, 5.0, 3.8};
  EXPECT_EQ(outlier_indices(p99), std::vector<std::size_t>{4});
  EXPECT_TRUE(outlier_indices(p99, 5.0).empty());
  EXPECT_EQ(outlier_indices({100, 101, 99, 100, 180}, 5.0), std::vector<std::size_t>{4});
}

TEST(StatisticsTest, TooFewValuesHaveNoOutliers) {
  EXPECT_TRUE(outlier_indices({10, 10, 50}).empty());
  EXPECT_EQ(outlier_indices({10, 10, 10, 50}), std::vector<std::size_t>{3});
  EXPECT_TRUE(outlier_indices({}).empty());
}

// Identical values (MAD 0): a step smaller than 10% of the median is no outlier.
TEST(StatisticsTest, ASmallStepAmongIdenticalValuesIsNoOutlier) {
  EXPECT_TRUE(outlier_indices({200, 200, 200, 200, 210}).empty());
  EXPECT_EQ(outlier_indices({200, 200, 200, 200, 230}), std::vector<std::size_t>{4});
  EXPECT_TRUE(outlier_indices({0, 0, 0, 0}).empty());
}

// Two modes are a spread, not outliers: more than a quarter beyond the fence sets none aside,
// even where the larger mode holds the median and the MAD is 0.
TEST(StatisticsTest, TwoModesAreNoOutliers) {
  EXPECT_TRUE(outlier_indices({10, 10, 50, 50}).empty());
  EXPECT_TRUE(outlier_indices({0.5e9, 2e9, 0.5e9, 2e9, 0.5e9, 2e9}).empty());
  EXPECT_TRUE(outlier_indices({2e9, 0.5e9, 2e9, 0.5e9, 2e9, 0.5e9, 2e9, 0.5e9, 2e9}).empty());
  EXPECT_TRUE(outlier_indices({10, 10, 10, 50, 60}).empty());
  // Two of eight is a quarter: both set aside.
  EXPECT_EQ(outlier_indices({10, 10, 10, 10, 10, 10, 50, 60}), (std::vector<std::size_t>{6, 7}));
}

TEST(StatisticsTest, GeometricMean) {
  EXPECT_NEAR(geometric_mean({2, 8}), 4, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2, 1}), 1, 1e-12);
}

TEST(StatisticsTest, ExactTestMatchesEnumeration) {
  MannWhitneyResult r = mann_whitney_u({1, 2, 3, 4, 5}, {3.5, 6, 7, 8, 9, 10});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2);
  EXPECT_NEAR(r.p, 0.017316017316017316, 1e-12);

  r = mann_whitney_u({10, 12, 15, 11, 14, 13, 9}, {8, 7.5, 16, 6, 5, 4, 3.3, 2});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 49);
  EXPECT_NEAR(r.p, 0.013986013986013986, 1e-12);
}

TEST(StatisticsTest, ExactTestIsSymmetricInItsArguments) {
  MannWhitneyResult ab = mann_whitney_u({1, 2, 3, 4, 5}, {3.5, 6, 7, 8, 9, 10});
  MannWhitneyResult ba = mann_whitney_u({3.5, 6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(ba.u, 28);
  EXPECT_NEAR(ab.p, ba.p, 1e-15);
}

TEST(StatisticsTest, CompleteSeparationGivesTheMinimumP) {
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p, 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).p, 2.0 / 70, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(4, 4), 2.0 / 70, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(2, 2), 1.0 / 3, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(9, 9), 2.0 / 48620, 1e-15);
  EXPECT_DOUBLE_EQ(mann_whitney_min_p(1, 1), 1);
}

TEST(StatisticsTest, IdenticalSamplesAreNotSignificant) {
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {1.5, 2.5, 3.5}).p, 0.7, 1e-12);  // interleaved
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 4}, {2, 3}).p, 1);                  // U at its mean
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5, 5}).p, 1);            // all tied
}

TEST(StatisticsTest, TiesUseTheNormalApproximationWithTieCorrection) {
  MannWhitneyResult r = mann_whitney_u({1, 2, 2, 3, 4, 4, 5}, {3, 4, 5, 5, 6, 7, 7, 8});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 6.5);
  EXPECT_NEAR(r.p, 0.014107907274540643, 1e-12);
}

TEST(StatisticsTest, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 20.5);
  }
  MannWhitneyResult r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 780);
  EXPECT_NEAR(r.p, 8.747567722893554e-08, 1e-15);
}

TEST(StatisticsTest, RepetitionsToReachAlpha) {
  EXPECT_EQ(repetitions_to_reach(0.05), 4u);  // 2/70 = 0.029; 3 per side gives only 0.1
  EXPECT_EQ(repetitions_to_reach(0.01), 5u);  // 2/252 = 0.0079
  EXPECT_EQ(repetitions_to_reach(0.5), 2u);   // 1/3
}

// Two-sample Kolmogorov-Smirnov statistics worked by hand: D = max |F_a(x) - F_b(x)| over the
// pooled values, each function stepping past all copies of a tied value.
TEST(StatisticsTest, KolmogorovSmirnovKnownValues) {
  // At x = 3: F_a = 4/7, F_b = 1/9 (only the 2), so D = 29/63.
  EXPECT_NEAR(ks_statistic({1, 2, 2, 3, 7, 9, 11}, {2, 4, 4, 5, 6, 8, 10, 12, 15}), 29.0 / 63.0, 1e-12);
  // Ties across samples: at x = 1, F_a = 1/3 and F_b = 2/4; at x = 3, 1 against 1/2.
  EXPECT_NEAR(ks_statistic({1, 2, 3}, {1, 1, 4, 5}), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(ks_statistic({5, 5, 7}, {7, 5, 5}), 0);            // same multiset
  EXPECT_DOUBLE_EQ(ks_statistic({1, 2}, {3, 4}), 1);                  // disjoint
  EXPECT_NEAR(ks_statistic({1, 2, 3, 4}, {3, 4, 5, 6}), 0.5, 1e-12);  // symmetric in its arguments
  EXPECT_NEAR(ks_statistic({3, 4, 5, 6}, {1, 2, 3, 4}), 0.5, 1e-12);
}

}  // namespace
}  // namespace feedbench
