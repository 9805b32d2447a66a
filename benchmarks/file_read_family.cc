// The file_read family: one round over the selected files with a pattern, block size, engine,
// queue depth and worker count, from a cold, warm or direct (O_DIRECT) start. A round reads the
// selection at most once; runtime, max_bytes (and --budget) may end it sooner, ramp_time is
// read and left out of the figures, and steady_state may end a time-based round early.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "case_run.h"
#include "cluster_round.h"
#include "families.h"
#include "feedbench/base/units.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/skew.h"
#include "feedbench/io/workload.h"

namespace feedbench {

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  Cluster& cluster = context.ranks();
  const bool many = cluster.size() > 1;
  // Every reason to stop before the round is agreed by all ranks, so none waits for one that left.
  std::string why;
  // A partial cache (a hot set): path cache reads what it holds from it, the rest from the source.
  const CaseRun::FilesToRead to_read = run.files_to_read(c.str("path"), &why);
  const FileSet* selected = to_read.get();

  const std::string cache_state = c.str("cache_state");
  const std::string engine = c.str("engine");
  const bool direct = cache_state == "direct" || engine == "libaio";
  std::string memory_fs;  // set when O_DIRECT is accepted but no device is behind it
  if (selected && direct && why.empty()) {
    why = probe_direct_io(selected->root());
    std::string fs;
    if (why.empty() && !direct_reaches_device(selected->root(), &fs)) memory_fs = fs;
  }
  const bool gpu_sink = c.has("sink") && c.str("sink") == "gpu";
  if (why.empty() && gpu_sink) cuda_device_count(&why);  // "no CUDA device: ...": skipped, the run goes on
  const std::uint64_t round =
      context.log.all(run.record().case_name).size();  // each repetition its own epoch
  const std::string share_mode = context.config ? context.config->share : "per_rank";
  ShareOfRound share;
  if (why.empty() && many) why = share_round(cluster, *selected, share_mode, c.seed, round, share);
  if (!run.agree(why)) return;
  const FileSet* files = many ? &*share.mine : selected;

  // Untimed preparation: eviction or warming, then residency as the round starts; across
  // ranks once per host, over what that host's ranks read.
  const std::optional<double> prepared =
      many ? run.prepare_cache_state_per_host(cache_state, share.host ? *share.host : *selected)
           : run.prepare_cache_state(cache_state, *files);
  if (!prepared) return;
  const double residency = *prepared;

  WorkloadSpec spec;
  spec.pattern = parse_pattern(c.str("pattern"));
  if (spec.pattern == Pattern::skewed) {
    spec.skew = parse_skew(c.str("pattern"));
    if (to_read.tiered) spec.rank_by = &*context.source;
  }
  spec.block_size = std::uint64_t(c.integer("block_size"));
  spec.workers = unsigned(c.integer("workers"));
  spec.seed = c.seed;
  spec.round = round;
  if (c.has("max_bytes")) spec.max_bytes = std::uint64_t(c.integer("max_bytes"));
  Workload workload(*files, spec);

  // The runtime the config asked for, capped by --budget's choice.
  std::int64_t runtime_ns = c.has("runtime") ? parse_duration_ns(c.str("runtime")) : 0;
  const char* runtime_from = c.has("runtime") ? "config" : nullptr;
  if (c.budget_runtime_ns > 0 && (runtime_ns == 0 || c.budget_runtime_ns < runtime_ns)) {
    runtime_ns = c.budget_runtime_ns;
    runtime_from = "--budget";
  }

  RoundOptions options;
  options.engine = engine;
  options.engine_options.direct = direct;
  options.engine_options.queue_depth = unsigned(c.integer("queue_depth"));
  options.engine_options.block_size = spec.block_size;
  options.engine_options.throttle = run.throttle(c.str("path"));
  options.workers = spec.workers;
  options.record_latency = context.record_latency;
  options.runtime_ns = runtime_ns;
  if (c.has("ramp_time")) options.ramp_ns = parse_duration_ns(c.str("ramp_time"));
  if (c.has("steady_state")) options.steady_state = parse_steady_state(c.str("steady_state"));
  if (gpu_sink) {
    // One staging ring per worker, as deep as its queue, each slot one block.
    const std::size_t depth = options.engine_options.queue_depth, slot = spec.block_size;
    options.copy_engine = [depth, slot](unsigned, std::string* failed) {
      return make_cuda_copy_engine(depth, slot, 0, failed);
    };
  }

