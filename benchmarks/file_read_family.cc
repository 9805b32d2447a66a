// The file_read family: one round over the selected files with a pattern, block size, engine,
// queue depth and worker count, from a cold, warm or direct (O_DIRECT) start.
#include <string>

#include "case_run.h"
#include "families.h"
#include "feedbench/page_cache.h"
#include "feedbench/runner.h"
#include "feedbench/workload.h"

namespace feedbench {

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  const FileSet* files = run.selection(c.str("path"));
  if (!files) return;

  const std::string cache_state = c.str("cache_state");
  const std::string engine = c.str("engine");
  const bool direct = cache_state == "direct" || engine == "libaio";
  std::string memory_fs;  // set when O_DIRECT is accepted but no device is behind it
  if (direct) {
    std::string why = probe_direct_io(files->root());
    if (!why.empty()) return run.skip(why);
    std::string fs;
    if (!direct_reaches_device(files->root(), &fs)) memory_fs = fs;
  }

  // Untimed preparation: eviction or warming, then residency as the round starts.
  const std::optional<double> prepared = run.prepare_cache_state(cache_state, *files);
  if (!prepared) return;
  const double residency = *prepared;

  WorkloadSpec spec;
  spec.pattern = parse_pattern(c.str("pattern"));
  spec.block_size = std::uint64_t(c.integer("block_size"));
  spec.workers = unsigned(c.integer("workers"));
  spec.seed = c.seed;
  spec.round = context.log.all(run.record().case_name).size();  // each repetition its own epoch
  Workload workload(*files, spec);

  RoundOptions options;
  options.engine = engine;
  options.engine_options.direct = direct;
  options.engine_options.queue_depth = unsigned(c.integer("queue_depth"));
  options.engine_options.block_size = spec.block_size;
  options.engine_options.throttle = run.throttle(c.str("path"));
  options.workers = spec.workers;
  options.record_latency = context.record_latency;

  RoundStats stats;
  for (auto _ : state) {
    stats = run_round(*files, workload, options);
    if (!stats.error.empty()) break;
    state.SetIterationTime(stats.seconds());
  }
  if (!stats.error.empty()) return run.skip(stats.error);

  const double s = stats.seconds() > 0 ? stats.seconds() : 1e-9;
  run.counter("bytes_per_second", double(stats.bytes) / s, /*binary=*/true);
  run.counter("items_per_second", double(stats.reads) / s);
  run.counter("files_per_second", double(stats.files) / s);
  const Histogram& h = stats.latency;
  run.counter("lat_p50_us", h.quantile(0.50) / 1e3);
  run.counter("lat_p90_us", h.quantile(0.90) / 1e3);
  run.counter("lat_p99_us", h.quantile(0.99) / 1e3);
  run.counter("lat_p999_us", h.quantile(0.999) / 1e3);
  run.counter("lat_max_us", double(h.max()) / 1e3);
  run.counter("residency_before", residency);
  run.counter("cpu_util", stats.cpu_util);

  run.record().extra = {{"bytes", stats.bytes}, {"reads", stats.reads}, {"files", stats.files},
                        {"cpu_seconds", stats.cpu_seconds},
                        {"latency_recorded", context.record_latency}};
  run.record_round(stats.bytes_planned, stats.bytes, stats.complete(), stats.incomplete);
  run.record_opens(stats.noatime_opens, stats.files - stats.noatime_opens);
  if (context.record_latency) run.record().latency = stats.latency;
  if (direct) run.record().extra["direct_reaches_device"] = memory_fs.empty();
  run.finish(memory_fs.empty() ? "" : "direct requested, served from memory (" + memory_fs + ")");
}

}  // namespace feedbench
