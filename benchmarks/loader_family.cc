// The loader family: one simulated training run (harness/loader/loader.cc) per repetition, from a
// cold or warm page cache, against the source or cache path. The timed part is the measured
// steps (warm-up excluded); the counters say how much of each step the accelerator waited.
// A run the data set cannot hold is skipped with the size it needs; one with too few measured
// steps is recorded without a verdict; each epoch is recorded apart, with the page cache's
// share of the data set as it began.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "case_run.h"
#include "cluster_round.h"
#include "families.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/units.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/skew.h"
#include "feedbench/loader/loader.h"

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
  if (c.has("pattern")) o.skew = parse_skew(c.str("pattern"));
  if (c.has("shuffle_buffer")) o.shuffle_buffer = std::size_t(c.integer("shuffle_buffer"));
  return o;
}

std::unique_ptr<SampleSource> source_of(const Case& c, const FileSet& files,
                                        std::shared_ptr<Throttle> throttle) {
  const std::string samples = c.str("samples");
  const std::string engine = c.str("engine");
  if (samples == "memory") return make_memory_source(files);
  if (samples == "tfrecord") {
    // TensorFlow's reader checks every data CRC unless told not to: so does this one.
    const bool verify_crc = !c.has("verify_crc") || c.params.at("verify_crc").get<bool>();
    return make_tfrecord_source(files, engine, verify_crc, 1 << 20, std::move(throttle));
  }
  if (samples.starts_with("records:"))
    return make_record_source(files, parse_size(samples.substr(8), "samples"), engine, 1 << 20,
                              std::move(throttle));
  return make_file_source(files, engine, 1 << 20, std::move(throttle));
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

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
                      {"residency_before", nullptr}};
  if (f.residency_before) {
    j["residency_before"] = *f.residency_before;
    j["served_from_memory"] = f.epoch > 1 && *f.residency_before >= kServedFromMemory;
  }
  return j;
}

// RETURNS: what the later epochs' page-cache state means, with the data set against memory
// ("" for one epoch or no files read).
std::string memory_note(const LoaderResult& r, std::uint64_t dataset_bytes, std::uint64_t available,
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

}  // namespace

