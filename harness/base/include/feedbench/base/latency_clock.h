// The clock of per-read latency. A read from the page cache takes about a microsecond, and the
// runner stamps every read twice: with steady_clock (a vDSO call reading the kernel's clock
// data page, 25-30 ns here, more when the system call just made has pushed that page out of
// the cache) recording latency cost 6-11% of such reads (tools/measure-overhead). The CPU's
// time-stamp counter is one instruction with no memory access; it is used where the kernel
// itself keeps time with it (its clocksource is "tsc": constant rate, synchronised across CPUs,
// checked by the kernel at boot), converted to nanoseconds with a rate measured against
// steady_clock. Everywhere else the latency clock is steady_clock.
#pragma once

#include <cstdint>

#include "feedbench/base/clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace feedbench {

class LatencyClock {
 public:
  // REQUIRES: use_tsc only on x86-64 (otherwise it is ignored). With use_tsc, measures the
  // counter's rate against steady_clock (about 5 ms).
  explicit LatencyClock(bool use_tsc);

  // RETURNS: the process's latency clock, made at the first call (thread-safe): the TSC where
  // the kernel's clocksource is "tsc", else steady_clock. FEEDBENCH_LATENCY_CLOCK
  // (env_settings.h) can ask for steady_clock.
  static const LatencyClock& get();
  // RETURNS: the name get()'s clock has ("tsc" or "steady_clock"), without making it (no
  // calibration): what environment.host records, also for a run that records no latency.
  static const char* host_clock_name();

  // RETURNS: a time stamp; only differences of stamps from one clock mean anything.
  std::int64_t stamp() const {
#if defined(__x86_64__)
    if (tsc_) return std::int64_t(__rdtsc());
#endif
    return now_ns();
  }
  // RETURNS: the nanoseconds from stamp `from` to stamp `to`; 0 when `to` is not later.
  std::uint64_t elapsed_ns(std::int64_t from, std::int64_t to) const {
    if (to <= from) return 0;
    const auto d = std::uint64_t(to - from);
    return tsc_ ? std::uint64_t((static_cast<unsigned __int128>(d) * ns_per_tick_q32_) >> 32) : d;
  }

  // RETURNS: "tsc" or "steady_clock", as result files record it.
  const char* name() const { return tsc_ ? "tsc" : "steady_clock"; }
  // RETURNS: the counter's measured rate in ticks per second (1e9 for steady_clock).
  double ticks_per_second() const;

 private:
  bool tsc_ = false;
  std::uint64_t ns_per_tick_q32_ = std::uint64_t(1) << 32;  // nanoseconds per tick, 32.32 fixed point
};

}  // namespace feedbench
