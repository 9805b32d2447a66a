// Log-linear histogram: values below 256 are exact; above, each power of two [2^k, 2^(k+1))
// is split into 128 equal sub-buckets, so a bin is at most 1/128 of its lower bound wide.
#include "feedbench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "feedbench/error.h"

namespace feedbench {

Histogram::Histogram() : counts_(kCounts, 0) {}

int Histogram::index_of(std::uint64_t value) {
  constexpr std::uint64_t kSub = 1u << kSubBucketBits;
  if (value < kSub) return int(value);  // bucket 0: [0, 128), width 1
  // Bucket b >= 1 covers [2^(b+6), 2^(b+7)) in 128 sub-buckets of width 2^(b-1).
  const int msb = 63 - std::countl_zero(value);
  const int bucket = msb - kSubBucketBits + 1;
  const int sub = int(value >> (bucket - 1)) - int(kSub);
  return (bucket << kSubBucketBits) + sub;
}

std::uint64_t Histogram::lower_bound_of(int index) {
  const int bucket = index >> kSubBucketBits;
  const std::uint64_t sub = std::uint64_t(index & ((1 << kSubBucketBits) - 1));
  if (bucket == 0) return sub;
  return ((std::uint64_t(1) << kSubBucketBits) + sub) << (bucket - 1);
}

std::uint64_t Histogram::upper_bound_of(int index) {
  const int bucket = index >> kSubBucketBits;
  const std::uint64_t width = bucket == 0 ? 1 : std::uint64_t(1) << (bucket - 1);
  const std::uint64_t lower = lower_bound_of(index);
  // The very last bin ends at 2^64, which does not fit: saturate.
  return lower > UINT64_MAX - width ? UINT64_MAX : lower + width;
}

void Histogram::merge(const Histogram& other) {
  for (int i = 0; i < kCounts; ++i) counts_[std::size_t(i)] += other.counts_[std::size_t(i)];
  total_ += other.total_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

void Histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
  max_ = 0;
  min_ = UINT64_MAX;
}

namespace {

// The representative value of a bin: its middle (exact for width-1 bins), within
// [min, max] so that a single-valued histogram answers exactly.
double bin_value(int index, std::uint64_t min, std::uint64_t max) {
  const double lower = double(Histogram::lower_bound_of(index));
  const double width = double(Histogram::upper_bound_of(index) - Histogram::lower_bound_of(index));
  return std::clamp(lower + (width - 1) / 2, double(min), double(max));
}

// Parsed text gives unsigned numbers, json built in code signed ones: accept both.
bool non_negative_integer(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

}  // namespace

double Histogram::mean() const {
  if (total_ == 0) return 0;
  double sum = 0;
  for (int i = 0; i < kCounts; ++i)
    if (counts_[std::size_t(i)]) sum += double(counts_[std::size_t(i)]) * bin_value(i, min(), max());
  return sum / double(total_);
}

double Histogram::quantile(double q) const {
  if (total_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank: the smallest value with at least q * count values at or below it.
  std::uint64_t rank = std::uint64_t(std::ceil(q * double(total_)));
  rank = std::clamp<std::uint64_t>(rank, 1, total_);
  std::uint64_t seen = 0;
  for (int i = 0; i < kCounts; ++i) {
    seen += counts_[std::size_t(i)];
    if (seen >= rank) return bin_value(i, min(), max());
  }
  return double(max());
}

nlohmann::json Histogram::to_json(const char* unit) const {
  nlohmann::json bins = nlohmann::json::array();
  for (int i = 0; i < kCounts; ++i)
    if (counts_[std::size_t(i)])
      bins.push_back({lower_bound_of(i), upper_bound_of(i), counts_[std::size_t(i)]});
  return {{"unit", unit},           {"count", total_}, {"min", min()},
          {"max", max()},           {"sub_bucket_bits", kSubBucketBits},
          {"bins", std::move(bins)}};
}

Histogram Histogram::from_json(const nlohmann::json& j, const std::string& where) {
  auto fail = [&](const std::string& at, const std::string& what) -> InputError {
    return InputError(where + at + ": " + what);
  };
  if (!j.is_object()) throw fail("", "expected a histogram object");
  auto uint_field = [&](const char* key) -> std::uint64_t {
    auto it = j.find(key);
    if (it == j.end()) throw fail(std::string("/") + key, "missing");
    if (!non_negative_integer(*it))
      throw fail(std::string("/") + key, "expected a non-negative integer");
    return it->get<std::uint64_t>();
  };
  if (auto it = j.find("unit"); it != j.end() && !it->is_string())
    throw fail("/unit", "expected a string");
  if (j.contains("sub_bucket_bits") && uint_field("sub_bucket_bits") != kSubBucketBits)
    throw fail("/sub_bucket_bits", "expected " + std::to_string(kSubBucketBits) +
                                       " (a histogram of another layout)");
  const std::uint64_t count = uint_field("count");
  const std::uint64_t min = uint_field("min");
  const std::uint64_t max = uint_field("max");
  auto bins = j.find("bins");
  if (bins == j.end()) throw fail("/bins", "missing");
  if (!bins->is_array()) throw fail("/bins", "expected an array of [lower, upper, count]");

  Histogram h;
  std::uint64_t sum = 0;
  for (std::size_t b = 0; b < bins->size(); ++b) {
    const auto& bin = (*bins)[b];
    const std::string at = "/bins/" + std::to_string(b);
    if (!bin.is_array() || bin.size() != 3 ||
        !std::all_of(bin.begin(), bin.end(), non_negative_integer))
      throw fail(at, "expected [lower, upper, count] of non-negative integers");
    const auto lower = bin[0].get<std::uint64_t>();
    const auto upper = bin[1].get<std::uint64_t>();
    const auto n = bin[2].get<std::uint64_t>();
    const int index = index_of(lower);
    if (lower_bound_of(index) != lower || upper_bound_of(index) != upper)
      throw fail(at, "[" + std::to_string(lower) + ", " + std::to_string(upper) +
                         ") is not a bin of this layout");
    h.counts_[std::size_t(index)] += n;
    sum += n;
  }
  if (sum != count)
    throw fail("/count", std::to_string(count) + " does not equal the sum of the bins (" +
                             std::to_string(sum) + ")");
  if (count > 0 && min > max) throw fail("/min", "greater than max");
  h.total_ = count;
  h.min_ = count ? min : UINT64_MAX;
  h.max_ = count ? max : 0;
  return h;
}

}  // namespace feedbench
