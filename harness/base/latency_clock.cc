#include "feedbench/base/latency_clock.h"

#include <algorithm>
#include <thread>

#include "feedbench/base/env_settings.h"
#include "feedbench/base/file_system.h"

namespace feedbench {
namespace {

#if defined(__x86_64__)
// One (counter, steady_clock) pair read as close together as this CPU allows: the best of a
// few tries, the clock read between two counter reads, so a preemption inside one try is not
// taken.
struct Pair {
  std::uint64_t ticks;
  std::int64_t ns;
};
// RETURNS: ticks 0 when no try saw the counter advance (then it is not used).
Pair read_pair() {
  Pair best{0, 0};
  std::uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t a = __rdtsc();
    const std::int64_t ns = now_ns();
    const std::uint64_t b = __rdtsc();
    if (b > a && b - a < best_gap) {
      best_gap = b - a;
      best = Pair{a + (b - a) / 2, ns};
    }
  }
  return best;
}
#endif

// RETURNS: true when this process should time reads with the counter: x86-64, the kernel
// keeps time with it, and FEEDBENCH_LATENCY_CLOCK does not ask for steady_clock. Decided once
// per process (get() and host_clock_name() ask it, and must agree).
bool want_tsc() {
#if defined(__x86_64__)
  static const bool want =
      !latency_steady_clock_setting() &&
      read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource") == "tsc";
  return want;
#else
  return false;
#endif
}

}  // namespace

LatencyClock::LatencyClock(bool use_tsc) {
#if defined(__x86_64__)
  if (!use_tsc) return;
  // 5 ms against a clock read to within ~50 ns: the rate is known to about 1e-5, far inside
  // the histogram's 1% bins.
  const Pair a = read_pair();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const Pair b = read_pair();
  if (a.ticks == 0 || b.ticks <= a.ticks || b.ns <= a.ns)
    return;  // a counter that does not advance: not used
  ns_per_tick_q32_ =
      std::uint64_t((static_cast<unsigned __int128>(std::uint64_t(b.ns - a.ns)) << 32) / (b.ticks - a.ticks));
  tsc_ = ns_per_tick_q32_ > 0;
#else
  (void)use_tsc;
#endif
}

// The clocksource is read once: should the kernel later mark the counter unstable (it then
// switches to another clocksource), this process keeps the counter for its remaining rounds.
const LatencyClock& LatencyClock::get() {
  static const LatencyClock clock(want_tsc());
  return clock;
}

const char* LatencyClock::host_clock_name() { return want_tsc() ? "tsc" : "steady_clock"; }

double LatencyClock::ticks_per_second() const {
  return tsc_ ? 1e9 * double(std::uint64_t(1) << 32) / double(ns_per_tick_q32_) : 1e9;
}

}  // namespace feedbench
