// The stage family: the cost of building a cache, measured like any other case. Each
// repetition stages the source selection, with the case's workers and verification, into a
// fresh scratch folder inside the cache root (removed afterwards), from a cold or warm source.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "case_run.h"
#include "families.h"
#include "feedbench/base/cores.h"
#include "feedbench/cache/stager.h"

namespace feedbench {
namespace {

// RETURNS: a new empty folder "<cache>/.feedbench-stage-bench-<pid>-<n>.fbtmp", or "" with errno
// set. The suffix marks it as feedbench's temporary: scan_dataset never walks such a folder, so
// another run sharing the cache neither counts its files nor fails when it vanishes, and stage
// never takes it for a file of the cache.
std::string make_scratch(const std::string& cache_root) {
  for (int n = 0; n < 1000; ++n) {
    std::string dir = cache_root + "/.feedbench-stage-bench-" + std::to_string(::getpid()) + "-" +
                      std::to_string(n) + ".fbtmp";
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    if (errno != EEXIST) return "";
  }
  return "";
}

}  // namespace

void run_stage_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  // Staging writes the cache: across ranks every rank would write the same folder. Stage each
  // node's cache with `mpirun -npernode 1 feedbench stage` instead.
  if (context.ranks().size() > 1)
    return run.skip(
        "stage cases run in one process, not across ranks (each would write the cache); "
        "stage each node's cache with feedbench stage");
  const FileSet* source = run.selection("source");
  if (!source) return;
  const std::string cache_root = context.config ? context.config->cache_root : "";
  if (cache_root.empty())
    return run.skip(
        "no cache root in the config's dataset: the stage family stages into a scratch "
        "folder inside it (set dataset.cache or --cache)");
  std::error_code ec;
  if (!std::filesystem::is_directory(cache_root, ec))
    return run.skip("the cache root " + cache_root + " is not an existing folder");

  const StageParameters& p = c.stage();
  const std::string& cache_state = p.cache_state;
  const int workers = p.workers;
  const bool verify = p.verify;

  // Untimed preparation: the source cold or warm, residency measured as the round starts.
  const std::optional<double> prepared = run.prepare_cache_state(cache_state, *source);
  if (!prepared) return;
  const double f = *prepared;

  const std::string scratch = make_scratch(cache_root);
  if (scratch.empty())
    return run.skip("cannot create a scratch folder in " + cache_root + ": " + std::strerror(errno));

  StageOptions options;
  options.source_root = source->root();
  options.cache_root = scratch;
  options.include = context.config->include;
  options.workers = workers;
  options.verify = verify;
  options.quiet = true;
  options.source_throttle = run.throttle("source");

  StageResult result;
  std::string failure;
  for (auto _ : state) {
    try {
      result = stage(options);
    } catch (const std::exception& e) {
      failure = e.what();
      break;
    }
    if (!result.errors.empty()) {
      failure = result.errors.front();
      break;
    }
    state.SetIterationTime(result.seconds > 0 ? result.seconds : 1e-9);
  }
  std::filesystem::remove_all(scratch, ec);
  if (!failure.empty()) return run.skip("staging failed: " + failure);

  const double s = result.seconds > 0 ? result.seconds : 1e-9;
  run.counter("bytes_per_second", double(result.bytes_copied) / s, /*binary=*/true);
  run.counter("files_per_second", double(result.files_copied) / s);
  run.counter("items_per_second", double(result.files_copied) / s);
  run.counter("cpu_util", result.cpu_seconds / (s * usable_cores()));
  run.counter("residency_before", f);
  run.record().extra = {{"bytes", result.bytes_copied},
                        {"files", result.files_copied},
                        {"cpu_seconds", result.cpu_seconds},
                        {"verify", verify},
                        {"workers", workers}};
  run.finish();
}

}  // namespace feedbench
