// Plan: a config's families expanded into Cases, the unit a benchmark measures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/gpu/gpu.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/family_parameters.h"

namespace feedbench {

// One segment of a case's name: the parameter, its short key and its value as the name writes
// them ("block_size", "bs", "1048576").
struct NamePart {
  std::string key;
  std::string short_key;
  std::string value;
};

// A plain value: the family and every resolved parameter, twice: as canonical JSON values for the
// case's identity (`params`: its name, what result files record and `diff` matches on), and as
// typed fields for the code that runs it (`values`, family_parameters.h), both filled once by
// the plan. Keys in `params` are in the family's canonical order; `name()` is the identity, e.g.
// file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:4/state:cold/path:cache
struct Case {
  std::string family;             // "file_read", "loader", "replay", "stage", "checkpoint"
  nlohmann::ordered_json params;  // canonical order; full parameter names as keys
  FamilyParameters values;        // the alternative of `family`
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

  // The family's fields. REQUIRES: `family` is that family (checked).
  const FileReadParameters& file_read() const;
  const LoaderParameters& loader() const;
  const ReplayParameters& replay() const;
  const StageParameters& stage() const;
  const CheckpointParameters& checkpoint() const;
  ReplayParameters& replay();  // the run fills in what it read from the trace

  // RETURNS: the root the case reads, "source" or "cache"; null for stage (which reads the
  // source and writes a scratch folder in the cache) and checkpoint (which writes and reads
  // dataset.scratch only).
  const std::string* path() const;
  // RETURNS: the page cache's state before the case: "cold", "warm" or "direct".
  const std::string& cache_state() const;
  // RETURNS: the reader threads the case runs at once: workers (x accelerators for the loader).
  int reader_threads() const;

  // Sets `key` to `value`, a canonical value as the plan makes it, in `params` (the name and the
  // result) and in its typed field. For a value the run learns after the plan (replay's job
  // name) and for tests. REQUIRES: `key` is a parameter of `family` and `value` of its kind.
  void set(const std::string& key, const nlohmann::json& value);
};

// RETURNS: a case of `family` with every parameter at its canonical `params` value (the keys a
// case of that family has; any order). For tests and tools that build a case without a config.
// REQUIRES: as Case::set for each key.
Case make_case(const std::string& family, const nlohmann::ordered_json& params);

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

// A model's checkpoint as MLPerf Storage v2.0 sizes it: bytes (decimal, as published) and ranks.
struct CheckpointModel {
  const char* name;  // "llama3-8b"
  std::uint64_t bytes;
  int ranks;
};
// RETURNS: the models a checkpoint case's `model` names, in the schema's order.
const std::vector<CheckpointModel>& checkpoint_models();

// Each checkpoint file's size is a multiple of this: O_DIRECT's alignment on every device.
inline constexpr std::uint64_t kCheckpointAlignment = 4096;

// What a checkpoint case writes: ranks x files_per_rank files of file_bytes each.
struct CheckpointLayout {
  std::uint64_t bytes_asked = 0;  // size (or the model's) x scale
  int ranks = 1;
  int files_per_rank = 1;
  // bytes_asked shared out over the files, rounded down to kCheckpointAlignment (0: too small)
  std::uint64_t file_bytes = 0;
  std::uint64_t files() const { return std::uint64_t(ranks) * std::uint64_t(files_per_rank); }
  std::uint64_t bytes() const { return files() * file_bytes; }  // what is written
};
// RETURNS: the files a checkpoint case with `p` writes (the plan refuses a layout whose
// file_bytes is 0).
CheckpointLayout checkpoint_layout(const CheckpointParameters& p);

// RETURNS: the parameters of `family` ("file_read", "loader", "stage") in canonical order.
// REQUIRES: a known family.
std::vector<std::string> family_parameters(const std::string& family);

}  // namespace feedbench
