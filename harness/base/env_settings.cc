#include "feedbench/base/env_settings.h"

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "feedbench/base/error.h"

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

struct Choice {
  std::string_view value;
  bool means;
};

// RETURNS: what the variable's value means among `choices`; `unset` when it is unset or empty.
// Throws InputError (naming the variable, `expected` and the value) for any other value.
bool choice_of(const char* name, std::initializer_list<Choice> choices, bool unset, const char* expected) {
  const char* v = value_of(name);
  if (!v) return unset;
  for (const Choice& c : choices)
    if (c.value == v) return c.means;
  bad(name, expected, v);
}

}  // namespace

bool io_uring_chain_setting() {
  return choice_of("FEEDBENCH_IO_URING_CHAIN", {{"1", true}, {"0", false}}, true, "0 or 1");
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
  return choice_of("FEEDBENCH_RESIDENCY_METHOD", {{"auto", false}, {"cachestat", false}, {"mincore", true}},
                   false, "auto, cachestat or mincore");
}

bool latency_steady_clock_setting() {
  return choice_of("FEEDBENCH_LATENCY_CLOCK", {{"auto", false}, {"steady_clock", true}}, false,
                   "auto or steady_clock");
}

bool open_beneath_walk_setting() {
  return choice_of("FEEDBENCH_OPEN_BENEATH", {{"auto", false}, {"openat2", false}, {"walk", true}}, false,
                   "auto, openat2 or walk");
}

const std::vector<std::string_view>& feedbench_variable_names() {
  static const std::vector<std::string_view> names = {
      "FEEDBENCH_IO_URING_CHAIN",      "FEEDBENCH_SCAN_THREADS",
      "FEEDBENCH_RESIDENCY_METHOD",    "FEEDBENCH_LATENCY_CLOCK",
      "FEEDBENCH_OPEN_BENEATH",        "FEEDBENCH_HOST_NAME",
      "FEEDBENCH_RANK_OUTPUT",         "FEEDBENCH_RUN_TEST_DELAY_MS",
      "FEEDBENCH_STAGE_TEST_DELAY_MS", "FEEDBENCH_CHECKPOINT_TEST_DELAY_MS",
      "FEEDBENCH_TEST_THREAD_LIMIT",   "FEEDBENCH_WATCH_DIR",
      "FEEDBENCH_WATCH_TRACE",         "FEEDBENCH_READ_RECORDER",
      "FEEDBENCH_WATCH_COUNTERS"};
  return names;
}

void check_env_settings() {
  (void)io_uring_chain_setting();
  (void)scan_threads_setting(1);
  (void)residency_mincore_setting();
  (void)latency_steady_clock_setting();
  (void)open_beneath_walk_setting();
}

}  // namespace feedbench
