#include "feedbench/env_settings.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "feedbench/error.h"

namespace feedbench {
namespace {

// RETURNS: the variable's value, or nullptr when unset. An empty value counts as unset, as a
// shell's `FEEDBENCH_X= feedbench run` means "not this time".
const char* value_of(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

[[noreturn]] void bad(const char* name, const char* expected, const char* got) {
  throw InputError(std::string("environment variable ") + name + ": expected " + expected + ", got '" + got +
                   "'");
}

}  // namespace

bool io_uring_chain_setting() {
  const char* v = value_of("FEEDBENCH_IO_URING_CHAIN");
  if (!v) return true;
  const std::string_view s(v);
  if (s == "1") return true;
  if (s == "0") return false;
  bad("FEEDBENCH_IO_URING_CHAIN", "0 or 1", v);
}

unsigned scan_threads_setting(unsigned fallback) {
  const char* v = value_of("FEEDBENCH_SCAN_THREADS");
  if (!v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 64) bad("FEEDBENCH_SCAN_THREADS", "a whole number from 1 to 64", v);
  return unsigned(n);
}

bool residency_mincore_setting() {
  const char* v = value_of("FEEDBENCH_RESIDENCY_METHOD");
  if (!v) return false;
  const std::string_view s(v);
  if (s == "auto" || s == "cachestat") return false;
  if (s == "mincore") return true;
  bad("FEEDBENCH_RESIDENCY_METHOD", "auto, cachestat or mincore", v);
}

bool latency_steady_clock_setting() {
  const char* v = value_of("FEEDBENCH_LATENCY_CLOCK");
  if (!v) return false;
  const std::string_view s(v);
  if (s == "auto") return false;
  if (s == "steady_clock") return true;
  bad("FEEDBENCH_LATENCY_CLOCK", "auto or steady_clock", v);
}

void check_env_settings() {
  (void)io_uring_chain_setting();
  (void)scan_threads_setting(1);
  (void)residency_mincore_setting();
  (void)latency_steady_clock_setting();
}

}  // namespace feedbench
