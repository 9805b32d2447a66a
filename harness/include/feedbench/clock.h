// The harness's two clocks, one definition each, so times taken in different files (a round's
// start in the runner, its end gathered across ranks) are on the same scale.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace feedbench {

// RETURNS: the monotonic clock (steady_clock) in nanoseconds; only differences mean anything.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// RETURNS: the CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
// A worker reads it at its start signal and its last completion, so a round's CPU covers exactly
// its timed window: process-wide rusage would also count thread start-up and engine teardown.
inline std::int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace feedbench
