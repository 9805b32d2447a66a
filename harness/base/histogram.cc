// Log-linear histogram: values below 256 are exact; above, each power of two [2^k, 2^(k+1))
// is split into 128 equal sub-buckets, so a bin is at most 1/128 of its lower bound wide.
#include "feedbench/base/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <string_view>

#include <zlib.h>

#include "feedbench/base/error.h"
#include "feedbench/base/json_limits.h"

namespace feedbench {

Histogram::Histogram() : counts_(kCounts, 0) {}

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

constexpr const char* kCompactEncoding = "zlib-varint-runs";
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// Bounds what a corrupt or hostile `runs` can make the reader inflate: every bin's count as
// the longest varint, plus a gap and a length for each bin.
constexpr std::size_t kMaxRunBytes = std::size_t(Histogram::kCounts) * 30;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  out.push_back(char(v));
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16 |
                            std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 | std::uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kBase64[(v >> shift) & 63]);
  }
  if (i < bytes.size()) {
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out.push_back(kBase64[(v >> 18) & 63]);
    out.push_back(kBase64[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// RETURNS: the decoded bytes, or nullopt for anything but canonical padded base64.
std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=') return std::nullopt;  // "x=y=" is not padding
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : value(text[i + std::size_t(k)]);
      if (d < 0) return std::nullopt;
      v = v << 6 | std::uint32_t(d);
    }
    out.push_back(char(v >> 16));
    if (pad < 2) out.push_back(char(v >> 8 & 0xff));
    if (pad < 1) out.push_back(char(v & 0xff));
  }
  return out;
}

std::string deflate_bytes(const std::string& raw) {
  uLongf size = compressBound(uLong(raw.size()));
  std::string out(size, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                           reinterpret_cast<const Bytef*>(raw.data()), uLong(raw.size()), Z_BEST_COMPRESSION);
  FB_CHECK(rc == Z_OK, "zlib compress2 failed");
  out.resize(size);
  return out;
}

// RETURNS: the inflated bytes, or nullopt for data that is not one whole zlib stream of at
// most `limit` bytes.
std::optional<std::string> inflate_bytes(const std::string& packed, std::size_t limit) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return std::nullopt;
  std::string out(limit + 1, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = uInt(packed.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const std::size_t produced = out.size() - z.avail_out;
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0 && produced <= limit;
  inflateEnd(&z);
  if (!whole) return std::nullopt;
  out.resize(produced);
  return out;
}

// Reads the fields both histogram layouts share, naming `where` and the field on a bad one.
class HistogramFields {
 public:
  // Checks the object, its unit and its bin layout (`sub_bucket_bits`, required or not).
  HistogramFields(const nlohmann::json& j, const std::string& where, bool layout_required)
      : j_(j), where_(where) {
    if (!j.is_object()) throw fail("", "expected a histogram object");
    if (auto it = j.find("unit"); it != j.end() && !it->is_string()) throw fail("/unit", "expected a string");
    if ((layout_required || j.contains("sub_bucket_bits")) &&
        uint_field("sub_bucket_bits") != std::uint64_t(Histogram::kSubBucketBits))
      throw fail("/sub_bucket_bits", "expected " + std::to_string(Histogram::kSubBucketBits) +
                                         " (a histogram of another layout)");
  }
  InputError fail(const std::string& at, const std::string& what) const {
    return InputError(where_ + at + ": " + what);
  }
  std::uint64_t uint_field(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) throw fail(std::string("/") + key, "missing");
    if (!is_non_negative_integer(*it)) throw fail(std::string("/") + key, "expected a non-negative integer");
    return it->get<std::uint64_t>();
  }

 private:
  const nlohmann::json& j_;
  const std::string& where_;
};

}  // namespace

template <class Fail>
void Histogram::set_totals(std::uint64_t sum, std::uint64_t count, std::uint64_t min, std::uint64_t max,
                           const Fail& fail) {
  if (sum != count)
    throw fail("/count",
               std::to_string(count) + " does not equal the sum of the bins (" + std::to_string(sum) + ")");
  if (count > 0 && min > max) throw fail("/min", "greater than max");
  total_ = count;
  min_ = count ? min : UINT64_MAX;
  max_ = count ? max : 0;
}

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
  return {{"unit", unit},
          {"count", total_},
          {"min", min()},
          {"max", max()},
          {"sub_bucket_bits", kSubBucketBits},
          {"bins", std::move(bins)}};
}

