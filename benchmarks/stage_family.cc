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

#include "families.h"
#include "feedbench/page_cache.h"
#include "feedbench/stager.h"
#include "progress.h"

namespace feedbench {
namespace {

constexpr double kColdMax = 0.01;  // the same thresholds as file_read (issue 2)
constexpr double kWarmMin = 0.99;

// RETURNS: a new empty folder "<cache>/.feedbench-stage-bench-<pid>-<n>.fbtmp" (the suffix marks
// it as feedbench's temporary), or "" with errno set.
std::string make_scratch(const std::string& cache_root) {
  for (int n = 0; n < 1000; ++n) {
    std::string dir = cache_root + "/.feedbench-stage-bench-" + std::to_string(::getpid()) + "-" +
                      std::to_string(n) + ".fbtmp";
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    if (errno != EEXIST) return "";
  }
  return "";
}

void set_counter(benchmark::State& state, const char* name, double value,
                 benchmark::Counter::OneK k = benchmark::Counter::kIs1000) {
  state.counters[name] = benchmark::Counter(value, benchmark::Counter::kDefaults, k);
}

}  // namespace

void run_stage_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRecord record;
  record.case_name = c.name();
  record.params = c.params;
  auto skip = [&](const std::string& why) {
    state.SkipWithError(why.c_str());
    record.skipped = why;
    context.log.add(std::move(record));
  };

  const FileSet* source = context.files_for("source");
  if (!source) return skip("no source root in the config's dataset");
  if (source->empty()) return skip("the source selection holds no files");
  const std::string cache_root = context.config ? context.config->cache_root : "";
  if (cache_root.empty())
    return skip("no cache root in the config's dataset: the stage family stages into a scratch "
                "folder inside it (set dataset.cache or --cache)");
  std::error_code ec;
  if (!std::filesystem::is_directory(cache_root, ec))
    return skip("the cache root " + cache_root + " is not an existing folder");

  const std::string cache_state = c.str("cache_state");
  const int workers = int(c.integer("workers"));
  const bool verify = c.params.contains("verify") ? c.params["verify"].get<bool>() : true;

  const std::string scratch = make_scratch(cache_root);
  if (scratch.empty()) return skip("cannot create a scratch folder in " + cache_root + ": " + std::strerror(errno));

  // Untimed preparation: the source cold or warm, residency measured as the round starts.
  Residency r;
  {
    ProgressLine line(context.show_progress);
    r = cache_state == "cold" ? evict(*source, line.callback("evicting"))
                              : warm(*source, line.callback("warming"));
  }
  const double f = r.fraction();
  const bool achieved = cache_state == "cold" ? f <= kColdMax : f >= kWarmMin;
  record.cache = {{"requested", cache_state}, {"residency_before", f}, {"achieved", achieved},
                  {"method", r.method}};

  StageOptions options;
  options.source_root = source->root();
  options.cache_root = scratch;
  options.include = context.config->include;
  options.workers = workers;
  options.verify = verify;
  options.quiet = true;

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
  if (!failure.empty()) return skip("staging failed: " + failure);

  const double s = result.seconds > 0 ? result.seconds : 1e-9;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  set_counter(state, "bytes_per_second", double(result.bytes_copied) / s, benchmark::Counter::kIs1024);
  set_counter(state, "files_per_second", double(result.files_copied) / s);
  set_counter(state, "items_per_second", double(result.files_copied) / s);
  set_counter(state, "cpu_util", result.cpu_seconds / (s * cores));
  set_counter(state, "residency_before", f);
  record.extra = {{"bytes", result.bytes_copied}, {"files", result.files_copied},
                  {"cpu_seconds", result.cpu_seconds}, {"verify", verify}, {"workers", workers}};
  if (!achieved) {
    char label[96];
    std::snprintf(label, sizeof label, "%s NOT achieved: %.1f%% resident", cache_state.c_str(), 100.0 * f);
    state.SetLabel(label);
  }
  context.log.add(std::move(record));
}

}  // namespace feedbench
