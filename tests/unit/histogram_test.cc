// Histogram: layout, accuracy within 1% against exact quantiles, merge, JSON round trip.
#include "feedbench/base/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

// Nearest-rank quantile of sorted data: the definition Histogram::quantile approximates.
double exact_quantile(const std::vector<std::uint64_t>& sorted, double q) {
  std::size_t rank = std::size_t(std::ceil(q * double(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return double(sorted[rank - 1]);
}

void expect_quantiles_within_1_percent(std::vector<std::uint64_t> values) {
  Histogram h;
  for (auto v : values) h.record(v);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const double want = exact_quantile(values, q);
    EXPECT_NEAR(h.quantile(q), want, want * 0.01) << "q " << q;
  }
  double sum = 0;
  for (auto v : values) sum += double(v);
  EXPECT_NEAR(h.mean(), sum / double(values.size()), sum / double(values.size()) * 0.01);
}

TEST(HistogramTest, BinsTileTheRangeWithinOnePercent) {
  for (int i = 0; i + 1 < Histogram::kCounts; ++i) {
    ASSERT_EQ(Histogram::upper_bound_of(i), Histogram::lower_bound_of(i + 1)) << i;
    const auto lo = Histogram::lower_bound_of(i);
    ASSERT_EQ(Histogram::index_of(lo), i);
    ASSERT_EQ(Histogram::index_of(Histogram::upper_bound_of(i) - 1), i);
    const double width = double(Histogram::upper_bound_of(i) - lo);
    if (width > 1) {  // width-1 bins are exact
      ASSERT_LE(width / double(lo), 1.0 / 128 + 1e-12) << i;
    }
  }
  EXPECT_EQ(Histogram::index_of(UINT64_MAX), Histogram::kCounts - 1);
  EXPECT_EQ(Histogram::index_of(0), 0);
  EXPECT_EQ(Histogram::index_of(255), 255);  // exact below 256
}

TEST(HistogramTest, QuantilesOfUniformDataWithinOnePercent) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::uint64_t> d(1000, 5'000'000);
  std::vector<std::uint64_t> v(200000);
  for (auto& x : v) x = d(rng);
  expect_quantiles_within_1_percent(std::move(v));
}

TEST(HistogramTest, QuantilesOfLognormalDataWithinOnePercent) {
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> d(std::log(50000.0), 1.5);  // ~50 us, long tail
  std::vector<std::uint64_t> v(200000);
  for (auto& x : v) x = std::uint64_t(d(rng)) + 1;
  expect_quantiles_within_1_percent(std::move(v));
}

TEST(HistogramTest, SmallAndSingleValuesAreExact) {
  Histogram h;
  EXPECT_EQ(h.quantile(0.5), 0);
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.min(), 0u);
  h.record(123456789);
  EXPECT_EQ(h.quantile(0.5), 123456789.0);  // clamped to [min, max]
  Histogram small;
  for (std::uint64_t v = 0; v < 200; ++v) small.record(v);
  EXPECT_EQ(small.quantile(0.5), 99.0);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(10, 2);
  Histogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    auto v = std::uint64_t(d(rng));
    (i % 3 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.to_json(), all.to_json());
  a.reset();
  EXPECT_EQ(a.count(), 0u);
  EXPECT_EQ(a.to_json()["bins"].size(), 0u);
}

TEST(HistogramTest, JsonRoundTripKeepsOnlyNonEmptyBins) {
  Histogram h;
  for (std::uint64_t v : {5u, 5u, 1000u, 123456u, 99999999u}) h.record(v);
  const auto j = h.to_json("ns");
  EXPECT_EQ(j["unit"], "ns");
  EXPECT_EQ(j["count"], 5);
  EXPECT_EQ(j["sub_bucket_bits"], 7);
  EXPECT_EQ(j["bins"].size(), 4u);
  EXPECT_EQ(j["bins"][0], nlohmann::json::array({5, 6, 2}));
  Histogram back = Histogram::from_json(nlohmann::json::parse(j.dump()), "r.json");
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.quantile(0.99), h.quantile(0.99));
  Histogram empty = Histogram::from_json(Histogram().to_json(), "r.json");
  EXPECT_EQ(empty.count(), 0u);
}

