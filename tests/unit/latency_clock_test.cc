// The latency clock: the time-stamp counter, where used, must agree with steady_clock, and
// steady_clock is plain nanoseconds.
#include "feedbench/base/latency_clock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "feedbench/base/file_system.h"

namespace feedbench {
namespace {

// RETURNS: |what `clock` measures - what steady_clock measures| over a sleep of `ms`, as a share
// of the latter: the best of three sleeps, so a preemption between two paired reads (a loaded
// CI machine) is not taken for a wrong rate.
double sleep_disagreement(const LatencyClock& clock, int ms) {
  double best = 1.0;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t s0 = clock.stamp();
    const std::int64_t n0 = now_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const std::int64_t s1 = clock.stamp();
    const std::int64_t n1 = now_ns();
    const double steady = double(n1 - n0);
    best = std::min(best, std::abs(double(clock.elapsed_ns(s0, s1)) - steady) / steady);
  }
  return best;
}

// RETURNS: the kernel's clocksource ("tsc", "kvm-clock", ...), or "" where it cannot be read.
std::string kernel_clocksource() {
  return read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
}

TEST(LatencyClockTest, SteadyClockCountsNanoseconds) {
  const LatencyClock clock(false);
  EXPECT_STREQ(clock.name(), "steady_clock");
  EXPECT_EQ(clock.ticks_per_second(), 1e9);
  EXPECT_EQ(clock.elapsed_ns(1000, 3500), 2500u);
  EXPECT_EQ(clock.elapsed_ns(3500, 1000), 0u);  // never a wrapped-around huge latency
  EXPECT_LT(sleep_disagreement(clock, 20), 0.001);
}

TEST(LatencyClockTest, TimeStampCounterAgreesWithSteadyClock) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the time-stamp counter is read on x86-64 only";
#else
  // Where the kernel does not trust the counter, feedbench does not use it either.
  if (kernel_clocksource() != "tsc") GTEST_SKIP() << "clocksource " << kernel_clocksource();
  const LatencyClock clock(true);
  ASSERT_STREQ(clock.name(), "tsc");
  // Any x86-64 of the last fifteen years counts at 0.5-6 GHz.
  EXPECT_GT(clock.ticks_per_second(), 5e8);
  EXPECT_LT(clock.ticks_per_second(), 6e9);
  const std::int64_t now = clock.stamp();
  EXPECT_EQ(clock.elapsed_ns(now + 1'000'000'000'000, now), 0u);  // never a wrapped-around latency
  // 1% is the histogram's own precision; the rate is measured to about 1e-5.
  EXPECT_LT(sleep_disagreement(clock, 50), 0.01);
#endif
}

TEST(LatencyClockTest, TheProcessClockFollowsTheKernelsClocksource) {
  const std::string source = kernel_clocksource();
  const char* setting = std::getenv("FEEDBENCH_LATENCY_CLOCK");
  const bool tsc = source == "tsc" && !(setting && std::string(setting) == "steady_clock");
#if !defined(__x86_64__)
  const bool expect_tsc = false;
#else
  const bool expect_tsc = tsc;
#endif
  EXPECT_STREQ(LatencyClock::get().name(), expect_tsc ? "tsc" : "steady_clock") << "clocksource " << source;
  EXPECT_STREQ(LatencyClock::host_clock_name(), LatencyClock::get().name());
}

}  // namespace
}  // namespace feedbench
