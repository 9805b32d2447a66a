// The file_read family: one round over the selected files with a pattern, block size, engine,
// queue depth and worker count, from a cold, warm or direct (O_DIRECT) start.
#include <cstdio>
#include <string>
#include <unistd.h>

#include "families.h"
#include "feedbench/page_cache.h"
#include "feedbench/runner.h"
#include "feedbench/workload.h"
#include "progress.h"

namespace feedbench {
namespace {

// The thresholds of issue 2: a cold round starts with at most 1% resident, a warm one with
// at least 99%. Anything else is recorded as not achieved, never reported as cold or warm.
constexpr double kColdMax = 0.01;
constexpr double kWarmMin = 0.99;

nlohmann::json prepare_cache_state(const std::string& state, const FileSet& files, bool progress) {
  ProgressLine line(progress);
  Residency r;
  if (state == "cold") {
    r = evict(files, line.callback("evicting"));
  } else if (state == "warm") {
    r = warm(files, line.callback("warming"));
  } else {
    r = measure_residency(files, line.callback("measuring residency"));
  }
  line.clear();
  double f = r.fraction();
  bool achieved = state == "cold" ? f <= kColdMax : state == "warm" ? f >= kWarmMin : true;
  return {{"requested", state}, {"residency_before", f}, {"achieved", achieved}, {"method", r.method}};
}

void set_counter(benchmark::State& state, const char* name, double value,
                 benchmark::Counter::OneK k = benchmark::Counter::kIs1000) {
  state.counters[name] = benchmark::Counter(value, benchmark::Counter::kDefaults, k);
}

}  // namespace

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRecord record;
  record.case_name = c.name();
  record.params = c.params;
  auto skip = [&](const std::string& why) {
    state.SkipWithError(why.c_str());
    record.skipped = why;
    context.log.add(std::move(record));
  };

  const std::string path_role = c.str("path");
  const FileSet* files = context.files_for(path_role);
  if (!files) return skip("no " + path_role + " root in the config's dataset");
  if (files->empty()) return skip("the " + path_role + " selection holds no files");
  if (path_role == "cache" && !context.cache_refusal.empty() && !context.allow_unverified_cache)
    return skip(context.cache_refusal);

  const std::string cache_state = c.str("cache_state");
  const std::string engine = c.str("engine");
  const bool direct = cache_state == "direct" || engine == "libaio";
  if (direct) {
    std::string why = probe_direct_io(files->root());
    if (!why.empty()) return skip(why);
  }

  // Untimed preparation: eviction or warming, then residency as the round starts.
  record.cache = prepare_cache_state(cache_state, *files, context.show_progress);

  WorkloadSpec spec;
  spec.pattern = parse_pattern(c.str("pattern"));
  spec.block_size = std::uint64_t(c.integer("block_size"));
  spec.workers = unsigned(c.integer("workers"));
  spec.seed = c.seed;
  spec.round = context.log.all(record.case_name).size();  // each repetition its own epoch
  Workload workload(*files, spec);

  RoundOptions options;
  options.engine = engine;
  options.engine_options.direct = direct;
  options.engine_options.queue_depth = unsigned(c.integer("queue_depth"));
  options.engine_options.block_size = spec.block_size;
  options.workers = spec.workers;
  options.record_latency = context.record_latency;

  RoundStats stats;
  for (auto _ : state) {
    stats = run_round(*files, workload, options);
    if (!stats.error.empty()) break;
    state.SetIterationTime(stats.seconds());
  }
  if (!stats.error.empty()) return skip(stats.error);

  const double s = stats.seconds() > 0 ? stats.seconds() : 1e-9;
  set_counter(state, "bytes_per_second", double(stats.bytes) / s, benchmark::Counter::kIs1024);
  set_counter(state, "items_per_second", double(stats.reads) / s);
  set_counter(state, "files_per_second", double(stats.files) / s);
  const Histogram& h = stats.latency;
  set_counter(state, "lat_p50_us", h.quantile(0.50) / 1e3);
  set_counter(state, "lat_p90_us", h.quantile(0.90) / 1e3);
  set_counter(state, "lat_p99_us", h.quantile(0.99) / 1e3);
  set_counter(state, "lat_p999_us", h.quantile(0.999) / 1e3);
  set_counter(state, "lat_max_us", double(h.max()) / 1e3);
  set_counter(state, "residency_before", record.cache["residency_before"].get<double>());
  set_counter(state, "cpu_util", stats.cpu_util);

  record.extra = {{"bytes", stats.bytes}, {"reads", stats.reads}, {"files", stats.files},
                  {"cpu_seconds", stats.cpu_seconds}, {"latency_recorded", context.record_latency}};
  if (!record.cache["achieved"].get<bool>()) {
    char label[96];
    std::snprintf(label, sizeof label, "%s NOT achieved: %.1f%% resident", cache_state.c_str(),
                  100.0 * record.cache["residency_before"].get<double>());
    state.SetLabel(label);
  }
  if (context.record_latency) record.latency = stats.latency;
  context.log.add(std::move(record));
}

}  // namespace feedbench
