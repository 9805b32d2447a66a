// The loader family: one simulated training run (harness/loader/loader.cc) per repetition, from a
// cold or warm page cache, against the source or cache path. The timed part is the measured
// steps (warm-up excluded); the counters say how much of each step the accelerator waited.
// A run the data set cannot hold is skipped with the size it needs; one with too few measured
// steps, or whose measured steps read less than they took, is recorded without a verdict; each
// epoch is recorded apart, with the page cache's share of the data set as it began.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "case_run.h"
#include "cluster_round.h"
#include "families.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/units.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/device_reads.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/skew.h"
#include "feedbench/loader/limit.h"
#include "feedbench/loader/loader.h"
#include "loader_record.h"

namespace feedbench {
namespace {

LoaderOptions options_of(const Case& c) {
  const LoaderParameters& p = c.loader();
  LoaderOptions o;
  o.batch_size = p.batch_size;
  o.workers = p.workers;
  o.prefetch = p.prefetch;
  o.step_time = p.step_time;
  o.transform = p.transform;
  o.epochs = p.epochs;
  o.steps = p.steps;
  o.warmup_steps = p.warmup_steps;
  o.accelerators = p.accelerators;
  o.seed = c.seed;
  if (p.pattern) o.skew = *p.pattern;
  if (p.shuffle_buffer) o.shuffle_buffer = std::size_t(*p.shuffle_buffer);
  if (p.collate.value_or("stack") == "list") o.collate = LoaderOptions::Collate::list;
  // The framework's costs first (PyTorch's unless set; a calibration measures the harness's own
  // stall, so it pays none unless asked), then what the case sets explicitly replaces them.
  const bool calibration = p.samples.kind == SampleFormat::Kind::memory;
  const bool pytorch = p.framework.value_or(calibration ? "none" : "pytorch") == "pytorch";
  loader_apply_framework(o, pytorch ? LoaderFramework::pytorch : LoaderFramework::none);
  if (p.handover)
    o.handover =
        *p.handover == "process" ? LoaderOptions::Handover::process : LoaderOptions::Handover::thread;
  if (p.next_cost) {  // the whole per-batch cost: the framework's per-tensor part is in it
    o.next_cost_ns = p.next_cost->count();
    o.next_cost_per_tensor_ns = 0;
  }
  if (p.next_cost_per_mib) o.next_cost_per_mib_ns = p.next_cost_per_mib->count();
  return o;
}

std::unique_ptr<SampleSource> source_of(const Case& c, const FileSet& files,
                                        std::shared_ptr<Throttle> throttle) {
  const LoaderParameters& p = c.loader();
  const std::string& engine = p.engine;
  switch (p.samples.kind) {
    case SampleFormat::Kind::memory: return make_memory_source(files);
    case SampleFormat::Kind::tfrecord:
      // TensorFlow's reader checks every data CRC unless told not to: so does this one.
      return make_tfrecord_source(files, engine, p.verify_crc.value_or(true), 1 << 20, std::move(throttle));
    case SampleFormat::Kind::records:
      return make_record_source(files, p.samples.record_bytes, engine, 1 << 20, std::move(throttle));
    case SampleFormat::Kind::files: break;
  }
  return make_file_source(files, engine, 1 << 20, std::move(throttle));
}

std::string percent(double f) { return format_percent(f); }

// An epoch that began with at least this share of the data set in the page cache read it
// from memory: the same rule as a warm round.
constexpr double kServedFromMemory = kWarmMinResident;

nlohmann::json epoch_json(const EpochFigures& f) {
  nlohmann::json j = {{"epoch", f.epoch},
                      {"steps", f.steps},
                      {"warmup_steps", f.warmup_steps},
                      {"au", f.au},
                      {"stall_fraction", f.stall_fraction},
                      {"wait_p50_ms", f.wait_ns.quantile(0.50) / 1e6},
                      {"wait_p99_ms", f.wait_ns.quantile(0.99) / 1e6},
                      {"samples_per_second", f.samples_per_second},
                      {"bytes_per_second", f.bytes_per_second},
                      {"measured_s", f.measured_s},
                      {"residency_before", nullptr},
                      {"wall_s", f.wall_s},
                      {"read_bytes", f.all_read_bytes()},
                      {"cpu_util", f.cpu_util}};
  j["device_bytes"] = f.device_bytes ? nlohmann::json(*f.device_bytes) : nlohmann::json(nullptr);
  if (f.resident_bytes) j["resident_read_bytes"] = *f.resident_bytes;
  j["host_cpu_busy"] = f.host_cpu_busy ? nlohmann::json(*f.host_cpu_busy) : nlohmann::json(nullptr);
  if (f.residency_before) {
    j["residency_before"] = *f.residency_before;
    j["served_from_memory"] = f.epoch > 1 && *f.residency_before >= kServedFromMemory;
  }
  return j;
}

// RETURNS: what the later epochs' page-cache state means, with the data set against memory
// ("" for one epoch or no files read).
}  // namespace

std::string loader_memory_note(const LoaderResult& r, std::uint64_t dataset_bytes, std::uint64_t available,
                               const Throttle* throttle) {
  if (r.epochs.size() < 2 || !r.epochs[1].residency_before) return "";
  std::string note = "data set " + format_size(double(dataset_bytes)) + ", " +
                     format_size(double(available)) + " of memory available: ";
  note += dataset_bytes < available ? "it fits in the page cache" : "it cannot all stay in the page cache";
  bool served = false;
  for (std::size_t e = 1; e < r.epochs.size(); ++e) {
    const double res = r.epochs[e].residency_before.value_or(0);
    note += "; epoch " + std::to_string(e + 1) + " began with " + percent(res) + " of it cached";
    if (res >= kServedFromMemory) {
      note += ": served from memory, not storage";
      served = true;
    }
  }
  if (served) note += " (only an epoch that starts cold measures storage)";
  if (served && throttle)
    note += "; but this path is throttled to " + format_rate(double(throttle->bytes_per_second())) +
            ", which paces reads from memory too, so those epochs go no faster";
  return note;
}

namespace {

// RETURNS: for a verdict over several epochs of which a later one was served from memory, what
// each epoch measured (" — over 2 epochs: epoch 1 AU 87.3% from storage, epoch 2 AU 99.5% from
// memory"), so that a blended figure is not read as the storage's; "" otherwise.
std::string epochs_qualifier(const LoaderResult& r) {
  bool any_from_memory = false;
  for (std::size_t e = 1; e < r.epochs.size(); ++e)
    any_from_memory |= r.epochs[e].residency_before.value_or(0) >= kServedFromMemory;
  if (!any_from_memory) return "";
  std::string text = " — over " + std::to_string(r.epochs.size()) + " epochs:";
  for (const EpochFigures& f : r.epochs) {
    const bool memory = f.residency_before.value_or(0) >= kServedFromMemory;
    text += std::string(f.epoch > 1 ? "," : "") + " epoch " + std::to_string(f.epoch) + " AU " +
            percent(f.au) + (memory ? " from memory" : " from storage");
  }
  return text;
}

// The device step of accelerator cuda: each trainer's batch, at most batch_size of the largest
// samples of `files` (or records), copied to a device, then a kernel of the step time.
std::function<std::unique_ptr<DeviceStep>(int)> cuda_step(const Case& c, const FileSet& files,
                                                          int batch_size) {
  std::uint64_t largest = 0;
  for (std::uint32_t f = 0; f < files.size(); ++f) largest = std::max(largest, files.file_size(f));
  const LoaderParameters& p = c.loader();
  if (p.samples.kind == SampleFormat::Kind::records) largest = p.samples.record_bytes;
  const std::uint64_t capacity = largest * std::uint64_t(batch_size);
  const bool overlap = p.overlap.value_or(false);
  return [capacity, overlap](int) {
    std::string failed;
    std::unique_ptr<DeviceStep> step = make_cuda_device_step(capacity, overlap, 0, &failed);
    if (!step) throw RunError(failed);
    return step;
  };
}

// A case's simulation: its source (which LoaderSim reads through), the devices under its files
// (none for a calibration) and the simulation itself.
struct Simulation {
  std::unique_ptr<SampleSource> source;
  std::shared_ptr<DeviceReads> devices;
  std::optional<LoaderSim> sim;
};

// RETURNS: the simulation of case `c` over `to_read`'s files, as this rank's trainer node of
// the run's. Throws InputError or RunError from the source's set-up.
Simulation simulation_of(const Case& c, CaseRun& run, const RunContext& context,
                         const CaseRun::FilesToRead& to_read) {
  const FileSet* files = to_read.get();
  LoaderOptions options = options_of(c);
  // Every rank's loader sees the whole selection (per_node: its host's) and runs its own
  // trainers of each epoch's order, so shares are drawn anew each epoch, as DLIO's are.
  const RankPart node = rank_part(run.cluster(), run.share_mode());
  options.node = node.part;
  options.nodes = node.parts;
  Simulation out;
  const LoaderParameters& p = c.loader();
  out.source = source_of(c, *files, run.throttle(p.path));
  // Between epochs, untimed: a later epoch may be served from the page cache.
  if (p.samples.kind != SampleFormat::Kind::memory) {
    options.residency = [files] { return measure_residency(*files).fraction(); };
    // Around each epoch: what the devices read, so the page cache's share is measured, not guessed.
    out.devices = std::make_shared<DeviceReads>(*files);
    options.device_read_bytes = [devices = out.devices] { return devices->bytes_read(); };
  }
  // Skewed sampling ranks files as file_read does (records by their index); a partial
  // cache's files by their source paths, so the same files are hot on both paths.
  if (options.skew.kind != Skew::Kind::none && p.samples.kind == SampleFormat::Kind::files)
    options.ranking = hot_ranking(to_read.tiered ? *context.source : *files, c.seed);
  if (p.accelerator.value_or("cpu") == "cuda") options.device_step = cuda_step(c, *files, options.batch_size);
  out.sim.emplace(options, *out.source);
  return out;
}

// The last run's figures, and across ranks what the ranks add.
struct Measured {
  LoaderResult result;
  std::optional<LoaderAcrossRanks> across;
};

// Google Benchmark's loop: one run of `sim` per iteration; across ranks every rank's trainers
// start together and the ranks' figures are folded on every rank. RETURNS: the last run's, or
// nullopt after skipping the case with the first failing rank's reason. Throws the RunError of
// a run in one process.
std::optional<Measured> measure(CaseRun& run, benchmark::State& state, LoaderSim& sim, double target) {
  Measured out;
  for (auto _ : state) {
    if (!run.many()) {
      out.result = sim.run();
      state.SetIterationTime(out.result.measured_s > 0 ? out.result.measured_s : 1e-9);
      continue;
    }
    run.cluster().barrier();  // every rank's trainers start together
    std::string failed;
    try {
      out.result = sim.run();
    } catch (const std::exception& e) {
      failed = e.what();
    }
    out.across = gather_loader_ranks(run.cluster(), out.result, failed, target);
    if (!out.across->error.empty()) break;
    state.SetIterationTime(out.result.measured_s > 0 ? out.result.measured_s : 1e-9);
  }
  if (out.across && !out.across->error.empty()) {
    run.skip(out.across->error);
    return std::nullopt;
  }
  return out;
}

}  // namespace

void loader_counters(CaseRun& run, const LoaderResult& result) {
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
  if (const nlohmann::json& r = run.record().cache.value("residency_before", nlohmann::json()); r.is_number())
    run.counter("residency_before", r.get<double>());
}

namespace {

// A calibration (no I/O) shows the harness adds no stall at this AU: the summary's rule.
constexpr double kCalibrationMinAu = 0.99;

// The round's figures for its limit (limit.h): over every epoch, or over epoch `only` alone.
SupplyFigures supply_of(const std::string& transform, const LoaderResult& r, double target,
                        const std::vector<EpochRereads>& rereads, const DeviceReads* devices,
                        std::optional<std::size_t> only = std::nullopt) {
  SupplyFigures f;
  f.target_au = target;
  f.read_s = r.read_s;
  f.transform_s = r.transform_s;
  f.transform_idle_s = r.transform_idle_s;
  f.transform = transform;
  f.cores = r.cores;
  if (devices && !devices->available()) f.device_why = devices->why();
  if (!devices) f.device_why = "no files read";
  if (only) {
    const EpochFigures& e = r.epochs[*only];
    f.au = e.au, f.stall_fraction = e.stall_fraction, f.wall_s = e.wall_s;
    f.read_bytes = e.all_read_bytes(), f.device_bytes = e.device_bytes, f.resident_bytes = e.resident_bytes;
    f.host_cpu_busy = e.host_cpu_busy, f.cpu_util = e.cpu_util;
    f.charged_share = e.charged_share();
    if (*only < rereads.size()) f.samples_read = rereads[*only].reads, f.rereads = rereads[*only].rereads;
    return f;
  }
  f.au = r.au, f.stall_fraction = r.stall_fraction, f.device_bytes = r.device_bytes;
  f.resident_bytes = r.resident_bytes;
  f.host_cpu_busy = r.host_cpu_busy, f.cpu_util = r.cpu_util;
  f.charged_share = r.charged_share();
  for (const EpochFigures& e : r.epochs) f.wall_s += e.wall_s, f.read_bytes += e.all_read_bytes();
  for (const EpochRereads& e : rereads) f.samples_read += e.reads, f.rereads += e.rereads;
  return f;
}

nlohmann::json limit_json(const LoaderLimit& l) {
  nlohmann::json j = {{"by", l.by},
                      {"fed", l.fed},
                      {"reread_share", l.reread_share},
                      {"transform_share", l.transform_share},
                      {"cpu_busy", l.cpu_busy},
                      {"idle_cores", l.idle_cores},
                      {"text", l.text},
                      {"line", l.line}};
  j["memory_share"] = l.memory_share ? nlohmann::json(*l.memory_share) : nlohmann::json(nullptr);
  j["device_bytes_per_second"] =
      l.device_bytes_per_second ? nlohmann::json(*l.device_bytes_per_second) : nlohmann::json(nullptr);
  if (!l.memory_share_from.empty()) j["memory_share_from"] = l.memory_share_from;
  return j;
}

}  // namespace

LoaderLimits loader_limits(const std::string& transform, const LoaderResult& r, double target,
                           const DeviceReads* devices, const std::vector<EpochRereads>& rereads) {
  LoaderLimits out;
  out.run = loader_limit(supply_of(transform, r, target, rereads, devices));
  for (std::size_t e = 0; e < r.epochs.size(); ++e)
    out.epochs.push_back(loader_limit(supply_of(transform, r, target, rereads, devices, e)));
  return out;
}

namespace {

LoaderLimits limits_of(const Case& c, const LoaderResult& r, double target, const DeviceReads* devices,
                       const SampleSource& source) {
  const std::vector<EpochRereads> rereads =
      source.reads_files()
          ? loader_epoch_rereads(options_of(c), r.schedule, source.count(), source.shard_records())
          : std::vector<EpochRereads>{};
  return loader_limits(format_transform(c.loader().transform), r, target, devices, rereads);
}

}  // namespace

std::string loader_run_verdict(const std::string& transform, const LoaderResult& result,
                               const std::optional<LoaderAcrossRanks>& across, double target,
                               bool calibration, const DeviceReads* devices, const LoaderLimit* limit) {
  if (!result.judged() || !limit) return result.not_judged_reason();
  if (calibration)  // no I/O: what it measures is the harness's own hand-over
    return format_printf("AU %.1f%% — ", 100 * result.au) +
           (result.au >= kCalibrationMinAu
                ? "the harness keeps up (calibration: samples from memory, no I/O)"
                : format_printf("training waits %.1f%% of the time with no I/O at all: the harness "
                                "itself stalls (calibration)",
                                100 * result.stall_fraction));
  std::string verdict =
      loader_verdict(supply_of(transform, result, target, {}, devices), *limit) + epochs_qualifier(result);
  if (across) verdict += across->verdict;
  return verdict;
}

nlohmann::json loader_run_json(const LoaderResult& result, const std::string& verdict, double target,
                               const std::optional<LoaderLimits>& limits, bool calibration,
                               std::uint64_t dataset_bytes, std::uint64_t available) {
  const LoaderSchedule& schedule = result.schedule;
  const bool cpu_bound = limits && limits->run.by == "cpu";
  nlohmann::json epochs = nlohmann::json::array();
  for (std::size_t e = 0; e < result.epochs.size(); ++e) {
    epochs.push_back(epoch_json(result.epochs[e]));
    if (limits) epochs.back()["limit"] = limit_json(limits->epochs[e]);
  }
  // The verdict's first line (loader_verdict_line): short, where `verdict` is the whole of it.
  // Not judged: the reason's words before its figures ("not enough steps to judge").
  const std::string line = !result.judged()         ? verdict.substr(0, verdict.find(": "))
                           : limits && !calibration ? loader_verdict_line(result.au, limits->run)
                                                    : std::string();
  nlohmann::json out = {
      {"verdict", verdict},
      {"verdict_line", line},
      {"judged", result.judged()},
      {"au_per_accelerator", result.au_per_trainer},
      {"min_au", result.min_au},
      {"target_au", target},
      {"cpu_bound", cpu_bound},
      {"calibration", calibration},
      {"samples", result.samples},
      {"bytes", result.bytes},
      {"measured_read_bytes", result.read_bytes},
      {"warmup_read_bytes", result.warmup_read_bytes},
      {"warmup_steps", result.warmup_steps},
      {"steps_per_epoch", schedule.steps_per_epoch},
      {"warmup_steps_in_effect", schedule.warmup_steps},
      {"measured_steps_first_epoch", schedule.measured_first_epoch},
      {"min_measured_steps", schedule.min_measured_steps},
      {"epochs", epochs},
      {"dataset_bytes", dataset_bytes},
      {"available_memory_bytes", available},
      {"wait_s", result.wait_s},
      {"compute_s", result.compute_s},
      {"read_s", result.read_s},
      {"transform_s", result.transform_s},
      {"transform_bytes", result.transform_bytes},
      {"transform_samples", result.transform_samples},
      {"transform_cpu_s", result.transform_cpu_s},
      {"cores", result.cores},
      {"host_cpu_busy",
       result.host_cpu_busy ? nlohmann::json(*result.host_cpu_busy) : nlohmann::json(nullptr)},
      {"device_bytes", result.device_bytes ? nlohmann::json(*result.device_bytes) : nlohmann::json(nullptr)},
      {"limit", limits ? limit_json(limits->run) : nlohmann::json(nullptr)}};
  // A replay's reads, each asked of the page cache before it was read (loader.h).
  if (result.resident_bytes) out["resident_read_bytes"] = *result.resident_bytes;
  return out;
}

namespace {

// The device's side of the step: what was copied (every step, warm-up included) and how long
// the copies and the kernels took on the device's clock.
void record_device(CaseRun& run, const Case& c, const LoaderResult& result) {
  run.copy_counters(*result.device_copy);
  nlohmann::json& extra = run.record().extra;
  extra["accelerator"] = "cuda";
  extra["overlap"] = c.loader().overlap.value_or(false);
  const SinkStats& d = *result.device_copy;
  extra["device"] = {{"copy_bytes", d.bytes},
                     {"copies", d.copies},
                     {"copy_s", d.copy_seconds()},
                     {"kernel_s", result.device_busy_s}};
}

}  // namespace

void run_loader_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  // Across ranks each rank is a trainer node of `accelerators` simulated accelerators, reading
  // its share of the selection; every reason to stop is agreed by all ranks.
  // A partial cache (a hot set): path cache reads what it holds from it, the rest from the source.
  const LoaderParameters& p = c.loader();
  const CaseRun::FilesToRead to_read = run.files_to_read(p.path);
  const FileSet* files = to_read.get();
  const std::string& cache_state = p.cache_state;
  if (cache_state != "cold" && cache_state != "warm")
    run.note_stop("the loader reads through the page cache: cache_state must be cold or warm, not " +
                  cache_state);
  const bool cuda = p.accelerator.value_or("cpu") == "cuda";
  if (cuda) run.need_cuda_device();  // skipped, the run goes on
  const bool calibration = p.samples.kind == SampleFormat::Kind::memory;
  const double target = p.target_au;
  // share_round's checks apply (per_rank ranks must see one selection); its shares are not
  // used: each rank's loader draws its trainers' shares anew each epoch (simulation_of).
  ShareOfRound checked;
  run.share_among_ranks(files, 0, checked);
  if (!run.agree()) return;
  const bool many = run.many();

