// A watched job's figures and verdict (see job_figures.h).
#include "feedbench/watch/job_figures.h"

#include "feedbench/base/units.h"

#include <algorithm>
#include <cstdio>

namespace feedbench {
namespace {

// The usable cores this busy are saturated: the same rule as a loader case's (limit.h).
constexpr double kCpuSaturated = 0.85;
// Workers whose fetches ran on CPU this much of their time were computing, not waiting to read.
constexpr double kFetchOnCpu = 0.6;
// Workers fetching less than this share of the time they had kept the batches ready.
constexpr double kWorkersIdle = 0.5;

std::string percent(double f) { return format_percent(f); }

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}

}  // namespace

JobFigures job_figures(const JobLog& log) {
  JobFigures f;
  for (std::size_t e = 0; e < log.epochs.size(); ++e) {
    const JobEpoch& p = log.epochs[e];
    if (p.batches.empty()) continue;
    JobPassFigures pf;
    pf.id = p.id;
    pf.epoch = e;
    pf.ended = p.end_ns.has_value();
    Histogram wait;
    double wait_ns = 0, step_ns = 0;
    for (std::size_t k = 0; k < p.batches.size(); ++k) {
      const JobEpoch::Batch& b = p.batches[k];
      const std::int64_t w = b.got_ns - b.ask_ns;
      wait.record(std::uint64_t(w));
      f.wait_ns.record(std::uint64_t(w));
      ++pf.batches;
      f.samples += std::uint64_t(std::max<std::int64_t>(p.batch_size, 1));
      // The step of batch k: from getting it to asking for the next; the last has none.
      if (k + 1 < p.batches.size()) {
        ++pf.steps;
        wait_ns += double(w);
        if (k == 0) f.first_wait_s += double(w) / 1e9;
        step_ns += double(p.batches[k + 1].ask_ns - b.got_ns);
      }
    }
    pf.first_wait_ms = double(p.batches.front().got_ns - p.batches.front().ask_ns) / 1e6;
    pf.wait_p50_ms = wait.quantile(0.5) / 1e6;
    pf.wait_p99_ms = wait.quantile(0.99) / 1e6;
    pf.wait_max_ms = double(wait.max()) / 1e6;
    const std::int64_t last = p.end_ns.value_or(p.batches.back().got_ns);
    pf.wall_s = double(last - p.batches.front().ask_ns) / 1e9;
    if (wait_ns + step_ns > 0) {
      pf.au = step_ns / (wait_ns + step_ns);
      pf.stall_fraction = wait_ns / (wait_ns + step_ns);
    }
    f.batches += pf.batches;
    f.steps += pf.steps;
    f.wait_s += wait_ns / 1e9;
    f.step_s += step_ns / 1e9;
    f.first_wait_ms_max = std::max(f.first_wait_ms_max, pf.first_wait_ms);
    f.loop_s += pf.wall_s;
    f.passes.push_back(pf);
  }
  if (f.wait_s + f.step_s > 0) {
    f.au = f.step_s / (f.wait_s + f.step_s);
    f.stall_fraction = f.wait_s / (f.wait_s + f.step_s);
  }
  if (f.step_s > 0) f.headroom = (f.wait_s + f.step_s) / f.step_s;
  if (f.wait_s + f.step_s - f.first_wait_s > 0)
    f.au_after_first = f.step_s / (f.wait_s - f.first_wait_s + f.step_s);
  f.wait_p50_ms = f.wait_ns.quantile(0.5) / 1e6;
  f.wait_p99_ms = f.wait_ns.quantile(0.99) / 1e6;
  f.wait_max_ms = double(f.wait_ns.max()) / 1e6;
  double capacity = 0, worker_wall = 0;  // the workers' time, and what of it they fetched
  for (const JobPassFigures& pf : f.passes) capacity += double(log.epochs[pf.epoch].num_workers) * pf.wall_s;
  bool worker_fetches = false;
  for (const JobFetch& x : log.fetches)
    if (x.worker >= 0) {
      worker_wall += double(x.end_ns - x.start_ns) / 1e9;
      worker_fetches = true;
    }
  // Only where workers recorded fetches: a probe inactive in them is no evidence of idle workers.
  if (capacity > 0 && worker_fetches) f.worker_busy_share = std::min(1.0, worker_wall / capacity);
  double cpu = 0, wall = 0, runq = 0;
  for (const JobFetch& x : log.fetches) {
    cpu += double(x.cpu_ns);
    runq += double(x.runqueue_ns);
    wall += double(x.end_ns - x.start_ns);
  }
  if (wall > 0) {
    f.fetch_cpu_share = std::min(1.0, cpu / wall);
    f.fetch_cpu_wanted_share = std::min(1.0, (cpu + runq) / wall);
  }
  f.fetch_runqueue_s = runq / 1e9;
  f.fetch_s = wall / 1e9;
  f.fetch_cpu_s = cpu / 1e9;
  return f;
}

JobTimeline job_timeline(const JobLog& log, std::int64_t origin_ns, std::size_t max_points) {
  JobTimeline t;
  std::size_t total = 0;
  for (const JobEpoch& p : log.epochs) total += p.batches.size();
  max_points = std::max<std::size_t>(max_points, 1);
  t.batches_per_point = std::max<std::size_t>(1, (total + max_points - 1) / max_points);
  for (const JobEpoch& p : log.epochs) {
    for (std::size_t k = 0; k < p.batches.size(); k += t.batches_per_point) {
      const std::size_t end = std::min(p.batches.size(), k + t.batches_per_point);
      double wait = 0, step = 0;
      std::size_t steps = 0;
      for (std::size_t i = k; i < end; ++i) {
        wait += double(p.batches[i].got_ns - p.batches[i].ask_ns);
        if (i + 1 < p.batches.size()) {
          step += double(p.batches[i + 1].ask_ns - p.batches[i].got_ns);
          ++steps;
        }
      }
      t.t_s.push_back(double(p.batches[end - 1].got_ns - origin_ns) / 1e9);
      t.wait_ms.push_back(wait / double(end - k) / 1e6);
      t.step_ms.push_back(steps ? std::optional<double>(step / double(steps) / 1e6) : std::nullopt);
      t.pass.push_back(p.id);
    }
  }
  return t;
}

