#include "feedbench/base/units.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

constexpr std::string_view kSizeExpected = "a size such as 4KiB, 1MiB or 4096 (bytes)";
constexpr std::string_view kDurationExpected = "a duration such as 50ms, 200us or 1.5s";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad(const std::string& what, std::string_view expected, std::string_view text,
                      std::string_view why = {}) {
  std::string msg = what + ": expected " + std::string(expected) + ", got \"" + std::string(text) + "\"";
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  throw InputError(msg);
}

// A decimal number split so that scaling by a unit stays exact: value = digits / 10^scale.
struct Decimal {
  unsigned __int128 digits = 0;
  int scale = 0;
};

// Consumes "<digits>[.<digits>]" from the front of `s`. RETURNS: nullopt when there is none
// or it is too long to be exact.
std::optional<Decimal> take_decimal(std::string_view& s) {
  Decimal d;
  std::size_t i = 0;
  int int_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    d.digits = d.digits * 10 + static_cast<unsigned>(s[i] - '0');
    ++i;
    if (++int_digits > 19) return std::nullopt;
  }
  if (int_digits == 0) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int frac_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      d.digits = d.digits * 10 + static_cast<unsigned>(s[i] - '0');
      ++i;
      if (++frac_digits > 18) return std::nullopt;
    }
    if (frac_digits == 0) return std::nullopt;
    d.scale = frac_digits;
  }
  s.remove_prefix(i);
  return d;
}

// RETURNS: digits * multiplier / 10^scale when that is a whole number not above `limit`.
std::optional<std::uint64_t> scale_exact(const Decimal& d, std::uint64_t multiplier, std::uint64_t limit,
                                         bool* fractional) {
  unsigned __int128 pow10 = 1;
  for (int i = 0; i < d.scale; ++i) pow10 *= 10;
  unsigned __int128 total = d.digits * multiplier;  // digits < 10^37, multiplier < 2^63: fits
  if (d.digits != 0 && total / d.digits != multiplier) return std::nullopt;
  if (total % pow10 != 0) {
    *fractional = true;
    return std::nullopt;
  }
  total /= pow10;
  if (total > limit) return std::nullopt;
  return static_cast<std::uint64_t>(total);
}

struct Unit {
  std::string_view name;
  std::uint64_t multiplier;
};

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;
constexpr std::array<Unit, 14> kSizeUnits{{
    {"B", 1},
    {"KiB", KiB},
    {"MiB", MiB},
    {"GiB", GiB},
    {"TiB", TiB},
    {"K", KiB},
    {"M", MiB},
    {"G", GiB},
    {"T", TiB},
    {"kB", 1000},
    {"KB", 1000},
    {"MB", 1000ULL * 1000},
    {"GB", 1000ULL * 1000 * 1000},
    {"TB", 1000ULL * 1000 * 1000 * 1000},
}};

constexpr std::int64_t kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs, kMin = 60 * kS, kH = 60 * kMin;
constexpr std::array<Unit, 7> kDurationUnits{{
    {"ns", 1},
    {"us", kUs},
    {"\xC2\xB5s", kUs},
    {"ms", kMs},
    {"s", kS},
    {"min", kMin},
    {"h", kH},
}};

template <std::size_t N>
std::optional<std::uint64_t> find_unit(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& u : units)
    if (u.name == name) return u.multiplier;
  return std::nullopt;
}

// Parses "<decimal> <unit>" where the unit is required unless `bare_multiplier` is given.
std::uint64_t parse_quantity(std::string_view text, const std::string& what, std::string_view expected,
                             std::optional<std::uint64_t> bare_multiplier,
                             std::optional<std::uint64_t> (*lookup)(std::string_view), std::uint64_t limit) {
  std::string_view s = trim(text);
  auto d = take_decimal(s);
  if (!d) bad(what, expected, text);
  s = trim(s);
  std::optional<std::uint64_t> multiplier = s.empty() ? bare_multiplier : lookup(s);
  if (!multiplier) bad(what, expected, text, s.empty() ? "missing unit" : "unknown unit");
  bool fractional = false;
  auto value = scale_exact(*d, *multiplier, limit, &fractional);
  if (!value) bad(what, expected, text, fractional ? "not a whole number of the smallest unit" : "too large");
  return *value;
}

std::optional<std::uint64_t> size_unit(std::string_view name) { return find_unit(kSizeUnits, name); }
std::optional<std::uint64_t> duration_unit(std::string_view name) { return find_unit(kDurationUnits, name); }