  std::optional<Measured> measured;
  std::shared_ptr<DeviceReads> devices;
  std::unique_ptr<SampleSource> source;  // outlives the simulation: its limit counts re-reads
  GpuSampler sampler;
  try {
    std::optional<Simulation> sim;
    try {
      sim.emplace(simulation_of(c, run, context, to_read));
      // Refused before any preparation: the data set cannot hold the configured steps.
      run.note_stop(sim->sim->schedule().refused);
    } catch (const std::exception& e) {  // InputError from a source's set-up
      if (!many) throw;
      run.note_stop(e.what());
    }
    if (!run.agree()) return;
    // Untimed preparation. Across ranks each host prepares the whole selection: its ranks read
    // another share each epoch. A calibration run does no I/O: its cache state is moot.
    if (calibration) run.record_moot_cache_state(cache_state, "samples from memory: no file is read");
    else if (!run.prepare(cache_state, *files, *files)) return;
    // GPU telemetry while the steps run (nothing without an NVIDIA driver).
    if (cuda) sampler.start();
    measured = measure(run, state, *sim->sim, target);
    devices = sim->devices;
    source = std::move(sim->source);
  } catch (const std::exception& e) {  // RunError, or InputError from a source's set-up
    return run.skip(e.what());
  }
  if (!measured) return;
  const nlohmann::json telemetry = sampler.stop();
  const LoaderResult& result = measured->result;

