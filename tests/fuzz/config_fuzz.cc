// Fuzzes the config loader: parse_sets (--set KEY=VALUE) and parse_config (JSON, ${VAR}
// expansion, overrides, schema check, per-family defaults, folder checks).
// Input: the first line is one --set option ("--set " optional; empty line = none), the rest is
// the config text.
#include <cstdlib>

#include "feedbench/plan/config.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Variables the seed configs expand, set to a folder that exists so the folder checks pass;
  // FUZZ_EMPTY is set but empty (takes a ${VAR:-default}, refuses a bare ${VAR}).
  ::setenv("FEEDBENCH_SOURCE", "/tmp", 1);
  ::setenv("FEEDBENCH_CACHE", "/tmp", 1);
  ::setenv("FUZZ_TEXT", "4KiB", 1);
  ::setenv("FUZZ_EMPTY", "", 1);
  ::unsetenv("FUZZ_UNSET");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto [set, text] = feedbench::fuzz::split_first_line(data, size);
  feedbench::fuzz::expect_only_input_errors([&, &set = set, &text = text] {
    feedbench::ConfigOverrides overrides;
    if (set.rfind("--set ", 0) == 0) set.erase(0, 6);
    if (!set.empty()) overrides.set = feedbench::parse_sets({set});
    feedbench::Config config = feedbench::parse_config(text, "fuzz.json", overrides);
    // What a run does next with the result: record it (dump) and hash it.
    (void)config.resolved.dump();
  });
  return 0;
}
