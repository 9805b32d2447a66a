// LoaderSim: every trainer through each epoch, the page cache measured between epochs, and the
// figures folded over trainers and epochs; the verdict on them.
#include "feedbench/loader/loader.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/units.h"
#include "trainer.h"

namespace feedbench {

LoaderSim::LoaderSim(const LoaderOptions& options, const SampleSource& source)
    : options_(options), source_(source) {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw InputError(std::string("loader: ") + what);
  };
  need(options.batch_size >= 1, "batch_size must be at least 1");
  need(options.workers >= 0, "workers must be 0 or more");
  need(options.prefetch >= 1, "prefetch must be at least 1");
  need(options.epochs >= 1, "epochs must be at least 1");
  need(options.steps >= 0, "steps must be 0 (whole epoch) or more");
  need(options.warmup_steps >= 0, "warmup_steps must be 0 or more");
  need(options.accelerators >= 1, "accelerators must be at least 1");
  need(options.nodes >= 1 && options.node >= 0 && options.node < options.nodes,
       "node must be one of the nodes (0 <= node < nodes)");
  need(!source.shard_records() || options.skew.kind == Skew::Kind::none,
       "a skewed pattern needs samples read by index; streamed shards (samples tfrecord) are read in order");
  need(options.worker_cost_ns >= 0 && options.worker_cost_per_sample_ns >= 0,
       "worker costs are never negative");
  need(options.next_cost_ns >= 0 && options.next_cost_per_mib_ns >= 0 && options.next_cost_per_tensor_ns >= 0,
       "next_cost must be 0 or more");
}

std::uint64_t loader_batch_tensors(const LoaderOptions& o, std::uint64_t samples) {
  return o.collate == LoaderOptions::Collate::list ? samples : 1;
}

std::int64_t loader_next_cost_ns(const LoaderOptions& o, std::uint64_t bytes, std::uint64_t tensors) {
  return o.next_cost_ns + o.next_cost_per_tensor_ns * std::int64_t(tensors) +
         std::int64_t(double(o.next_cost_per_mib_ns) * double(bytes) / double(1 << 20));
}

void loader_apply_framework(LoaderOptions& o, LoaderFramework f) {
  const bool crosses = f == LoaderFramework::pytorch && o.workers > 0;
  o.handover = crosses ? LoaderOptions::Handover::process : LoaderOptions::Handover::thread;
  o.next_cost_ns = crosses ? kPytorchNextPerBatchNs : 0;
  o.next_cost_per_tensor_ns = crosses ? kPytorchNextPerTensorNs : 0;
  o.next_cost_per_mib_ns = 0;
  o.worker_cost_ns = crosses ? kPytorchWorkerPerBatchNs : 0;
  o.worker_cost_per_sample_ns = crosses ? kPytorchWorkerPerSampleNs : 0;
}

LoaderSchedule LoaderSim::schedule() const {
  return loader_schedule(options_, source_.count(), source_.total_bytes(), source_.shard_records());
}