void run_loader_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  Cluster& cluster = context.ranks();
  // Across ranks each rank is a trainer node of `accelerators` simulated accelerators, reading
  // its share of the selection; every reason to stop is agreed by all ranks.
  const bool many = cluster.size() > 1;
  std::string why;
  // A partial cache (a hot set): path cache reads what it holds from it, the rest from the source.
  const CaseRun::FilesToRead to_read = run.files_to_read(c.str("path"), &why);
  const FileSet* selected = to_read.get();

  const std::string cache_state = c.str("cache_state");
  if (why.empty() && cache_state != "cold" && cache_state != "warm")
    why = "the loader reads through the page cache: cache_state must be cold or warm, not " + cache_state;
  const bool cuda = c.has("accelerator") && c.str("accelerator") == "cuda";
  if (why.empty() && cuda) cuda_device_count(&why);  // "no CUDA device: ...": skipped, the run goes on
  const bool calibration = c.str("samples") == "memory";
  const double target = c.has("target_au") ? c.number("target_au") : 0.90;
  const std::string share_mode = context.config ? context.config->share : "per_rank";
  // Every rank's loader sees the whole selection (per_node: its host's) and runs its own trainers
  // of each epoch's order (LoaderOptions::node), so shares are drawn anew each epoch, as DLIO's
  // are. share_round's checks still apply (per_rank ranks must see one selection); its shares
  // are not used.
  if (why.empty() && many) {
    ShareOfRound checked;
    why = share_round(cluster, *selected, share_mode, c.seed, 0, checked);
  }
  if (!run.agree(why)) return;
  const FileSet* files = selected;
  const std::vector<int>& on_host = cluster.ranks_on_host();
  const bool per_node = share_mode == "per_node";
  const int node = per_node ? int(std::find(on_host.begin(), on_host.end(), cluster.rank()) - on_host.begin())
                            : cluster.rank();
  const int nodes = per_node ? int(on_host.size()) : cluster.size();

  LoaderResult result;
  std::optional<LoaderAcrossRanks> across;
  GpuSampler sampler;
  try {
    LoaderOptions options = options_of(c);
    options.node = node;
    options.nodes = nodes;
    std::unique_ptr<SampleSource> source;
    std::optional<LoaderSim> sim;
    try {
      source = source_of(c, *files, run.throttle(c.str("path")));
      // Between epochs, untimed: a later epoch may be served from the page cache.
      if (!calibration) options.residency = [files] { return measure_residency(*files).fraction(); };
      // Skewed sampling ranks files as file_read does (records by their index); a partial
      // cache's files by their source paths, so the same files are hot on both paths.
      if (options.skew.kind != Skew::Kind::none && c.str("samples") == "files")
        options.ranking = hot_ranking(to_read.tiered ? *context.source : *files, c.seed);
      if (cuda) {
        // A batch holds at most batch_size of the largest samples.
        std::uint64_t largest = 0;
        for (std::uint32_t f = 0; f < files->size(); ++f) largest = std::max(largest, files->file_size(f));
        if (c.str("samples").starts_with("records:"))
          largest = parse_size(c.str("samples").substr(8), "samples");
        const std::uint64_t capacity = largest * std::uint64_t(options.batch_size);
        const bool overlap = c.has("overlap") && c.params.at("overlap").get<bool>();
        options.device_step = [capacity, overlap](int) {
          std::string failed;
          std::unique_ptr<DeviceStep> step = make_cuda_device_step(capacity, overlap, 0, &failed);
          if (!step) throw RunError(failed);
          return step;
        };
      }
      sim.emplace(options, *source);
      // Refused before any preparation: the data set cannot hold the configured steps.
      why = sim->schedule().refused;
    } catch (const std::exception& e) {  // InputError from a source's set-up
      if (!many) throw;
      why = e.what();
    }
    if (!run.agree(why)) return;

    // Untimed preparation; a calibration run does no I/O, so its cache state is moot. Across
    // ranks each host prepares the whole selection: its ranks read another share each epoch.
    if (many ? !run.prepare_cache_state_per_host(cache_state, *selected)
             : !run.prepare_cache_state(cache_state, *files))
      return;

    // GPU telemetry while the steps run (nothing without an NVIDIA driver).
    if (cuda) sampler.start();
    for (auto _ : state) {
      if (!many) {
        result = sim->run();
        state.SetIterationTime(result.measured_s > 0 ? result.measured_s : 1e-9);
        continue;
      }
      cluster.barrier();  // every rank's trainers start together
      std::string failed;
      try {
        result = sim->run();
      } catch (const std::exception& e) {
        failed = e.what();
      }
      across = gather_loader_ranks(cluster, result, failed, target);
      if (!across->error.empty()) break;
      state.SetIterationTime(result.measured_s > 0 ? result.measured_s : 1e-9);
    }
  } catch (const std::exception& e) {  // RunError, or InputError from a source's set-up
    return run.skip(e.what());
  }
  if (across && !across->error.empty()) return run.skip(across->error);
  const nlohmann::json telemetry = sampler.stop();

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

  // Too few measured steps: the figures are recorded, but no verdict and no CPU-bound claim.
  const LoaderSchedule& schedule = result.schedule;
  const bool judged = schedule.judged();
  const bool cpu_bound =
      judged && loader_cpu_bound(result.au, target, result.cpu_util, result.read_s, result.transform_s);
  std::string verdict = judged ? loader_verdict(result.au, result.stall_fraction, target, cpu_bound,
                                                result.read_s, result.transform_s) +
                                     (calibration ? "" : epochs_qualifier(result))
                               : schedule.not_judged_reason();
  if (across && judged) verdict += across->verdict;
  nlohmann::json epochs = nlohmann::json::array();
  for (const EpochFigures& f : result.epochs) epochs.push_back(epoch_json(f));
  const std::uint64_t available = available_memory_bytes();
  run.record().extra = {{"verdict", verdict},
                        {"judged", judged},
                        {"au_per_accelerator", result.au_per_trainer},
                        {"min_au", result.min_au},
                        {"target_au", target},
                        {"cpu_bound", cpu_bound},
                        {"calibration", calibration},
                        {"samples", result.samples},
                        {"bytes", result.bytes},
                        {"warmup_steps", result.warmup_steps},
                        {"steps_per_epoch", schedule.steps_per_epoch},
                        {"warmup_steps_in_effect", schedule.warmup_steps},
                        {"measured_steps_first_epoch", schedule.measured_first_epoch},
                        {"min_measured_steps", schedule.min_measured_steps},
                        {"epochs", epochs},
                        {"dataset_bytes", files->total_bytes()},
                        {"available_memory_bytes", available},
                        {"wait_s", result.wait_s},
                        {"compute_s", result.compute_s},
                        {"read_s", result.read_s},
                        {"transform_s", result.transform_s}};
  if (result.device_copy) {
    // The device's side of the step: what was copied (every step, warm-up included) and how
    // long the copies and the kernels took on the device's clock.
    run.copy_counters(*result.device_copy);
    run.record().extra["accelerator"] = "cuda";
    run.record().extra["overlap"] = c.has("overlap") && c.params.at("overlap").get<bool>();
    const SinkStats& d = *result.device_copy;
    run.record().extra["device"] = {{"copy_bytes", d.bytes},
                                    {"copies", d.copies},
                                    {"copy_s", d.copy_seconds()},
                                    {"kernel_s", result.device_busy_s}};
  }
  if (!telemetry.is_null()) run.record().extra["gpu_telemetry"] = telemetry;
  if (across) {
    run.record().extra.update(across->extra);
    run.record().extra["dataset_bytes"] = selected->total_bytes();
  }
  if (options_of(c).skew.kind != Skew::Kind::none && c.str("samples") == "files" && !many && context.source) {
    // The hit share, counted over the samples the run's batches took (warm-up included).
    LoaderOptions options = options_of(c);
    options.ranking = hot_ranking(to_read.tiered ? *context.source : *files, c.seed);
    run.record_hit_share(to_read.tiered ? *context.source : *files,
                         loader_sample_reads(options, result.schedule, files->size()),
                         to_read.tiered.has_value(), c.str("path"));
  }
  if (options_of(c).transform.per == TransformCost::Per::decode && result.transform_bytes > 0) {
    // The real cost of decoding on this CPU, for comparison with djpeg or another host.
    run.record().extra["decoded_pixels"] = result.decoded_pixels;
    run.record().extra["decode_ms_per_mib"] =
        result.transform_s * 1e3 / (double(result.transform_bytes) / (1 << 20));
  }
  if (!calibration) {
    const std::string note =
        memory_note(result, files->total_bytes(), available, run.throttle(c.str("path")).get());
    if (!note.empty()) run.record().extra["memory_note"] = note;
  }
  run.record_reads(result);
  run.record().latency = result.wait_ns;
  // A calibration run does no I/O: its cache state is moot, so its label does not flag it.
  run.finish(verdict, /*flag_cache_state=*/!calibration);
}

}  // namespace feedbench
