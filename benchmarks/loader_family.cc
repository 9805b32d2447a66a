// The loader family: one simulated training run (harness/loader.cc) per repetition, from a
// cold or warm page cache, against the source or cache path. The timed part is the measured
// steps (warm-up excluded); the counters say how much of each step the accelerator waited.
#include <cstdio>
#include <string>

#include "case_run.h"
#include "families.h"
#include "feedbench/error.h"
#include "feedbench/loader.h"
#include "feedbench/units.h"

namespace feedbench {
namespace {

LoaderOptions options_of(const Case& c) {
  LoaderOptions o;
  o.batch_size = int(c.integer("batch_size"));
  o.workers = int(c.integer("workers"));
  o.prefetch = int(c.integer("prefetch"));
  o.step_time = parse_distribution(c.str("step_time"), "step_time");
  o.transform = parse_transform(c.str("transform"), "transform");
  o.epochs = int(c.integer("epochs"));
  o.steps = c.integer("steps");
  o.warmup_steps = int(c.integer("warmup_steps"));
  o.accelerators = int(c.integer("accelerators"));
  o.seed = c.seed;
  return o;
}

std::unique_ptr<SampleSource> source_of(const Case& c, const FileSet& files,
                                        std::shared_ptr<Throttle> throttle) {
  const std::string samples = c.str("samples");
  const std::string engine = c.str("engine");
  if (samples == "memory") return make_memory_source(files);
  if (samples.starts_with("records:"))
    return make_record_source(files, parse_size(samples.substr(8), "samples"), engine, 1 << 20,
                              std::move(throttle));
  return make_file_source(files, engine, 1 << 20, std::move(throttle));
}

}  // namespace

void run_loader_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  const FileSet* files = run.selection(c.str("path"));
  if (!files) return;

  const std::string cache_state = c.str("cache_state");
  if (cache_state != "cold" && cache_state != "warm")
    return run.skip("the loader reads through the page cache: cache_state must be cold or warm, not " +
                cache_state);
  const bool calibration = c.str("samples") == "memory";
  const double target = c.has("target_au") ? c.number("target_au") : 0.90;

  LoaderResult result;
  try {
    LoaderOptions options = options_of(c);
    std::unique_ptr<SampleSource> source = source_of(c, *files, run.throttle(c.str("path")));

    // Untimed preparation; a calibration run does no I/O, so its cache state is moot.
    if (!run.prepare_cache_state(cache_state, *files)) return;

    LoaderSim sim(options, *source);
    for (auto _ : state) {
      result = sim.run();
      state.SetIterationTime(result.measured_s > 0 ? result.measured_s : 1e-9);
    }
  } catch (const std::exception& e) {  // RunError, or InputError from a source's set-up
    return run.skip(e.what());
  }

  const Histogram& h = result.wait_ns;
  run.counter("samples_per_second", result.samples_per_second);
  run.counter("bytes_per_second", result.bytes_per_second);
  run.counter("steps", double(result.steps));
  run.counter("epoch_s", result.epoch_s);
  run.counter("wait_p50_ms", h.quantile(0.50) / 1e6);
  run.counter("wait_p90_ms", h.quantile(0.90) / 1e6);
  run.counter("wait_p99_ms", h.quantile(0.99) / 1e6);
  run.counter("wait_max_ms", double(h.max()) / 1e6);
  run.counter("stall_fraction", result.stall_fraction);
  run.counter("au", result.au);
  run.counter("cpu_util", result.cpu_util);
  run.counter("residency_before", run.record().cache["residency_before"].get<double>());

  const bool cpu_bound =
      loader_cpu_bound(result.au, target, result.cpu_util, result.read_s, result.transform_s);
  const std::string verdict = loader_verdict(result.au, result.stall_fraction, target, cpu_bound,
                                             result.read_s, result.transform_s);
  run.record().extra = {{"verdict", verdict},
                  {"au_per_accelerator", result.au_per_trainer},
                  {"min_au", result.min_au},
                  {"target_au", target},
                  {"cpu_bound", cpu_bound},
                  {"calibration", calibration},
                  {"samples", result.samples},
                  {"bytes", result.bytes},
                  {"warmup_steps", result.warmup_steps},
                  {"wait_s", result.wait_s},
                  {"compute_s", result.compute_s},
                  {"read_s", result.read_s},
                  {"transform_s", result.transform_s}};
  run.record_round(result.bytes_planned, result.bytes, result.bytes >= result.bytes_planned,
                   result.bytes >= result.bytes_planned
                       ? ""
                       : "files of the selection shrank or vanished since the scan");
  if (!calibration) run.record_opens(result.opens.noatime, result.opens.plain);
  run.record().latency = result.wait_ns;
  // A calibration run does no I/O: its cache state is moot, so its label does not flag it.
  run.finish(verdict, /*flag_cache_state=*/!calibration);
}

}  // namespace feedbench