// Formats `value` with at most 3 significant digits; `trim_zeros` drops a trailing ".0".
std::string three_digits(double value, bool trim_zeros) {
  char buf[64];
  if (value >= 100 || value == 0) std::snprintf(buf, sizeof buf, "%.0f", value);
  else if (value >= 10) std::snprintf(buf, sizeof buf, "%.1f", value);
  else std::snprintf(buf, sizeof buf, "%.2f", value);
  std::string out = buf;
  if (trim_zeros && out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

// Picks the largest unit whose value, rounded to 3 significant digits, stays below 1000.
template <std::size_t N>
std::string format_scaled(double value, const std::array<std::pair<const char*, double>, N>& units,
                          bool trim_zeros) {
  if (!std::isfinite(value)) return "n/a";
  const bool negative = value < 0;
  double v = std::fabs(value);
  std::size_t i = 0;
  while (i + 1 < N) {
    double scaled = v / units[i].second;
    // 999.6 rounds to "1000": move on to the next unit instead.
    if (scaled < 999.5) break;
    ++i;
  }
  return (negative ? "-" : "") + three_digits(v / units[i].second, trim_zeros) + " " + units[i].first;
}

}  // namespace

std::uint64_t parse_size(std::string_view text, const std::string& what) {
  return parse_quantity(text, what, kSizeExpected, 1, size_unit, std::numeric_limits<std::uint64_t>::max());
}

std::uint64_t parse_rate(std::string_view text, const std::string& what) {
  constexpr std::string_view kPerSecond = "/s";
  if (!text.ends_with(kPerSecond) || text.size() == kPerSecond.size())
    throw InputError(what + ": expected a rate such as 40MiB/s or 1.5GB/s, got \"" + std::string(text) +
                     "\"");
  const std::uint64_t rate = parse_size(text.substr(0, text.size() - kPerSecond.size()), what);
  if (rate == 0) throw InputError(what + ": expected a rate above 0, got \"" + std::string(text) + "\"");
  return rate;
}

std::int64_t parse_duration_ns(std::string_view text, const std::string& what) {
  return static_cast<std::int64_t>(parse_quantity(text, what, kDurationExpected, std::nullopt, duration_unit,
                                                  std::numeric_limits<std::int64_t>::max()));
}

std::string format_size(double bytes) {
  static const std::array<std::pair<const char*, double>, 6> units{{
      {"B", 1},
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
  }};
  return format_scaled(bytes, units, true);
}

std::string format_rate(double bytes_per_second) { return format_size(bytes_per_second) + "/s"; }

std::string format_duration_ns(double ns) {
  static const std::array<std::pair<const char*, double>, 4> units{{
      {"ns", 1},
      {"us", 1e3},
      {"ms", 1e6},
      {"s", 1e9},
  }};
  return format_scaled(ns, units, false);
}

std::string format_duration_exact(std::int64_t ns) {
  static const std::array<std::pair<const char*, std::int64_t>, 6> units{{
      {"h", kH},
      {"min", kMin},
      {"s", kS},
      {"ms", kMs},
      {"us", kUs},
      {"ns", 1},
  }};
  if (ns == 0) return "0ns";
  for (const auto& [name, size] : units)
    if (ns % size == 0) return std::to_string(ns / size) + name;
  return std::to_string(ns) + "ns";  // not reached: every integer is a whole number of ns
}

Distribution parse_distribution(std::string_view text, const std::string& what) {
  constexpr std::string_view expected =
      "a step time such as 50ms, normal:50ms:5ms (mean:stddev) or uniform:40ms:60ms (min:max)";
  std::string_view s = trim(text);
  Distribution d;
  auto duration = [&](std::string_view part) {
    try {
      return parse_duration_ns(part, what);
    } catch (const InputError&) {
      bad(what, expected, text);
    }
  };
  auto split2 = [&](std::string_view rest) {
    auto colon = rest.find(':');
    if (colon == std::string_view::npos) bad(what, expected, text, "two durations needed");
    return std::pair{duration(rest.substr(0, colon)), duration(rest.substr(colon + 1))};
  };
  if (s.starts_with("normal:")) {
    d.kind = Distribution::Kind::normal;
    std::tie(d.a_ns, d.b_ns) = split2(s.substr(7));
  } else if (s.starts_with("uniform:")) {
    d.kind = Distribution::Kind::uniform;
    std::tie(d.a_ns, d.b_ns) = split2(s.substr(8));
    if (d.a_ns > d.b_ns) bad(what, expected, text, "minimum above maximum");
  } else {
    if (s.starts_with("fixed:")) s.remove_prefix(6);
    d.kind = Distribution::Kind::fixed;
    d.a_ns = duration(s);
  }
  return d;
}

std::string format_distribution(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::normal:
      return "normal:" + format_duration_exact(d.a_ns) + ":" + format_duration_exact(d.b_ns);
    case Distribution::Kind::uniform:
      return "uniform:" + format_duration_exact(d.a_ns) + ":" + format_duration_exact(d.b_ns);
    case Distribution::Kind::fixed: break;
  }
  return format_duration_exact(d.a_ns);
}