  loader_counters(run, result);
  std::optional<LoaderLimits> limits;
  if (result.judged()) limits = limits_of(c, result, target, devices.get(), *source);
  const std::string verdict =
      loader_run_verdict(format_transform(p.transform), result, measured->across, target, calibration,
                         devices.get(), limits ? &limits->run : nullptr);
  const std::uint64_t available = available_memory_bytes();
  run.record().extra =
      loader_run_json(result, verdict, target, limits, calibration, files->total_bytes(), available);
  if (devices && devices->available()) run.record().extra["devices"] = devices->names();
  nlohmann::json& extra = run.record().extra;
  if (result.device_copy) record_device(run, c, result);
  if (!telemetry.is_null()) extra["gpu_telemetry"] = telemetry;
  if (measured->across) extra.update(measured->across->extra);
  if (p.pattern && p.samples.kind == SampleFormat::Kind::files && !many && context.source) {
    // The hit share, counted over the samples the run's batches took (warm-up included).
    LoaderOptions options = options_of(c);
    options.ranking = hot_ranking(to_read.tiered ? *context.source : *files, c.seed);
    run.record_hit_share(to_read.tiered ? *context.source : *files,
                         loader_sample_reads(options, result.schedule, files->size()),
                         to_read.tiered.has_value(), p.path);
  }
  if (p.transform.per == TransformCost::Per::decode && result.transform_bytes > 0) {
    // The real cost of decoding on this CPU, for comparison with djpeg or another host.
    extra["decoded_pixels"] = result.decoded_pixels;
    extra["decode_ms_per_mib"] = result.transform_s * 1e3 / (double(result.transform_bytes) / (1 << 20));
  }
  if (!calibration) {
    const std::string note =
        loader_memory_note(result, files->total_bytes(), available, run.throttle(p.path).get());
    if (!note.empty()) extra["memory_note"] = note;
  }
  run.record_reads(result);
  run.record().latency = result.wait_ns;
  run.finish(verdict);
}

std::string loader_schedule_refusal(const Case& c, RunContext& context, const FileSet& files) {
  LoaderOptions options = options_of(c);
  const RankPart node = rank_part(context.ranks(), context.config ? context.config->share : "per_rank");
  options.node = node.part;
  options.nodes = node.parts;
  const std::unique_ptr<SampleSource> source = source_of(c, files, nullptr);
  return LoaderSim(options, *source).schedule().refused;
}

}  // namespace feedbench
