// The harness's two clocks, one definition each, so times taken in different files (a round's
// start in the runner, its end gathered across ranks) are on the same scale.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

#include <sys/resource.h>

namespace feedbench {

// RETURNS: the monotonic clock (steady_clock) in nanoseconds; only differences mean anything.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
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

// RETURNS: getrusage's user and system time for `who` (RUSAGE_SELF, RUSAGE_CHILDREN), in seconds.
inline double rusage_cpu_seconds(decltype(RUSAGE_SELF) who) {
  rusage ru{};
  ::getrusage(who, &ru);
  auto sec = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) * 1e-6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

// RETURNS: the CPU time of the whole process (all its threads, user and system) in seconds:
// for work spread over threads the caller does not own (a stage's copiers, a loader's workers).
inline double process_cpu_seconds() { return rusage_cpu_seconds(RUSAGE_SELF); }

// RETURNS: the CPU time of this process and of every child it waited for (and theirs), in
// seconds: all that its own processes took, for the host's load less its own.
inline double own_processes_cpu_seconds() {
  return rusage_cpu_seconds(RUSAGE_SELF) + rusage_cpu_seconds(RUSAGE_CHILDREN);
}

}  // namespace feedbench
