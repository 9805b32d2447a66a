// The latency clock: the time-stamp counter, where used, must agree with steady_clock, and
// steady_clock is plain nanoseconds.
#include "feedbench/latency_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace feedbench {
namespace {

// RETURNS: the nanoseconds `clock` and steady_clock each measure over one sleep of `ms`.
std::pair<std::uint64_t, std::uint64_t> measure_sleep(const LatencyClock& clock, int ms) {
  const std::int64_t s0 = clock.stamp();
  const std::int64_t n0 = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  const std::int64_t s1 = clock.stamp();
  const std::int64_t n1 = now_ns();
  return {clock.elapsed_ns(s0, s1), std::uint64_t(n1 - n0)};
}

TEST(LatencyClockTest, SteadyClockCountsNanoseconds) {
  const LatencyClock clock(false);
  EXPECT_STREQ(clock.name(), "steady_clock");
  EXPECT_EQ(clock.ticks_per_second(), 1e9);
  EXPECT_EQ(clock.elapsed_ns(1000, 3500), 2500u);
  EXPECT_EQ(clock.elapsed_ns(3500, 1000), 0u);  // never a wrapped-around huge latency
  const auto [measured, steady] = measure_sleep(clock, 20);
  EXPECT_NEAR(double(measured), double(steady), 50'000.0);
}

TEST(LatencyClockTest, TimeStampCounterAgreesWithSteadyClock) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the time-stamp counter is read on x86-64 only";
#else
  const LatencyClock clock(true);
  ASSERT_STREQ(clock.name(), "tsc");
  // Any x86-64 of the last fifteen years counts at 0.5-6 GHz.
  EXPECT_GT(clock.ticks_per_second(), 5e8);
  EXPECT_LT(clock.ticks_per_second(), 6e9);
  EXPECT_EQ(clock.elapsed_ns(clock.stamp() + 1'000'000, clock.stamp()), 0u);
  // 1% is the histogram's own precision; the slack covers a preemption between the two reads.
  const auto [measured, steady] = measure_sleep(clock, 50);
  EXPECT_NEAR(double(measured), double(steady), 0.01 * double(steady) + 100'000.0);
#endif
}

TEST(LatencyClockTest, TheProcessClockFollowsTheKernelsClocksource) {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  in >> source;
  const char* setting = std::getenv("FEEDBENCH_LATENCY_CLOCK");
  const bool tsc = source == "tsc" && !(setting && std::string(setting) == "steady_clock");
#if !defined(__x86_64__)
  const bool expect_tsc = false;
#else
  const bool expect_tsc = tsc;
#endif
  EXPECT_STREQ(LatencyClock::get().name(), expect_tsc ? "tsc" : "steady_clock") << "clocksource " << source;
}

}  // namespace
}  // namespace feedbench
