// Medians, the Mann-Whitney U test, geometric means and the outlier rule for `feedbench diff`.
#include "feedbench/base/statistics.h"

#include <algorithm>
#include <cmath>

#include "feedbench/base/error.h"

namespace feedbench {

double median(std::vector<double> values) {
  FB_CHECK(!values.empty(), "median of no values");
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double median_absolute_deviation(const std::vector<double>& values) {
  const double m = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - m));
  return median(std::move(deviations));
}

std::vector<std::size_t> outlier_indices(const std::vector<double>& values, double min_deviation) {
  std::vector<std::size_t> out;
  if (values.size() < kOutlierMinValues) return out;
  const double m = median(values);
  const double fence = std::max({kOutlierScaledMads * 1.4826 * median_absolute_deviation(values),
                                 kOutlierMinDeviation * std::fabs(m), min_deviation});
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::fabs(values[i] - m) > fence) out.push_back(i);
  if (double(out.size()) > kOutlierMaxFraction * double(values.size())) out.clear();  // a mode, not outliers
  return out;
}

std::uint64_t quantile_of_sorted(std::span<const std::uint64_t> sorted, double q) {
  FB_CHECK(!sorted.empty() && q >= 0 && q <= 1, "quantile_of_sorted needs values and 0 <= q <= 1");
  return sorted[std::size_t(std::llround(q * double(sorted.size() - 1)))];
}

double geometric_mean(const std::vector<double>& values) {
  FB_CHECK(!values.empty(), "geometric mean of no values");
  double sum = 0;
  for (double v : values) {
    FB_CHECK(v > 0, "geometric mean of a non-positive value");
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

namespace {

// Counts of the exact null distribution of U for samples of m and n: the coefficients of the
// Gaussian binomial [m+n choose m](q) = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Multiplying
// and dividing in pairs keeps every intermediate a Gaussian binomial, so the counts stay
// non-negative and the low (tail) coefficients exact in doubles.
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  std::size_t top = m * n;
  std::vector<double> c(top + 1, 0.0);
  c[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    std::size_t up = n + i;
    for (std::size_t j = top; j >= up; --j) c[j] -= c[j - up];  // * (1 - q^(n+i))
    for (std::size_t j = i; j <= top; ++j) c[j] += c[j - i];    // / (1 - q^i)
  }
  return c;
}

}  // namespace

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  FB_CHECK(!a.empty() && !b.empty(), "Mann-Whitney U test of an empty sample");
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;

  // Mid-ranks of the pooled sample, and the tie groups for the variance correction.
  struct Value {
    double v;
    bool first;
  };
  std::vector<Value> pooled;
  pooled.reserve(n);
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const Value& x, const Value& y) { return x.v < y.v; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].v == pooled[i].v) ++j;
    double t = static_cast<double>(j - i);
    double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].first) rank_sum_a += mid_rank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }

  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  MannWhitneyResult r;
  r.u = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double mean_u = dn1 * dn2 / 2;

  if (!ties && n1 < 50 && n2 < 50) {
    r.exact = true;
    std::vector<double> counts = u_counts(n1, n2);
    double total = 0;
    for (double c : counts) total += c;
    // U is an integer here (no ties); the distribution is symmetric about n1*n2/2.
    auto u = static_cast<std::size_t>(std::llround(r.u));
    std::size_t low = std::min(u, n1 * n2 - u);
    double tail = 0;
    for (std::size_t k = 0; k <= low; ++k) tail += counts[k];
    r.p = std::min(1.0, 2 * tail / total);
    return r;
  }

  r.exact = false;
  const double dn = static_cast<double>(n);
  double variance = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (variance <= 0) {  // every value tied: no evidence of a difference
    r.p = 1;
    return r;
  }
  double diff = std::fabs(r.u - mean_u);
  double z = std::max(0.0, diff - 0.5) / std::sqrt(variance);  // continuity correction
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

double mann_whitney_min_p(std::size_t n1, std::size_t n2) {
  // C(n1+n2, n1) in doubles: exact enough for the comparison with alpha it serves.
  double combinations = 1;
  for (std::size_t i = 1; i <= std::min(n1, n2); ++i)
    combinations =
        combinations * static_cast<double>(n1 + n2 - std::min(n1, n2) + i) / static_cast<double>(i);
  return std::min(1.0, 2 / combinations);
}

std::size_t repetitions_to_reach(double alpha) {
  FB_CHECK(alpha > 0 && alpha < 1, "alpha outside (0, 1)");
  std::size_t n = 1;
  while (mann_whitney_min_p(n, n) > alpha) ++n;
  return n;
}

double ks_statistic(std::vector<std::uint64_t> a, std::vector<std::uint64_t> b) {
  FB_CHECK(!a.empty() && !b.empty(), "ks_statistic needs two non-empty samples");
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double na = double(a.size()), nb = double(b.size());
  double d = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    // Step past every copy of the smaller value in both samples, then compare.
    const std::uint64_t x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    d = std::max(d, std::fabs(double(i) / na - double(j) / nb));
  }
  return d;
}

}  // namespace feedbench
