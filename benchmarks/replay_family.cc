// The replay family: a watched job's data loading run again (harness/replay) through the
// loader's LoaderSim — the recorded batches in order, built by the recorded workers with the
// recorded prefetch, CPU time and start-up, consumed with the recorded steps and hand-over —
// from a cold or warm page cache, on the source or the cache path. Its figures and verdict are
// the loader's (loader_record.h), so a replay diffs against the watched job and against
// another machine's replay.
#include <memory>
#include <optional>
#include <string>

#include "case_run.h"
#include "families.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/units.h"
#include "feedbench/io/device_reads.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/loader/loader.h"
#include "feedbench/replay/recorded_job.h"
#include "loader_record.h"

namespace feedbench {
namespace {

ReplayKnobs replay_knobs(const Case& c) {
  const ReplayParameters& p = c.replay();
  ReplayKnobs k;
  if (p.step_scale) k.step_scale = *p.step_scale;
  if (p.workers) k.workers = *p.workers;
  if (p.batch_size) k.batch_size = *p.batch_size;
  if (p.epochs) k.epochs = *p.epochs;
  if (p.cpu_scale) k.cpu_scale = *p.cpu_scale;
  return k;
}

// RETURNS: the CPU time the job spent outside its fetches, as recorded, in ms: its workers'
// start-up and hand-overs, its trainer's taking batches and stepping.
nlohmann::json recorded_cpu_outside_fetches_ms(const RecordedJob& job) {
  double startup = 0, after = 0, take = 0, step = 0;
  for (const RecordedPass& p : job.passes) {
    startup += double(p.startup_cpu_ns) * p.workers;
    for (const RecordedBatch& b : p.batches)
      after += double(b.after_cpu_ns), take += double(b.take_cpu_ns), step += double(b.step_cpu_ns);
  }
  return {{"worker_startup", startup / 1e6},
          {"worker_handover", after / 1e6},
          {"trainer_take", take / 1e6},
          {"trainer_step", step / 1e6}};
}

// RETURNS: the mean of the steps the replay asks, in seconds (the recorded steps × step_scale,
// over the epochs it runs; 0 without a step): the step one accelerator's need is said at
// (loader_demand.h), not the measured compute, which a loaded host's late wake-ups lengthen.
double asked_step_s(const RecordedLoading& loading) {
  const auto passes = std::int64_t(loading.passes.size());
  double sum = 0, steps = 0;
  for (std::int64_t p = 0; p < passes; ++p) {
    // Epoch e replays pass e % passes: this pass runs this many times.
    const std::int64_t runs_whole = loading.epochs / passes + (p < loading.epochs % passes ? 1 : 0);
    const auto runs = double(runs_whole);
    for (const RecordedLoading::Batch& b : loading.passes[std::size_t(p)].batches)
      if (b.step_ns >= 0) sum += runs * double(b.step_ns), steps += runs;
  }
  return steps > 0 ? sum / steps * 1e-9 : 0;
}

}  // namespace

void run_replay_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  if (run.many()) run.note_stop("replay runs a recorded job in one process: run it without mpirun");
  const ReplayParameters& p = c.replay();
  const std::string& path = p.path;
  const CaseRun::FilesToRead to_read = run.files_to_read(path);
  if (!run.agree()) return;
  const FileSet* files = to_read.get();
  const std::string& cache_state = p.cache_state;
  const double target = p.target_au.value_or(0.90);
  const auto found = context.recorded_jobs.find(p.trace);
  FB_CHECK(found != context.recorded_jobs.end(), "the run reads every replayed trace before its cases");
  const RecordedJob& job = *found->second;

