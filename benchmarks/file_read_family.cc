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
namespace {

// The runtime the config asked for, capped by --budget's choice.
struct Runtime {
  std::int64_t ns = 0;         // 0: no limit (the round is not time-based)
  const char* from = nullptr;  // "config" or "--budget"
};

Runtime runtime_of(const Case& c) {
  Runtime r;
  if (c.file_read().runtime) r = {c.file_read().runtime->count(), "config"};
  if (c.budget_runtime_ns > 0 && (r.ns == 0 || c.budget_runtime_ns < r.ns))
    r = {c.budget_runtime_ns, "--budget"};
  return r;
}

// `tiered`: the round reads a partial cache, whose files a skew ranks by the source's.
WorkloadSpec workload_spec(const Case& c, const RunContext& context, bool tiered, std::uint64_t round) {
  const FileReadParameters& p = c.file_read();
  WorkloadSpec spec;
  spec.pattern = p.pattern.pattern;
  if (spec.pattern == Pattern::skewed) {
    spec.skew = p.pattern.skew;
    if (tiered) spec.rank_by = &*context.source;
  }
  spec.block_size = p.block_size;
  spec.workers = unsigned(p.workers);
  spec.seed = c.seed;
  spec.round = round;
  if (p.max_bytes) spec.max_bytes = *p.max_bytes;
  return spec;
}

RoundOptions round_options(const Case& c, const CaseRun& run, const RunContext& context,
                           const WorkloadSpec& spec, bool direct, std::int64_t runtime_ns) {
  const FileReadParameters& p = c.file_read();
  RoundOptions options;
  options.engine = p.engine;
  options.engine_options.direct = direct;
  options.engine_options.queue_depth = unsigned(p.queue_depth);
  options.engine_options.block_size = spec.block_size;
  options.engine_options.throttle = run.throttle(p.path);
  options.workers = spec.workers;
  options.record_latency = context.record_latency;
  options.runtime_ns = runtime_ns;
  if (p.ramp_time) options.ramp_ns = p.ramp_time->count();
  options.steady_state = p.steady_state;
  if (p.sink.value_or("host") == "gpu") {
    // One staging ring per worker, as deep as its queue, each slot one block.
    const std::size_t depth = options.engine_options.queue_depth, slot = spec.block_size;
    options.copy_engine = [depth, slot](unsigned, std::string* failed) {
      return make_cuda_copy_engine(depth, slot, 0, failed);
    };
  }
  return options;
}

// Google Benchmark's loop: one round per iteration over `files`, across ranks when the run has
// several (`selection`: the whole they split). RETURNS: the last round's figures, or nullopt
// after skipping the case with a round's error.
std::optional<RoundStats> measure(CaseRun& run, benchmark::State& state, const FileSet& files,
                                  Workload& workload, const RoundOptions& options, const FileSet& selection) {
  RoundStats stats;
  if (run.many()) {
    std::optional<AcrossRanks> across;
    for (auto _ : state) {
      across = run_round_across_ranks(run.cluster(), files, workload, options, run.share_mode(), selection);
      if (!across->error.empty()) break;
      state.SetIterationTime(across->round.seconds);
    }
    if (!across->error.empty()) {
      run.skip(across->error);
      return std::nullopt;
    }
    stats = std::move(across->stats);
    // Across ranks `extra` holds the ranks, hosts and stragglers; stats are the totals.
    run.record().extra = across->extra;
  } else {
    for (auto _ : state) {
      stats = run_round(files, workload, options);
      if (!stats.error.empty()) break;
      state.SetIterationTime(stats.seconds());
    }
    if (!stats.error.empty()) {
      run.skip(stats.error);
      return std::nullopt;
    }
  }
  return stats;
}

void round_counters(CaseRun& run, const RoundStats& stats, double residency, unsigned workers) {
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
    run.counter("copy_bound_share", double(stats.sink->blocked_ns) / (s * 1e9 * double(workers)));
  }
}

nlohmann::json sink_json(const SinkStats& sink) {
  return {{"to", "gpu"},
          {"bytes", sink.bytes},
          {"copies", sink.copies},
          {"blocked_s", double(sink.blocked_ns) * 1e-9},
          {"copy_us",
           {{"p50", sink.copy_ns.quantile(0.5) / 1e3},
            {"p90", sink.copy_ns.quantile(0.9) / 1e3},
            {"p99", sink.copy_ns.quantile(0.99) / 1e3},
            {"max", double(sink.copy_ns.max()) / 1e3}}}};
}

