// A read throttle: holds every read through one path role (all workers of a round together)
// to a byte rate, to stand in for slower storage than the machine has: a network store in front
// of a local copy, a throttled volume. Strict pacing (no burst): each read reserves its slot on
// one shared timeline and waits for it, so the rate holds from the first read.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace feedbench {

class Throttle {
 public:
  // REQUIRES: bytes_per_second > 0.
  explicit Throttle(std::uint64_t bytes_per_second);

  // Waits until `bytes` more may be read without the total passing the rate since the first
  // acquire. Thread-safe; callers wait in the order they reserved.
  void acquire(std::uint64_t bytes);

  std::uint64_t bytes_per_second() const { return rate_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t rate_;
  std::mutex mutex_;
  Clock::time_point next_{};  // when the next reservation may start
};

}  // namespace feedbench
