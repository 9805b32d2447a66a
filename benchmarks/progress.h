// A progress line on a terminal for long untimed passes (eviction, warming, residency of a
// million files); silent when stderr is not a terminal, as in CI.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "feedbench/page_cache.h"

namespace feedbench {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { clear(); }

  // RETURNS: a Progress callback printing "<what> done/total" at most 10 times a second.
  Progress callback(const char* what) {
    if (!enabled_) return {};
    return [this, what](std::size_t done, std::size_t total) {
      auto now = std::chrono::steady_clock::now();
      if (done != total && now - last_ < std::chrono::milliseconds(100)) return;
      last_ = now;
      std::fprintf(stderr, "\r  %s %zu/%zu files", what, done, total);
      shown_ = true;
    };
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace feedbench