namespace {

// What running the epochs leaves besides the trainers' outcomes.
struct EpochsRun {
  std::vector<std::optional<double>> residency;  // per epoch, as it began
  std::int64_t wall_ns = 0;                      // the pauses between epochs left out
  double cpu_s = 0;                              // process CPU, likewise
  // Per epoch: the devices' bytes read, every process's use of the cores, ours.
  std::vector<std::optional<std::uint64_t>> device_bytes;
  // Per epoch: of the bytes read, those the page cache held as they were read (the source's count).
  std::vector<std::optional<std::uint64_t>> resident_bytes;
  std::vector<std::optional<double>> host_busy;
  std::vector<double> cpu_util, wall_s;
  std::optional<HostCpuTimes> host_total;  // over the epochs, pauses left out
};

// RETURNS: b − a where both are known.
std::optional<std::uint64_t> counted_between(std::optional<std::uint64_t> a, std::optional<std::uint64_t> b) {
  if (!a || !b || *b < *a) return std::nullopt;
  return *b - *a;
}

// Runs every trainer through each epoch, then finishes them. Every trainer finishes an epoch
// before the next starts (training synchronises its accelerators), so the page cache can be
// measured between epochs; that pause is neither wall nor CPU of the run.
EpochsRun run_epochs(const LoaderOptions& options, const SampleSource& source,
                     std::vector<std::unique_ptr<Trainer>>& trainers, RunState& state) {
  EpochsRun out;
  double paused_cpu = 0;
  std::int64_t paused_ns = 0;
  const double cpu0 = process_cpu_seconds();
  const std::int64_t start = now_ns();
  // Runs `work` between epochs: its wall and CPU are the pause's, not the run's.
  auto untimed = [&](auto&& work) {
    const double c0 = process_cpu_seconds();
    const std::int64_t t0 = now_ns();
    work();
    paused_ns += now_ns() - t0;
    paused_cpu += process_cpu_seconds() - c0;
  };
  for (int e = 0; e < options.epochs && !state.failed; ++e) {
    if (options.residency) untimed([&] { out.residency.push_back(options.residency()); });
    else out.residency.push_back(std::nullopt);
    // The epoch's order, drawn once and shared: drawn by every trainer, a node of 64 trainers
    // over a million samples spent seconds of CPU at each epoch's start, which the first
    // trainers' steps waited for on a host of few cores (the simulation, not the storage, was
    // the limit). A pause like the residency's: each rank of a real job draws it in parallel.
    std::vector<std::size_t> order;
    const bool by_index = !options.recorded && !source.shard_records();
    if (by_index) untimed([&] { order = loader_epoch_order(options, source.count(), e); });
    const std::optional<std::uint64_t> device0 =
        options.device_read_bytes ? options.device_read_bytes() : std::nullopt;
    const std::optional<std::uint64_t> resident0 = source.resident_bytes_read();
    const std::optional<HostCpuTimes> host0 = host_cpu_times();
    const double epoch_cpu0 = process_cpu_seconds();
    const std::int64_t epoch_t0 = now_ns();
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < trainers.size(); ++k) {
      Trainer* t = trainers[k].get();
      const std::string refused = start_thread(
          threads, [t, e, shared = by_index ? &order : nullptr] { t->run_epoch(e, shared); }, "trainer", k,
          trainers.size());
      if (!refused.empty()) {  // those started see `failed` and stop
        state.fail(refused);
        break;
      }
    }
    for (std::thread& t : threads) t.join();
    const double epoch_wall = double(now_ns() - epoch_t0) * 1e-9;
    const double epoch_cpu = process_cpu_seconds() - epoch_cpu0;
    const std::optional<HostCpuTimes> host1 = host_cpu_times();
    out.device_bytes.push_back(
        counted_between(device0, options.device_read_bytes ? options.device_read_bytes() : std::nullopt));
    out.resident_bytes.push_back(counted_between(resident0, source.resident_bytes_read()));
    out.host_busy.push_back(host_cpu_busy(host0, host1));
    out.cpu_util.push_back(epoch_wall > 0 ? epoch_cpu / (epoch_wall * usable_cores()) : 0);
    out.wall_s.push_back(epoch_wall);
    if (host0 && host1) {
      if (!out.host_total) out.host_total.emplace();
      out.host_total->busy_s += host1->busy_s - host0->busy_s;
      out.host_total->total_s += host1->total_s - host0->total_s;
    }
  }
  for (auto& t : trainers) t->finish();
  out.wall_ns = now_ns() - start - paused_ns;
  out.cpu_s = process_cpu_seconds() - cpu0 - paused_cpu;
  return out;
}

// One epoch over every trainer: its figures, and its sums in ns for the run's totals.
struct EpochFold {
  EpochFigures figures;
  std::int64_t epoch_ns = 0;  // every trainer's wall of the epoch, summed
};

