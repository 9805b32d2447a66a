#include "feedbench/throttle.h"

#include <algorithm>
#include <thread>

namespace feedbench {

Throttle::Throttle(std::uint64_t bytes_per_second) : rate_(bytes_per_second) {}

void Throttle::acquire(std::uint64_t bytes) {
  // The read may start once the reads reserved before it have had their time; its own time
  // is then charged to the next one, so the rate holds over any run of reads.
  const auto cost = std::chrono::nanoseconds(
      std::int64_t(double(bytes) * 1e9 / double(rate_)));
  Clock::time_point start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    start = std::max(Clock::now(), next_);
    next_ = start + cost;
  }
  std::this_thread::sleep_until(start);
}

}  // namespace feedbench