nlohmann::json Histogram::to_compact_json(const char* unit) const {
  std::string raw;
  int next = 0;  // the first bin after the previous run
  for (int i = 0; i < kCounts;) {
    if (!counts_[std::size_t(i)]) {
      ++i;
      continue;
    }
    int end = i;
    while (end < kCounts && counts_[std::size_t(end)]) ++end;
    put_varint(raw, std::uint64_t(i - next));
    put_varint(raw, std::uint64_t(end - i));
    for (int k = i; k < end; ++k) put_varint(raw, counts_[std::size_t(k)]);
    next = i = end;
  }
  return {{"unit", unit},
          {"count", total_},
          {"min", min()},
          {"max", max()},
          {"sub_bucket_bits", kSubBucketBits},
          {"encoding", kCompactEncoding},
          {"runs", base64_encode(deflate_bytes(raw))}};
}

Histogram Histogram::from_compact_json(const nlohmann::json& j, const std::string& where) {
  const HistogramFields fields(j, where, /*layout_required=*/true);
  auto fail = [&](const std::string& at, const std::string& what) { return fields.fail(at, what); };
  auto uint_field = [&](const char* key) { return fields.uint_field(key); };
  auto encoding = j.find("encoding");
  if (encoding == j.end() || *encoding != kCompactEncoding)
    throw fail("/encoding", std::string("expected \"") + kCompactEncoding + "\"");
  const std::uint64_t count = uint_field("count");
  const std::uint64_t min = uint_field("min");
  const std::uint64_t max = uint_field("max");
  auto runs = j.find("runs");
  if (runs == j.end()) throw fail("/runs", "missing");
  if (!runs->is_string()) throw fail("/runs", "expected a base64 string");
  std::optional<std::string> packed = base64_decode(runs->get_ref<const std::string&>());
  if (!packed) throw fail("/runs", "not base64");
  std::optional<std::string> raw = inflate_bytes(*packed, kMaxRunBytes);
  if (!raw) throw fail("/runs", "not zlib data of at most " + std::to_string(kMaxRunBytes) + " bytes");

  std::size_t pos = 0;
  auto varint = [&]() -> std::uint64_t {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos == raw->size()) throw fail("/runs", "ends inside a number");
      const auto byte = std::uint8_t((*raw)[pos++]);
      v |= std::uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    throw fail("/runs", "a number longer than 64 bits");
  };
  Histogram h;
  std::uint64_t next = 0, sum = 0;
  while (pos < raw->size()) {
    const std::uint64_t gap = varint(), length = varint();
    if (length == 0) throw fail("/runs", "an empty run");
    if (gap > std::uint64_t(kCounts) - next || length > std::uint64_t(kCounts) - next - gap)
      throw fail("/runs", "a run past the last bin");
    for (std::uint64_t i = next + gap; i < next + gap + length; ++i) {
      const std::uint64_t n = varint();
      if (n == 0) throw fail("/runs", "an empty bin inside a run");
      if (n > UINT64_MAX - sum) throw fail("/runs", "counts past 2^64");
      h.counts_[std::size_t(i)] = n;
      sum += n;
    }
    next += gap + length;
  }
  h.set_totals(sum, count, min, max, fail);
  return h;
}

Histogram Histogram::from_json(const nlohmann::json& j, const std::string& where) {
  const HistogramFields fields(j, where, /*layout_required=*/false);
  auto fail = [&](const std::string& at, const std::string& what) { return fields.fail(at, what); };
  auto uint_field = [&](const char* key) { return fields.uint_field(key); };
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
    if (!bin.is_array() || bin.size() != 3 || !std::all_of(bin.begin(), bin.end(), is_non_negative_integer))
      throw fail(at, "expected [lower, upper, count] of non-negative integers");
    const auto lower = bin[0].get<std::uint64_t>();
    const auto upper = bin[1].get<std::uint64_t>();
    const auto n = bin[2].get<std::uint64_t>();
    const int index = index_of(lower);
    if (lower_bound_of(index) != lower || upper_bound_of(index) != upper)
      throw fail(
          at, "[" + std::to_string(lower) + ", " + std::to_string(upper) + ") is not a bin of this layout");
    if (n > UINT64_MAX - sum) throw fail(at, "counts past 2^64");
    h.counts_[std::size_t(index)] += n;
    sum += n;
  }
  h.set_totals(sum, count, min, max, fail);
  return h;
}

}  // namespace feedbench
