#include "feedbench/base/threads.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace feedbench {

bool thread_start_refused_for_test() {
  static const long limit = [] {
    const char* v = std::getenv("FEEDBENCH_TEST_THREAD_LIMIT");
    return v && *v ? std::atol(v) : -1L;
  }();
  if (limit < 0) return false;
  static std::atomic<long> started{0};
  return started.fetch_add(1) >= limit;
}

std::string thread_refusal_message(const char* what, std::size_t index, std::size_t count, int err) {
  return "cannot start " + std::string(what) + " " + std::to_string(index + 1) + " of " +
         std::to_string(count) + ": " + std::strerror(err);
}

}  // namespace feedbench
