// Plan: a config's families expanded into Cases, the unit a benchmark measures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/gpu/gpu.h"
#include "feedbench/plan/config.h"

namespace feedbench {

// One segment of a case's name: the parameter, its short key and its value as the name writes
// them ("block_size", "bs", "1048576").
struct NamePart {
  std::string key;
  std::string short_key;
  std::string value;
};

// A plain value: the family and every resolved parameter. Sizes and durations are resolved to
// integers (bytes, nanoseconds); choices stay strings. Keys in `params` are in the family's
// canonical order; `name()` is the identity the diff tool matches on, e.g.
// file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:4/state:cold/path:cache
struct Case {
  std::string family;             // "file_read", "loader", "stage"
  nlohmann::ordered_json params;  // canonical order; full parameter names as keys
  int repetitions = 3;
  std::uint64_t seed = 42;
  // Where the config set each parameter: a JSON pointer ("/families/1/block_size/0",
  // "/defaults/block_size") or "built-in default of file_read.block_size". For messages about
  // one case; not part of its identity.
  std::map<std::string, std::string> origin;
  // A cap on the round's runtime chosen by `run --budget` (0: none). Not part of the name: a
  // budget's choice depends on the machine, and names must match run against run; the result
  // records it (extra.runtime_from).
  std::int64_t budget_runtime_ns = 0;
  // The config's family entry the case came from ("/families/1"): how the console groups
  // cases. Not part of its identity.
  std::string group;

  std::string name() const;  // canonical name (short keys: bs, qd, state, ...)
  // RETURNS: the segments of name() after the family, in canonical order.
  std::vector<NamePart> name_parts() const;

  // Typed access. REQUIRES: the key exists with that type (the plan guarantees it).
  std::string str(const char* key) const;
  std::int64_t integer(const char* key) const;
  double number(const char* key) const;
  bool has(const char* key) const;
};

struct Plan {
  std::vector<Case> cases;
  // Combinations the sweep produced that cannot run, with why (e.g. "libaio reads only with
  // O_DIRECT: cache_state must be direct"). Printed once; never silently dropped.
  std::vector<std::string> dropped;
};

// Cases a config may expand to unless `feedbench run --max-cases N` raises it: each case is
// registered, run and written, so a sweep past this is almost always a typo.
inline constexpr std::uint64_t kDefaultMaxCases = 10000;
// Repetitions of one case (repetitions, defaults.repetitions, --benchmark_repetitions).
inline constexpr std::int64_t kMaxRepetitions = 1000;
// Reader threads of one loader case (accelerators x workers).
inline constexpr std::int64_t kMaxLoaderThreads = 4096;

// Expands every family (cartesian product of list-valued parameters, defaults filled in).
// The number of cases is counted, overflow-safe, before any is built.
// RETURNS: the plan. Throws InputError naming file and JSON pointer for a bad value, an integer
// out of its range, or sweeps that make more than `max_cases` cases (with the count), or a GPU
// parameter (sink gpu, accelerator cuda) when `cuda_built` is false ("built without CUDA").
Plan expand_plan(const Config& config, std::uint64_t max_cases = kDefaultMaxCases,
                 bool cuda_built = built_with_cuda());

// RETURNS: the parameters of `family` ("file_read", "loader", "stage") in canonical order.
// REQUIRES: a known family.
std::vector<std::string> family_parameters(const std::string& family);

}  // namespace feedbench