EpochFold fold_epoch(const std::vector<std::unique_ptr<Trainer>>& trainers, int e, const EpochsRun& ran) {
  EpochFold out;
  EpochFigures& f = out.figures;
  f.epoch = e + 1;
  const auto at = std::size_t(e);
  f.residency_before = ran.residency[at];
  if (at < ran.device_bytes.size()) f.device_bytes = ran.device_bytes[at];
  if (at < ran.resident_bytes.size()) f.resident_bytes = ran.resident_bytes[at];
  if (at < ran.host_busy.size()) f.host_cpu_busy = ran.host_busy[at];
  if (at < ran.cpu_util.size()) f.cpu_util = ran.cpu_util[at], f.wall_s = ran.wall_s[at];
  std::int64_t first = INT64_MAX, last = INT64_MIN;
  for (auto& t : trainers) {
    const EpochOutcome& o = t->outcome.epochs[std::size_t(e)];
    f += o;
    f.bytes += o.read.bytes;
    f.wait_ns.merge(o.wait);
    out.epoch_ns += o.epoch_ns;
    if (o.measured) {
      first = std::min(first, o.first_t0);
      last = std::max(last, o.last_t2);
    }
  }
  f.measured_s = last > first ? double(last - first) * 1e-9 : 0;
  f.wait_s = double(f.waited_ns) * 1e-9;
  f.compute_s = double(f.computed_ns) * 1e-9;
  f.step_s = double(f.stepped_ns) * 1e-9;
  f.au = f.au_counted();
  f.stall_fraction = f.stall_counted();
  if (f.measured_s > 0) {
    f.samples_per_second = double(f.samples) / f.measured_s;
    f.bytes_per_second = double(f.bytes) / f.measured_s;
  }
  return out;
}

// Adds one trainer's outcome to the run's figures: its reads, device copies, workers' time and AU.
void add_trainer(const TrainerOutcome& o, LoaderResult& r) {
  r.merge(o.read);
  if (o.device_copy) {
    if (!r.device_copy) r.device_copy.emplace();
    r.device_copy->merge(*o.device_copy);
    r.device_busy_s += double(o.device_busy_ns) * 1e-9;
  }
  r.read_s += double(o.work.read_ns) * 1e-9;
  r.transform_s += double(o.work.transform_ns) * 1e-9;
  r.transform_bytes += o.work.bytes;
  r.transform_samples += o.work.samples;
  r.transform_cpu_s += double(o.work.transform_cpu_ns) * 1e-9;
  r.transform_idle_s += double(o.work.transform_idle_ns) * 1e-9;
  r.decoded_pixels += o.work.pixels;
  LoaderCounters all;
  for (const EpochOutcome& eo : o.epochs) all += eo;
  const double au = all.au_counted();
  r.au_per_trainer.push_back(au);
  r.min_au = std::min(r.min_au, au);
}

}  // namespace

