// A run as a verb asks for it: `feedbench run`'s options, typed, and what the verb has in memory
// already (its config, the traces it read). `run` parses its command line into one; `replay`
// fills one from its own options and its set-up (benchmarks/replay_setup.h). Both are run by the
// same steps (run_steps.h), with the same refusals, messages, exit codes and result file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/replay/recorded_job.h"
#include "run_steps.h"

namespace feedbench {

struct RunRequest {
  // As parse_run_options leaves them; a verb sets what its options say: command_line (what the
  // result records), sets, throttles, out_path, budget_text and budget_ns, dry_run, quiet, and
  // config_path, which names `config` in messages and the result when that is given.
  run_steps::RunOptions options;
  // The config itself, in place of the file options.config_path names (parse_config_document).
  std::optional<nlohmann::json> config;
  // Traces the verb has read already, by the path its config names: not read again.
  std::map<std::string, std::shared_ptr<const RecordedJob>> recorded_jobs;
  // Print the run's estimated duration before anything is measured, as --dry-run prices it
  // (replay: a trace can hold a day of steps).
  bool estimate_first = false;
};

// Runs `request` as `feedbench run` runs its command line, on the ranks this process starts
// with (one without a launcher): Google Benchmark's flags and the options that depend on the
// ranks (its BENCHMARK_* variables, a budget across ranks, the display, colour) settled and
// checked first, as parse_run_options does for run's own.
// RETURNS: as run_main: 0 measured, 1 nothing measured or a run error, 2 bad input (thrown as
// InputError, which the caller's verb reports).
int run_request(RunRequest request);

}  // namespace feedbench
