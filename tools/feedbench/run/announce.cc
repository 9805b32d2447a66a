// What a run says before anything runs: which paths it measures, how they are throttled, the
// cache's label, whether the selection fits in memory; and the fio job files it was asked for.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "feedbench/base/file_system.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/stager.h"
#include "feedbench/plan/fio_jobs.h"
#include "reporters/result_builder.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

bool uses_state(const Plan& plan, const std::string& state) {
  for (const Case& c : plan.cases)
    if (c.cache_state() == state) return true;
  return false;
}

// NOTE: test hook: FEEDBENCH_RUN_TEST_DELAY_MS sleeps that long once the paths are printed and
// before the first case, so a test can change the data set between the scan and the rounds.
void sleep_for_test_hook() {
  const char* ms = std::getenv("FEEDBENCH_RUN_TEST_DELAY_MS");
  if (ms && *ms) std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(ms)));
}

}  // namespace

void announce_run(RunSetup& run) {
  const Config& config = run.config;
  const RunContext& context = run.context;
  const nlohmann::json& manifest = run.manifest;
  std::FILE* human = run.options.human;
  // Say which paths are measured, before anything runs.
  std::map<std::string, PathInfo>& paths = run.paths;
  paths.emplace("source", describe_path("source", config.source_root));
  if (!config.cache_root.empty() && std::filesystem::exists(config.cache_root))
    paths.emplace("cache", describe_path("cache", config.cache_root));
  say(human, format_paths(paths));
  for (const auto& [role, rate] : config.throttle)
    say(human, role + ": throttled to " + format_rate(double(rate)) +
                   " (simulated slower storage: every read through it, all workers of a case together)\n");
  if (!manifest.is_null())
    say(human, "cache: label " + manifest.value("label", "") + ", " + manifest_selection_text(manifest) +
                   ", staged " + manifest.value("created_utc", "") + "\n");
  std::uint64_t selection_bytes = context.source->total_bytes();
  if (context.cache) selection_bytes = std::max(selection_bytes, context.cache->total_bytes());
  run.size_check = sizing(selection_bytes, total_memory_bytes());
  const nlohmann::json& size_check = run.size_check;
  if (!size_check["note"].get<std::string>().empty())
    say(human, "sizing: " + size_check["note"].get<std::string>() + "\n");
  if (uses_state(run.plan, "warm")) {
    std::uint64_t need = context.source->total_bytes();
    if (context.cache) need = std::max(need, context.cache->total_bytes());
    std::uint64_t avail = available_memory_bytes();
    if (need > avail)
      say(human, "note: the selection (" + format_size(double(need)) + ") is larger than available memory (" +
                     format_size(double(avail)) +
                     "): warm rounds cannot be fully cached and will be flagged "
                     "as not achieved\n");
  }
  if (!run.options.emit_fio_dir.empty() && run.cluster.is_root()) {
    const FioJobsWritten fio = write_fio_jobs(run.plan, context.files_for("source"),
                                              context.files_for("cache"), run.options.emit_fio_dir);
    std::fprintf(human, "wrote %zu fio job files to %s\n", fio.jobs,
                 printable(run.options.emit_fio_dir).c_str());
    if (fio.files_left_out) std::fprintf(stderr, "warning: %s\n", fio_left_out_warning(fio).c_str());
  }
  std::fflush(human);
  sleep_for_test_hook();
}

}  // namespace feedbench::run_steps