JobVerdict job_verdict(const JobFigures& f, double target_au, std::optional<double> host_cpu_busy,
                       unsigned cores, std::optional<std::uint64_t> data_bytes) {
  JobVerdict v;
  if (f.steps == 0) {
    v.text = "no DataLoader batch with a step after it was recorded: nothing to judge";
    v.line = "nothing to judge: no DataLoader batch with a step after it";
    return v;
  }
  char head[160];
  std::snprintf(head, sizeof head, "AU %s, data wait %s of the loop", percent(f.au).c_str(),
                percent(f.stall_fraction).c_str());
  std::string text = head;
  // The first line: what decided, then the AU against its target and the loop's wait.
  const std::string figures = "AU " + percent(f.au) + " (target " + percent(target_au) + "), data wait " +
                              percent(f.stall_fraction) + " of the loop";
  const std::string busy = host_cpu_busy ? "the usable cores " + percent(*host_cpu_busy) + " busy" : "";
  if (f.au >= target_au) {
    v.by = "fed";
    v.text = text + ": fed (target " + percent(target_au) + ")";
    v.line = "fed: " + figures;
    return v;
  }
  char faster[96];
  std::snprintf(faster, sizeof faster, "; with data instant the loop would run %.2fx faster", f.headroom);
  if (f.first_wait_s >= 0.5 * f.wait_s) {
    v.by = "startup";
    v.text = text + ": worker start-up — each pass's first batch waited up to " +
             fmt_ms(f.first_wait_ms_max) + ", " + percent(f.first_wait_s / f.wait_s) +
             " of the wait; past it AU " + percent(f.au_after_first) +
             ": persistent_workers=True, or longer passes, not faster storage" + faster;
    v.line = "worker start-up: " + figures + "; past each pass's first batch AU " + percent(f.au_after_first);
    return v;
  }
  // Workers idle most of the time they had: the batches waited for the trainer, not the other
  // way; what the trainer still waits is taking a ready batch (PyTorch's hand-over from a worker
  // process: the queue, unpickling, shared memory), which neither storage nor workers change.
  if (f.worker_busy_share && *f.worker_busy_share < kWorkersIdle) {
    v.by = "handover";
    v.text = text + ": the trainer's own cost of taking a ready batch — the workers were busy " +
             percent(*f.worker_busy_share) + " of their time (batches ready before the ask), a wait of " +
             format_printf("%.2f ms", f.wait_p50_ms) +
             " a batch at the median: fewer, larger batches, or less to hand over per sample, not faster "
             "storage nor more workers" +
             faster;
    v.line = "the trainer's cost of taking a ready batch: " + figures;
    return v;
  }
  const bool saturated = host_cpu_busy && *host_cpu_busy >= kCpuSaturated;
  // The workers' fetches alone kept the cores busy (several workers sharing them: each is on
  // CPU only part of its fetch, but together they use every core).
  const double fetch_cores = f.loop_s > 0 ? f.fetch_cpu_s / f.loop_s : 0;
  const bool fetches_fill = cores > 0 && fetch_cores >= kCpuSaturated * double(cores);
  const bool wanted_core = f.fetch_cpu_wanted_share && *f.fetch_cpu_wanted_share >= kFetchOnCpu;
  if (fetches_fill || wanted_core) {
    char used[160];
    std::snprintf(used, sizeof used,
                  "the workers' fetches used %.2f of %u cores, on CPU or waiting for one %s of their time",
                  fetch_cores, cores, percent(f.fetch_cpu_wanted_share.value_or(0)).c_str());
    v.by = "cpu";
    v.text = text + ": CPU-bound — " + used + (busy.empty() ? "" : ", " + busy) +
             (fetches_fill || saturated ? ": a cheaper transform or more cores, not faster storage"
                                        : ": more workers or a cheaper transform, not faster storage") +
             faster;
    v.line = "CPU-bound: " + figures;
    return v;
  }
  const std::string blocked =
      f.fetch_cpu_wanted_share
          ? "the workers' fetches " + percent(1 - *f.fetch_cpu_wanted_share) + " blocked off the CPU"
          : "the workers (no fetch recorded)";
  const std::string tail =
      (busy.empty() ? "" : ", " + busy) + (saturated ? " by other programs too" : "") + faster;
  // Blocked is not reading: storage is named only where the job was seen reading its data.
  if (!data_bytes || *data_bytes == 0) {
    v.by = "blocked";
    v.text = text + ": blocked off the CPU, not reading — " + blocked +
             (data_bytes ? ", and no read of data was seen (a sleep, a lock, the network, memory-mapped "
                           "or io_uring reads: what the read recorder does not see)"
                         : ", and the reads were not recorded (nothing shows what it waited on)") +
             tail;
    v.line = "blocked off the CPU, not reading: " + figures;
    return v;
  }
  v.by = "storage";
  v.text = text + ": storage-bound — " + blocked + " while reading " + format_size(double(*data_bytes)) +
           " of data" + tail;
  v.line = "storage-bound: " + figures;
  return v;
}

}  // namespace feedbench