  RoundStats stats;
  if (many) {
    std::optional<AcrossRanks> across;
    for (auto _ : state) {
      across = run_round_across_ranks(cluster, *files, workload, options, share_mode, *selected);
      if (!across->error.empty()) break;
      state.SetIterationTime(across->round.seconds);
    }
    if (!across->error.empty()) return run.skip(across->error);
    stats = std::move(across->stats);
    run.record().extra = across->extra;
  } else {
    for (auto _ : state) {
      stats = run_round(*files, workload, options);
      if (!stats.error.empty()) break;
      state.SetIterationTime(stats.seconds());
    }
    if (!stats.error.empty()) return run.skip(stats.error);
  }

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
  if (stats.sink) {
    // The copy engine's own rate, and the share of the workers' time spent waiting for a free
    // staging slot: near 1, the copy to the GPU, not storage, sets the pace.
    run.copy_counters(*stats.sink);
    run.counter("copy_bound_share", double(stats.sink->blocked_ns) / (s * 1e9 * double(spec.workers)));
  }

  // Across ranks `extra` already holds the ranks, hosts and stragglers; stats are the totals.
  nlohmann::json& base = run.record().extra;
  base.update({{"bytes", stats.bytes},
               {"reads", stats.reads},
               {"files", stats.files},
               {"whole_file_reads", stats.whole_file_reads},
               {"cpu_seconds", stats.cpu_seconds},
               {"latency_recorded", context.record_latency}});
  // What ended the round. A round cut by runtime or steady state is a complete time-based
  // round (its figures are the bytes and time of what it read), not a short one.
  nlohmann::json& extra = run.record().extra;
  const std::string limited_by = !stats.stopped_by.empty()                               ? stats.stopped_by
                                 : workload.planned_bytes() < workload.full_pass_bytes() ? "max_bytes"
                                                                                         : "end_of_selection";
  extra["limited_by"] = limited_by;
  if (stats.sink)
    extra["sink"] = {{"to", "gpu"},
                     {"bytes", stats.sink->bytes},
                     {"copies", stats.sink->copies},
                     {"blocked_s", double(stats.sink->blocked_ns) * 1e-9},
                     {"copy_us",
                      {{"p50", stats.sink->copy_ns.quantile(0.5) / 1e3},
                       {"p90", stats.sink->copy_ns.quantile(0.9) / 1e3},
                       {"p99", stats.sink->copy_ns.quantile(0.99) / 1e3},
                       {"max", double(stats.sink->copy_ns.max()) / 1e3}}}};
  extra["time_based"] = runtime_ns > 0;
  if (!many) extra["selection_bytes"] = workload.full_pass_bytes();
  if (runtime_ns > 0) {
    extra["runtime_s"] = double(runtime_ns) / 1e9;
    extra["runtime_from"] = runtime_from;
  }
  if (spec.max_bytes > 0) extra["max_bytes"] = spec.max_bytes;
  if (spec.pattern == Pattern::skewed && context.source) {
    // The hit share, counted over the round's draws.
    std::vector<std::uint64_t> reads(files->size(), 0);
    for (std::uint32_t f : workload.order()) ++reads[f];
    run.record_hit_share(to_read.tiered ? *context.source : *files, reads, to_read.tiered.has_value(),
                         c.str("path"));
  }
  if (options.ramp_ns > 0) {
    extra["ramp_time_s"] = double(options.ramp_ns) / 1e9;
    extra["ramp_bytes"] = stats.ramp_bytes;
    extra["ramp_elapsed_s"] = double(stats.ramp_elapsed_ns) / 1e9;
  }
  std::string label_note;
  if (options.steady_state && stats.steady_state) {
    const SteadyStateResult& ss = *stats.steady_state;
    extra["steady_state"] = {
        {"criterion", c.str("steady_state")}, {"reached", ss.reached}, {"samples", ss.samples}};
    if (ss.reached) extra["steady_state"]["reached_after_s"] = ss.reached_after_s;
    if (std::isfinite(ss.value_percent)) extra["steady_state"]["value_percent"] = ss.value_percent;
    if (!ss.reached) label_note = "steady state not reached";
  }
  run.record_reads(stats);
  if (context.record_latency) run.record().latency = stats.latency;
  if (direct) run.record().extra["direct_reaches_device"] = memory_fs.empty();
  std::string label = memory_fs.empty() ? "" : "direct requested, served from memory (" + memory_fs + ")";
  if (!label_note.empty()) label = label.empty() ? label_note : label + "; " + label_note;
  run.finish(label);
}

}  // namespace feedbench
