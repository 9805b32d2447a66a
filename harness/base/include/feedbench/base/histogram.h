// Log-linear latency histogram (HdrHistogram's layout): 128 linear sub-buckets per power of
// two, so any recorded value is known within 1% (0.8% worst case). Fixed size, no allocation
// when recording; mergeable across workers and across result files. Two JSON forms: bins as
// [lower, upper, count] (readable) and a compact one (what result files hold, as HdrHistogram's
// own log format holds its histograms: compressed, base64).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace feedbench {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets
  static constexpr int kBuckets = 64 - kSubBucketBits + 1;
  static constexpr int kCounts = kBuckets << kSubBucketBits;

  Histogram();

  void record(std::uint64_t value) {
    ++counts_[index_of(value)];
    ++total_;
    if (value > max_) max_ = value;
    if (value < min_) min_ = value;
  }
  void merge(const Histogram& other);
  void reset();

  std::uint64_t count() const { return total_; }
  std::uint64_t max() const { return total_ ? max_ : 0; }
  std::uint64_t min() const { return total_ ? min_ : 0; }
  double mean() const;
  // REQUIRES: 0 <= q <= 1. RETURNS: the value at quantile q (midpoint of its bin, clamped to
  // [min, max]); 0 when empty.
  double quantile(double q) const;

  // Serialised as {"unit":..., "count":N, "min":..., "max":..., "sub_bucket_bits":7,
  //   "bins":[[lower, upper, count], ...]} with only non-empty bins.
  nlohmann::json to_json(const char* unit = "ns") const;
  // Throws InputError (naming `where`) on a malformed object.
  static Histogram from_json(const nlohmann::json& j, const std::string& where);

  // The same histogram in a few hundred bytes, as result files store it:
  //   {"unit":..., "count":N, "min":..., "max":..., "sub_bucket_bits":7,
  //    "encoding":"zlib-varint-runs", "runs":"<base64>"}
  // `runs` is base64 (RFC 4648) of zlib (RFC 1950) of unsigned LEB128 varints: for each run of
  // consecutive non-empty bins, in index order, the empty bins skipped before it, its length,
  // then one count per bin. Bin i is [lower_bound_of(i), upper_bound_of(i)).
  nlohmann::json to_compact_json(const char* unit = "ns") const;
  // REQUIRES: `j` from to_compact_json. Throws InputError (naming `where` and the member) on
  // malformed base64 or zlib data, a run past the last bin, an empty bin, or counts that do
  // not add up to `count`.
  static Histogram from_compact_json(const nlohmann::json& j, const std::string& where);

  // Inline: record() runs once per read in the runner's hot path.
  static int index_of(std::uint64_t value) {
    constexpr std::uint64_t kSub = 1u << kSubBucketBits;
    if (value < kSub) return int(value);  // bucket 0: [0, 128), width 1
    // Bucket b >= 1 covers [2^(b+6), 2^(b+7)) in 128 sub-buckets of width 2^(b-1).
    const int msb = 63 - std::countl_zero(value);
    const int bucket = msb - kSubBucketBits + 1;
    const int sub = int(value >> (bucket - 1)) - int(kSub);
    return (bucket << kSubBucketBits) + sub;
  }
  static std::uint64_t lower_bound_of(int index);
  static std::uint64_t upper_bound_of(int index);  // exclusive

 private:
  // The checks and totals both readers end with: the bins' `sum` must equal `count`, min <= max.
  // `fail` makes the InputError naming the field.
  template <class Fail>
  void set_totals(std::uint64_t sum, std::uint64_t count, std::uint64_t min, std::uint64_t max,
                  const Fail& fail);

  std::vector<std::uint64_t> counts_;  // kCounts
  std::uint64_t total_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
};

}  // namespace feedbench
