// Statistics the diff tool judges with: medians of repetitions, the two-sided Mann-Whitney U
// test over per-repetition values, the geometric mean of ratios, and the outlier rule. No
// distributional assumption: I/O timings are skewed and have outliers, so ranks, not means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace feedbench {

// REQUIRES: `values` non-empty. RETURNS: the median (mean of the middle two for an even count).
double median(std::vector<double> values);

// REQUIRES: `values` non-empty. RETURNS: the median absolute deviation from the median, unscaled
// (times 1.4826 it estimates a normal sample's standard deviation).
double median_absolute_deviation(const std::vector<double>& values);

// The outlier rule: a value farther from the median of its sample than kOutlierScaledMads
// scaled MADs (1.4826 x MAD: Iglewicz and Hoaglin's modified z-score above 3.5), and farther
// than kOutlierMinDeviation of the median, in a sample of at least kOutlierMinValues. The MAD
// ignores up to half the sample, so one wild repetition cannot widen its own fence as it
// widens a standard deviation; the relative floor keeps a sample of near-identical values
// (MAD 0, as histogram percentiles often are) from calling a small step an outlier. An outlier
// is rare: when more than kOutlierMaxFraction of the sample lies beyond the fence, those values
// are a second mode (a spread, which the noise rule weighs), and none is an outlier.
inline constexpr double kOutlierScaledMads = 3.5;
inline constexpr double kOutlierMinDeviation = 0.10;
inline constexpr std::size_t kOutlierMinValues = 4;
inline constexpr double kOutlierMaxFraction = 0.25;

// RETURNS: the indices into `values` of its outliers by the rule above and farther than
// `min_deviation` from the median (a metric's floor: a step too small to judge is no outlier
// either), ascending; none for fewer than kOutlierMinValues values, and none when more than a
// quarter of them (rounded down: one of 4 to 7, two of 8 to 11) lie beyond the fence.
std::vector<std::size_t> outlier_indices(const std::vector<double>& values, double min_deviation = 0);

// The quantile q of sorted values as the order statistic nearest to q * (n - 1): no
// interpolation, so the answer is one of the values (a file size that exists).
// REQUIRES: `sorted` non-empty and ascending, 0 <= q <= 1. RETURNS: sorted[round(q * (n - 1))].
std::uint64_t quantile_of_sorted(std::span<const std::uint64_t> sorted, double q);

// REQUIRES: `values` non-empty, every value > 0. RETURNS: exp(mean(log(values))).
double geometric_mean(const std::vector<double>& values);

struct MannWhitneyResult {
  double u = 0;       // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double p = 1;       // two-sided p-value
  bool exact = true;  // exact null distribution (small samples, no ties) or normal approximation
};

// Two-sided Mann-Whitney U test of `a` against `b`. Exact for samples of fewer than 50 values
// each without ties (as R's wilcox.test); otherwise the normal approximation with tie and
// continuity correction. When every value is tied, p = 1.
// REQUIRES: both samples non-empty.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// RETURNS: the smallest two-sided p-value the exact test can give for samples of n1 and n2
// values (complete separation): 2 / C(n1 + n2, n1), at most 1.
double mann_whitney_min_p(std::size_t n1, std::size_t n2);

// REQUIRES: 0 < alpha < 1. RETURNS: the smallest n such that n repetitions per side let the
// test reach `alpha` (mann_whitney_min_p(n, n) <= alpha): 4 for alpha = 0.05.
std::size_t repetitions_to_reach(double alpha);

// The two-sample Kolmogorov-Smirnov statistic: the largest distance between the empirical
// distribution functions of `a` and `b`, sup over x of |F_a(x) - F_b(x)|, in [0, 1]. Ties are
// exact: both functions step at a value shared by the two samples before they are compared.
// REQUIRES: both samples non-empty.
double ks_statistic(std::vector<std::uint64_t> a, std::vector<std::uint64_t> b);

}  // namespace feedbench
