#include "feedbench/io/throttle.h"

#include <algorithm>
#include <thread>

namespace feedbench {

Throttle::Throttle(std::uint64_t bytes_per_second) : rate_(bytes_per_second) {}

void Throttle::acquire(std::uint64_t bytes) {
  // The bytes were read already: they take the next slot of their length on the timeline, and
  // the caller waits for the end of it, so n reads never finish sooner than n slots. The
  // timeline starts at the first read (no credit before it) and may lag the clock by kCatchUp
  // at most, so time lost to late wake-ups is made up but a pause banks little.
  const auto cost = std::chrono::nanoseconds(std::int64_t(double(bytes) * 1e9 / double(rate_)));
  Clock::time_point end;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    if (!started_) {
      next_ = now;
      started_ = true;
    }
    end = std::max(now - kCatchUp, next_) + cost;
    next_ = end;
  }
  std::this_thread::sleep_until(end);
}

}  // namespace feedbench
