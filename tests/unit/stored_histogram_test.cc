// StoredHistogram: a result entry's latency held in its compact form, decoded when read.
#include "feedbench/results/stored_histogram.h"

#include <gtest/gtest.h>

#include <random>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

Histogram spread_histogram() {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> lat(std::log(200e3), 0.6);
  Histogram h;
  for (int i = 0; i < 20000; ++i) h.record(std::uint64_t(lat(rng)));
  return h;
}

TEST(StoredHistogramTest, ReadsAsTheHistogramItWasMadeFrom) {
  const Histogram h = spread_histogram();
  StoredHistogram s = h;
  ASSERT_TRUE(s);
  EXPECT_TRUE(s.has_value());
  EXPECT_EQ((*s).to_json(), h.to_json());
  EXPECT_EQ(s->count(), h.count());
  EXPECT_EQ(s->quantile(0.99), h.quantile(0.99));
  const std::optional<Histogram> back = s;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_json(), h.to_json());
  // What a file stores is what the histogram writes.
  EXPECT_EQ(s.compact_json(), h.to_compact_json("ns"));
  s.reset();
  EXPECT_FALSE(s);
  EXPECT_FALSE(std::optional<Histogram>(s));
  EXPECT_FALSE(StoredHistogram(std::optional<Histogram>()));
}

// Held compact: a few hundred bytes of text, where a decoded histogram is 58 KiB of bins.
TEST(StoredHistogramTest, HoldsTheCompactFormNotTheBins) {
  const Histogram h = spread_histogram();
  const StoredHistogram s = StoredHistogram::from_compact_json(h.to_compact_json("ns"), "r.json");
  EXPECT_EQ((*s).to_json(), h.to_json());
  EXPECT_LT(s.compact_json().dump().size(), 4096u);
  EXPECT_EQ(sizeof(std::uint64_t) * Histogram::kCounts, 59392u);
}

// A compact form that does not decode is refused when it is read, naming its place: never
// later, when a reporter first decodes it.
TEST(StoredHistogramTest, AFormThatDoesNotDecodeIsRefusedWhenRead) {
  nlohmann::json bad = spread_histogram().to_compact_json("ns");
  bad["count"] = 3;
  try {
    StoredHistogram::from_compact_json(bad, "r.json: /benchmarks/0/latency_hist");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: /benchmarks/0/latency_hist/count"), std::string::npos)
        << e.what();
  }
  bad = spread_histogram().to_compact_json("ns");
  bad["runs"] = "not base64!";
  EXPECT_THROW(StoredHistogram::from_compact_json(bad, "r.json"), InputError);
}

}  // namespace
}  // namespace feedbench
