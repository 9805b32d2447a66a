// A read throttle: holds every read through one path role (all workers of a round together)
// to a byte rate, to stand in for slower storage than the machine has: a network store in front
// of a local copy, a throttled volume. Callers charge each read once it is done: it takes the
// next slot of its length on one shared timeline and waits for the slot's end. The timeline
// starts at the first read and may lag the clock by at most kCatchUp: a thread that overslept
// (a loaded host wakes sleepers late) lets the next reads go at once until the rate is made up,
// so small reads at a high rate still reach it, while a pause banks no more than kCatchUp.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace feedbench {

class Throttle {
 public:
  // REQUIRES: bytes_per_second > 0.
  explicit Throttle(std::uint64_t bytes_per_second);

  // Charges `bytes` just read: waits until the reads charged so far, these included, fit the
  // rate since the first acquire. Thread-safe; callers wait in the order they charged.
  void acquire(std::uint64_t bytes);

  std::uint64_t bytes_per_second() const { return rate_; }

  static constexpr std::chrono::milliseconds kCatchUp{20};

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t rate_;
  std::mutex mutex_;
  Clock::time_point next_{};  // where the next read's slot starts
  bool started_ = false;      // next_ is set by the first acquire
};

}  // namespace feedbench