namespace {

// RETURNS: the side N of "<name>:N", 1..kMaxDecodeSize. Throws InputError through `bad`.
int crop_size(std::string_view n, const std::string& what, std::string_view expected, std::string_view text) {
  int v = 0;
  for (char c : n) {
    if (c < '0' || c > '9' || v > kMaxDecodeSize)
      bad(what, expected, text, "the crop size is a whole number of pixels");
    v = v * 10 + (c - '0');
  }
  if (n.empty() || v < 1 || v > kMaxDecodeSize)
    bad(what, expected, text, "the crop size is from 1 to " + std::to_string(kMaxDecodeSize) + " pixels");
  return v;
}

}  // namespace

TransformCost parse_transform(std::string_view text, const std::string& what) {
  constexpr std::string_view expected =
      "none, a cost per sample such as 200us/sample, or per MiB such as 5ms/MiB, or decode, or decode:SIZE "
      "such as decode:224, or random_resized_crop:SIZE such as random_resized_crop:224";
  constexpr std::string_view kRandom = "random_resized_crop:";
  std::string_view s = trim(text);
  TransformCost t;
  if (s == "none") return t;
  if (s == "decode" || s.starts_with("decode:")) {
    t.per = TransformCost::Per::decode;
    if (s == "decode") return t;
    t.size = crop_size(s.substr(7), what, expected, text);
    return t;
  }
  if (s.starts_with(kRandom) || s == "random_resized_crop") {
    t.per = TransformCost::Per::decode;
    t.crop = TransformCost::Crop::random_resized;
    t.size = crop_size(s.substr(std::min(s.size(), kRandom.size())), what, expected, text);
    return t;
  }
  auto slash = s.rfind('/');
  if (slash == std::string_view::npos) bad(what, expected, text);
  std::string_view per = trim(s.substr(slash + 1));
  if (per == "sample") t.per = TransformCost::Per::sample;
  else if (per == "MiB") t.per = TransformCost::Per::mib;
  else bad(what, expected, text, "per sample or per MiB");
  try {
    t.ns = parse_duration_ns(s.substr(0, slash), what);
  } catch (const InputError&) {
    bad(what, expected, text);
  }
  if (t.ns == 0) t = TransformCost{};
  return t;
}

std::string format_transform(const TransformCost& t) {
  switch (t.per) {
    case TransformCost::Per::sample: return format_duration_exact(t.ns) + "/sample";
    case TransformCost::Per::mib: return format_duration_exact(t.ns) + "/MiB";
    case TransformCost::Per::decode:
      if (t.crop == TransformCost::Crop::random_resized)
        return "random_resized_crop:" + std::to_string(t.size);
      return t.size > 0 ? "decode:" + std::to_string(t.size) : "decode";
    case TransformCost::Per::none: break;
  }
  return "none";
}

std::string format_percent(double fraction, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, 100 * fraction);
  return buf;
}

std::string format_printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string format_number(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return format_printf("%.0f", v);
  if (a >= 10) return format_printf("%.1f", v);
  if (a >= 1) return format_printf("%.2f", v);
  return format_printf("%.3g", v);
}

std::string format_count(double v) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T"};
  std::size_t i = 0;
  while (std::fabs(v) >= 999.5 && i + 1 < std::size(prefixes)) v /= 1000, ++i;
  const char* digits = i == 0 || std::fabs(v) >= 99.95 ? "%.0f" : std::fabs(v) >= 9.995 ? "%.1f" : "%.2f";
  return format_printf(digits, v) + prefixes[i];
}

}  // namespace feedbench
