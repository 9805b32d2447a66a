// Sizes, durations and rates as people write them: "4KiB", "1MiB", "50ms", "1.5GB/s".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedbench {

// Parses a byte size: a plain integer, or a number with a unit B, KiB, MiB, GiB, TiB (powers
// of 1024) or kB, MB, GB, TB (powers of 1000); K/M/G/T alone mean KiB/MiB/GiB/TiB.
// RETURNS: bytes. Throws InputError("<what>: ...") naming `what` on a bad value.
std::uint64_t parse_size(std::string_view text, const std::string& what = "size");

// Parses a duration: a number with ns, us, ms, s, min. RETURNS: nanoseconds.
// Throws InputError naming `what` on a bad value or a missing unit.
std::int64_t parse_duration_ns(std::string_view text, const std::string& what = "duration");

// RETURNS: "4 KiB", "1.5 MiB" (binary units, at most 3 significant digits).
std::string format_size(double bytes);
// RETURNS: "812 MiB/s".
std::string format_rate(double bytes_per_second);
// RETURNS: "35.2 ms", "1.20 s".
std::string format_duration_ns(double ns);

}  // namespace feedbench