  std::optional<LoaderResult> result;
  std::optional<FileSet> replayed;  // the recorded files, in the recording's order
  std::shared_ptr<DeviceReads> devices;
  std::unique_ptr<SampleSource> source;
  LoaderOptions options;
  double step_asked_s = 0;
  try {
    // The recorded files by their paths under the root (a partial cache's, index for index with
    // its source); only they are evicted, warmed and counted.
    replayed.emplace(recorded_file_set(job, to_read.tiered ? *context.source : *files, *files,
                                       p.allow_resized.value_or(false)));
    const FileSet& set = *replayed;
    const ReplayKnobs knobs = replay_knobs(c);
    auto loading = std::make_shared<RecordedLoading>(replay_loading(job, knobs));
    options.recorded = loading;
    step_asked_s = asked_step_s(*loading);
    options.epochs = loading->epochs;
    for (const RecordedLoading::Epoch& e : loading->passes)
      options.workers = std::max(options.workers, e.workers);
    options.prefetch = loading->passes.front().prefetch;
    options.batch_size = int(std::clamp<std::int64_t>(
        p.batch_size ? std::int64_t{*p.batch_size} : job.passes.front().batch_size, 1, 1 << 24));
    options.warmup_steps = 0;
    // The trainer's own cost of taking a ready batch, as the job paid it (recorded_job.h); none
    // where the what-if loads in the trainer's process what the job's workers handed over.
    const bool in_process = knobs.workers == 0 && !job.passes.empty() && job.passes.front().workers > 0;
    options.next_cost_ns = in_process ? 0 : job.handover_ns;
    source = make_recorded_source(set, job.reads, job.samples, "psync", run.throttle(path));
    options.residency = [&set] { return measure_residency(set).fraction(); };
    devices = std::make_shared<DeviceReads>(set);
    options.device_read_bytes = [d = devices] { return d->bytes_read(); };
    if (std::int64_t(options.workers) > kMaxLoaderThreads)
      run.note_stop("workers " + std::to_string(options.workers) +
                    ": more reader threads than the limit of " + std::to_string(kMaxLoaderThreads));
    LoaderSim sim(options, *source);
    run.note_stop(sim.schedule().refused);
    if (!run.agree()) return;
    if (!run.prepare(cache_state, set, set)) return;
    for (auto _ : state) {
      result = sim.run();
      state.SetIterationTime(result->measured_s > 0 ? result->measured_s : 1e-9);
    }
  } catch (const std::exception& e) {
    return run.skip(e.what());
  }
  if (!result) return;
  loader_counters(run, *result);
  std::optional<LoaderLimits> limits;
  const std::vector<EpochRereads> rereads =
      loader_epoch_rereads(options, result->schedule, source->count(), nullptr);
  if (result->judged()) limits = loader_limits("recorded", *result, target, devices.get(), rereads);
  const std::string verdict = loader_run_verdict("recorded", *result, std::nullopt, target, false,
                                                 devices.get(), limits ? &limits->run : nullptr);
  const std::uint64_t available = available_memory_bytes();
  nlohmann::json& extra = run.record().extra;
  extra = loader_run_json(*result, verdict, target, limits, false, replayed->total_bytes(), available);
  if (devices->available()) extra["devices"] = devices->names();
  extra["asked_step_s"] = step_asked_s;
  extra["replay"] = {{"trace", job.trace},
                     {"job", job.name},
                     {"recorded_root", job.data_root},
                     {"recorded_au", job.au},
                     {"recorded_reads", job.reads.size()},
                     {"recorded_bytes", job.bytes()},
                     {"recorded_files", job.files.size()},
                     {"recorded_passes", job.passes.size()},
                     {"handover_ms", double(job.handover_ns) / 1e6},
                     {"recorded_cpu_outside_fetches_ms", recorded_cpu_outside_fetches_ms(job)},
                     {"reads_left_out",
                      {{"outside_batches", job.reads_outside},
                       {"empty", job.reads_empty},
                       {"untaken_batches", job.reads_untaken}}},
                     {"bytes_per_recorded_read", job.bytes_per_read()}};
  const std::string note =
      loader_memory_note(*result, files->total_bytes(), available, run.throttle(path).get());
  if (!note.empty()) extra["memory_note"] = note;
  run.record_reads(*result);
  run.record().latency = result->wait_ns;
  run.finish(verdict);
}

}  // namespace feedbench