// Records in `extra` what limited the round: what ended it (a round cut by runtime or steady
// state is a complete time-based round, its figures the bytes and time of what it read, not a
// short one), its limits, its ramp and its steady state. RETURNS: the label's note, "steady
// state not reached" or "".
std::string record_limits(CaseRun& run, const RoundStats& stats, const Workload& workload,
                          const RoundOptions& options, const Runtime& runtime, std::uint64_t max_bytes) {
  nlohmann::json& extra = run.record().extra;
  extra["limited_by"] = !stats.stopped_by.empty()                               ? stats.stopped_by
                        : workload.planned_bytes() < workload.full_pass_bytes() ? "max_bytes"
                                                                                : "end_of_selection";
  extra["time_based"] = runtime.ns > 0;
  if (runtime.ns > 0) {
    extra["runtime_s"] = double(runtime.ns) / 1e9;
    extra["runtime_from"] = runtime.from;
  }
  if (max_bytes > 0) extra["max_bytes"] = max_bytes;
  if (options.ramp_ns > 0) {
    extra["ramp_time_s"] = double(options.ramp_ns) / 1e9;
    extra["ramp_bytes"] = stats.ramp_bytes;
    extra["ramp_elapsed_s"] = double(stats.ramp_elapsed_ns) / 1e9;
  }
  if (!options.steady_state || !stats.steady_state) return "";
  const SteadyStateResult& ss = *stats.steady_state;
  extra["steady_state"] = {{"criterion", format_steady_state(*options.steady_state)},
                           {"reached", ss.reached},
                           {"samples", ss.samples}};
  if (ss.reached) extra["steady_state"]["reached_after_s"] = ss.reached_after_s;
  if (std::isfinite(ss.value_percent)) extra["steady_state"]["value_percent"] = ss.value_percent;
  return ss.reached ? "" : "steady state not reached";
}

}  // namespace

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  // A partial cache (a hot set): path cache reads what it holds from it, the rest from the source.
  const FileReadParameters& p = c.file_read();
  const CaseRun::FilesToRead to_read = run.files_to_read(p.path);
  const FileSet* selected = to_read.get();
  const std::string& cache_state = p.cache_state;
  const bool direct = cache_state == "direct" || p.engine == "libaio";
  std::string memory_fs;  // set when O_DIRECT is accepted but no device is behind it
  if (selected && direct && !run.stopping()) {
    run.note_stop(probe_direct_io(selected->root()));
    std::string fs;
    if (!run.stopping() && !direct_reaches_device(selected->root(), &fs)) memory_fs = fs;
  }
  if (p.sink.value_or("host") == "gpu") run.need_cuda_device();  // skipped, the run goes on
  const std::uint64_t round = run.repetition();                  // each repetition its own epoch
  ShareOfRound share;
  run.share_among_ranks(selected, round, share);
  if (!run.agree()) return;
  const bool many = run.many();
  const FileSet* files = many ? &*share.mine : selected;

  // Untimed preparation: eviction or warming, then residency as the round starts; across
  // ranks once per host, over what that host's ranks read.
  const std::optional<double> residency =
      run.prepare(cache_state, *files, share.host ? *share.host : *selected);
  if (!residency) return;

  const WorkloadSpec spec = workload_spec(c, context, to_read.tiered.has_value(), round);
  Workload workload(*files, spec);
  const Runtime runtime = runtime_of(c);
  const RoundOptions options = round_options(c, run, context, spec, direct, runtime.ns);
  const std::optional<RoundStats> measured = measure(run, state, *files, workload, options, *selected);
  if (!measured) return;
  const RoundStats& stats = *measured;

  round_counters(run, stats, *residency, spec.workers);
  nlohmann::json& extra = run.record().extra;
  extra.update({{"bytes", stats.bytes},
                {"reads", stats.reads},
                {"files", stats.files},
                {"whole_file_reads", stats.whole_file_reads},
                {"cpu_seconds", stats.cpu_seconds},
                {"latency_recorded", context.record_latency}});
  if (stats.sink) extra["sink"] = sink_json(*stats.sink);
  if (!many) extra["selection_bytes"] = workload.full_pass_bytes();
  if (spec.pattern == Pattern::skewed && context.source) {
    // The hit share, counted over the round's draws.
    std::vector<std::uint64_t> reads(files->size(), 0);
    for (std::uint32_t f : workload.order()) ++reads[f];
    run.record_hit_share(to_read.tiered ? *context.source : *files, reads, to_read.tiered.has_value(),
                         p.path);
  }
  const std::string label_note = record_limits(run, stats, workload, options, runtime, spec.max_bytes);
  run.record_reads(stats);
  if (context.record_latency) run.record().latency = stats.latency;
  if (direct) extra["direct_reaches_device"] = memory_fs.empty();
  std::string label = memory_fs.empty() ? "" : "direct requested, served from memory (" + memory_fs + ")";
  if (!label_note.empty()) label = label.empty() ? label_note : label + "; " + label_note;
  run.finish(label);
}

}  // namespace feedbench
