// Sizes, durations and rates as people write them: "4KiB", "1MiB", "50ms", "1.5GB/s".
// Also the loader's small value languages: step-time distributions and transform costs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedbench {

// Parses a byte size: a plain integer, or a number with a unit B, KiB, MiB, GiB, TiB (powers
// of 1024) or kB, MB, GB, TB (powers of 1000); K/M/G/T alone mean KiB/MiB/GiB/TiB.
// A fraction is allowed when the result is a whole number of bytes ("1.5KiB").
// RETURNS: bytes. Throws InputError("<what>: ...") naming `what` on a bad value.
std::uint64_t parse_size(std::string_view text, const std::string& what = "size");

// Parses a rate: a size per second, "40MiB/s", "1.5GB/s" (the size as parse_size reads it).
// RETURNS: bytes per second (> 0). Throws InputError naming `what` on a bad value.
std::uint64_t parse_rate(std::string_view text, const std::string& what = "rate");

// Parses a duration: a number with ns, us (or µs), ms, s, min, h. RETURNS: nanoseconds.
// Throws InputError naming `what` on a bad value or a missing unit.
std::int64_t parse_duration_ns(std::string_view text, const std::string& what = "duration");

// RETURNS: "4 KiB", "1.5 MiB" (binary units, at most 3 significant digits).
std::string format_size(double bytes);
// RETURNS: "812 MiB/s".
std::string format_rate(double bytes_per_second);
// RETURNS: "35.2 ms", "1.20 s".
std::string format_duration_ns(double ns);

// RETURNS: `v` with 3 significant digits and no unit ("296", "29.6", "2.96", "0.296"): the bare
// number of a table cell whose unit its column's header names.
std::string format_number(double v);

// RETURNS: a count with 3 significant digits and an SI prefix: "4.10k", "390", "12.3M".
std::string format_count(double v);

// RETURNS: a share (0..1) as a percentage with `decimals` decimals: "97.6%", "98%".
std::string format_percent(double fraction, int decimals = 1);

// RETURNS: `v` printed by one printf conversion, e.g. format_printf("%+.1f%%", change).
// REQUIRES: `format` holds exactly one conversion of a double.
std::string format_printf(const char* format, double v);

// RETURNS: the exact duration in the largest unit that divides it: "50ms", "1500us", "2s",
// "0ns". parse_duration_ns(format_duration_exact(x)) == x. REQUIRES: ns >= 0.
std::string format_duration_exact(std::int64_t ns);

// A simulated accelerator step time (loader `step_time`).
struct Distribution {
  enum class Kind { fixed, normal, uniform };
  Kind kind = Kind::fixed;
  std::int64_t a_ns = 0;  // fixed: the duration; normal: mean; uniform: minimum
  std::int64_t b_ns = 0;  // fixed: 0; normal: standard deviation; uniform: maximum
};

// Parses "50ms" (or "fixed:50ms"), "normal:50ms:5ms" (mean, stddev), "uniform:40ms:60ms"
// (min, max; min <= max). RETURNS: the distribution. Throws InputError naming `what`.
Distribution parse_distribution(std::string_view text, const std::string& what = "step_time");
// RETURNS: the canonical text: "50ms", "normal:50ms:5ms", "uniform:40ms:60ms".
std::string format_distribution(const Distribution& d);

// Per-sample CPU work of the loader (`transform`): a configured cost, or the real work of
// decoding each sample as a JPEG (`decode`), optionally resized and centre-cropped to a size
// (`decode:224`, evaluation's Resize + CenterCrop) or cropped at random and resized
// (`random_resized_crop:224`, training's torchvision RandomResizedCrop).
struct TransformCost {
  enum class Per { none, sample, mib, decode };
  // decode: which crop follows the decode.
  enum class Crop { centre, random_resized };
  Per per = Per::none;
  std::int64_t ns = 0;  // CPU time per sample or per MiB; 0 for none and decode
  int size = 0;         // decode: side of the square crop (0: the whole image)
  Crop crop = Crop::centre;
};

// Largest crop `decode:N` and `random_resized_crop:N` take.
inline constexpr int kMaxDecodeSize = 8192;

// Parses "none", "200us/sample", "5ms/MiB", "decode", "decode:224", "random_resized_crop:224".
// A zero cost is `none`. RETURNS: the cost. Throws InputError naming `what`.
TransformCost parse_transform(std::string_view text, const std::string& what = "transform");
// RETURNS: the canonical text: "none", "200us/sample", "5ms/MiB", "decode", "decode:224",
// "random_resized_crop:224".
std::string format_transform(const TransformCost& t);

}  // namespace feedbench