LoaderResult LoaderSim::run() {
  if (source_.count() == 0) throw RunError("loader: the data set has no samples");
  const LoaderSchedule sched = schedule();
  if (!sched.refused.empty()) throw RunError(sched.refused);
  RunState state;
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (int k = 0; k < options_.accelerators; ++k)
    trainers.push_back(std::make_unique<Trainer>(options_, sched, source_, k, state));
  const EpochsRun ran = run_epochs(options_, source_, trainers, state);
  if (state.failed) throw RunError(state.error);

  LoaderResult r;
  r.schedule = sched;
  r.reads_files = source_.reads_files();
  std::int64_t epoch_total = 0, epoch_count = 0;
  bool device_unknown = false, resident_unknown = false;
  std::uint64_t device_total = 0, resident_total = 0;
  for (int e = 0; e < options_.epochs; ++e) {
    EpochFold fold = fold_epoch(trainers, e, ran);
    const EpochFigures& f = fold.figures;
    r += f;
    r.measured_s += f.measured_s;
    r.wait_ns.merge(f.wait_ns);
    epoch_total += fold.epoch_ns;
    epoch_count += std::int64_t(trainers.size());
    if (f.device_bytes) device_total += *f.device_bytes;
    else device_unknown = true;  // one epoch not counted: the run's count is not known
    if (f.resident_bytes) resident_total += *f.resident_bytes;
    else resident_unknown = true;
    r.epochs.push_back(std::move(fold.figures));
  }
  if (!device_unknown) r.device_bytes = device_total;
  if (!resident_unknown) r.resident_bytes = resident_total;
  r.min_au = 1;
  for (auto& t : trainers) add_trainer(t->outcome, r);
  r.epoch_s = epoch_count ? double(epoch_total) * 1e-9 / double(epoch_count) : 0;
  r.wait_s = double(r.waited_ns) * 1e-9;
  r.compute_s = double(r.computed_ns) * 1e-9;
  r.step_s = double(r.stepped_ns) * 1e-9;
  r.stall_fraction = r.stall_counted();
  r.au = r.au_counted();
  r.cores = usable_cores();
  r.cpu_util = ran.wall_ns > 0 ? ran.cpu_s / (double(ran.wall_ns) * 1e-9 * r.cores) : 0;
  if (ran.host_total && ran.host_total->total_s > 0)
    r.host_cpu_busy = std::clamp(ran.host_total->busy_s / ran.host_total->total_s, 0.0, 1.0);
  if (r.measured_s > 0) {
    r.samples_per_second = double(r.samples) / r.measured_s;
    r.bytes_per_second = double(r.bytes) / r.measured_s;
  }
  return r;
}

namespace {

// RETURNS: the first epoch whose measured steps read less than kMinMeasuredReadShare of their
// samples' bytes, or null.
const EpochFigures* epoch_read_ahead(const std::vector<EpochFigures>& epochs) {
  for (const EpochFigures& f : epochs)
    if (f.bytes > 0 && double(f.read_bytes) < kMinMeasuredReadShare * double(f.bytes)) return &f;
  return nullptr;
}

}  // namespace

LoaderCounters& LoaderCounters::operator+=(const LoaderCounters& other) {
  samples += other.samples;
  steps += other.steps;
  warmup_steps += other.warmup_steps;
  read_bytes += other.read_bytes;
  warmup_read_bytes += other.warmup_read_bytes;
  waited_ns += other.waited_ns;
  computed_ns += other.computed_ns;
  stepped_ns += other.stepped_ns;
  charged_ns += other.charged_ns;
  return *this;
}

bool LoaderResult::judged() const { return schedule.judged() && !epoch_read_ahead(epochs); }

std::string LoaderResult::not_judged_reason() const {
  if (!schedule.judged()) return schedule.not_judged_reason();
  const EpochFigures* f = epoch_read_ahead(epochs);
  if (!f) return "";
  char share[64];
  std::snprintf(share, sizeof share, "%.1f%%", 100 * double(f->read_bytes) / double(f->bytes));
  // The samples' bytes were read, just not while these steps waited: for the batches of the
  // warm-up (a stream reads whole 1 MiB pieces of a shard, and fills its shuffle buffer, ahead
  // of the records it hands out).
  std::string why = "not judged: the measured steps read " + format_size(double(f->read_bytes)) + ", " +
                    share + " of the " + format_size(double(f->bytes)) + " their samples hold";
  if (epochs.size() > 1) why += " in epoch " + std::to_string(f->epoch);
  char need[32];
  std::snprintf(need, sizeof need, "%.0f%%", 100 * kMinMeasuredReadShare);
  why += std::string(" (at least ") + need + " needed): ";
  if (f->warmup_read_bytes > 0)
    why += "the rest was read ahead in the warm-up, which read " + format_size(double(f->warmup_read_bytes));
  else why += "the rest was read ahead of them";
  why +=
      " (a stream reads whole pieces of its shards ahead of its records), so the measured steps "
      "did not wait for storage: measure more steps after the warm-up (more steps, or more records "
      "per worker), or shorten the warm-up (prefetch × workers)";
  return why;
}

}  // namespace feedbench