TEST(HistogramTest, MalformedJsonIsInputErrorNamingThePlace) {
  Histogram h;
  h.record(1000);
  h.record(2000);
  auto expect_error = [](const nlohmann::json& j, const std::string& fragment) {
    try {
      Histogram::from_json(j, "results.json#/benchmarks/0/latency");
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("results.json#/benchmarks/0/latency"), std::string::npos) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
    }
  };
  auto good = h.to_json();
  expect_error(nlohmann::json::array(), "expected a histogram object");
  auto j = good;
  j.erase("bins");
  expect_error(j, "/bins");
  j = good;
  j["bins"][1] = {1, 2};
  expect_error(j, "/bins/1");
  j = good;
  j["bins"][0][0] = 1001;
  expect_error(j, "not a bin");
  j = good;
  j["count"] = 3;
  expect_error(j, "/count");
  j = good;
  j["count"] = "two";
  expect_error(j, "/count");
  j = good;
  j["sub_bucket_bits"] = 5;
  expect_error(j, "/sub_bucket_bits");
}

// Result files hold histograms compactly; reading one back gives every bin, min and max.
TEST(HistogramTest, CompactJsonRoundTripIsExactAndSmall) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> spread(std::log(200e3), 0.45);
  Histogram h;
  for (int i = 0; i < 4000; ++i) h.record(std::uint64_t(spread(rng)));
  for (std::uint64_t v : {0u, 1u, 127u, 128u}) h.record(v);  // the exact bins at the bottom
  h.record(UINT64_MAX);                                      // and the very last bin
  const nlohmann::json compact = h.to_compact_json("ns");
  EXPECT_EQ(compact["encoding"], "zlib-varint-runs");
  EXPECT_EQ(compact["count"], 4005);
  Histogram back = Histogram::from_compact_json(nlohmann::json::parse(compact.dump()), "r.json");
  EXPECT_EQ(back.to_json(), h.to_json());
  EXPECT_EQ(back.min(), 0u);
  EXPECT_EQ(back.max(), UINT64_MAX);
  // A few hundred non-empty bins in a fifth of the bytes of [lower, upper, count] triples.
  const std::size_t bins = h.to_json()["bins"].size();
  EXPECT_GT(bins, 300u);
  EXPECT_LT(compact.dump().size() * 5, h.to_json().dump().size())
      << compact.dump().size() << " vs " << h.to_json().dump().size();
  Histogram empty = Histogram::from_compact_json(Histogram().to_compact_json(), "r.json");
  EXPECT_EQ(empty.count(), 0u);
}

TEST(HistogramTest, MalformedCompactJsonIsInputErrorNamingThePlace) {
  Histogram h;
  h.record(1000);
  h.record(1001);
  h.record(5000);
  auto expect_error = [](const nlohmann::json& j, const std::string& fragment) {
    try {
      Histogram::from_compact_json(j, "results.json#/benchmarks/0/latency_hist");
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("results.json#/benchmarks/0/latency_hist"), std::string::npos) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
    }
  };
  const nlohmann::json good = h.to_compact_json();
  expect_error(nlohmann::json::array(), "expected a histogram object");
  for (const char* key : {"runs", "count", "min", "max", "encoding", "sub_bucket_bits"}) {
    auto j = good;
    j.erase(key);
    expect_error(j, std::string("/") + key);
  }
  auto j = good;
  j["runs"] = "not base64!";
  expect_error(j, "/runs: not base64");
  j["runs"] = "AAAA";  // base64, but not zlib
  expect_error(j, "/runs: not zlib");
  j = good;
  j["count"] = 4;
  expect_error(j, "/count: 4 does not equal the sum of the bins (3)");
  j = good;
  j["encoding"] = "gzip";
  expect_error(j, "/encoding");
  j = Histogram().to_compact_json();
  j["runs"] = "eJxj+F/PCAAEAAGA";  // zlib of the varints gap 0, length 16383, count 1
  expect_error(j, "/runs: a run past the last bin");
}

}  // namespace
}  // namespace feedbench
