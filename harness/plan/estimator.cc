// The estimator: the probe reads through the runner itself (a time- and byte-capped round), so
// what it measures is what a round measures; the costs and the budget fit are plain arithmetic.
#include "feedbench/plan/estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/jpeg.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/workload.h"

namespace feedbench {
namespace {

constexpr std::uint64_t kProbeBlock = std::uint64_t(1) << 20;

// Per-file cost of eviction plus the residency check, measured on this project's test machines
// at well under this; a data set of a million files pays it a million times.
constexpr double kEvictPerFileS = 50e-6;

RoundStats probe_round(const FileSet& files, std::uint64_t max_bytes, Pattern pattern = Pattern::sequential,
                       std::uint64_t block = kProbeBlock, std::int64_t runtime_ns = kProbeMaxNs,
                       std::optional<SteadyStateSpec> steady = std::nullopt) {
  WorkloadSpec spec;
  spec.pattern = pattern;
  spec.block_size = block;
  spec.max_bytes = max_bytes;
  Workload workload(files, spec);
  RoundOptions options;
  options.engine_options.block_size = block;
  options.record_latency = false;
  options.runtime_ns = runtime_ns;
  options.steady_state = steady;
  return run_round(files, workload, options);
}

double mean_step_s(const Distribution& d) {
  const double a = double(d.a_ns) * 1e-9, b = double(d.b_ns) * 1e-9;
  return d.kind == Distribution::Kind::uniform ? (a + b) / 2 : a;
}

// The rates a round reads at, and the selection it reads.
struct RoundRates {
  double cold = 0, cached = 0, round = 0;  // bytes/s: storage, the page cache, this case's state
  double selection = 0;                    // bytes
  bool warm = false;
};

void estimate_file_read(const FileReadParameters& p, const RoundRates& r, const PathRate& rate,
                        CaseCost& cost) {
  cost.time_cappable = true;
  double bytes = r.selection;
  if (p.max_bytes) bytes = std::min(bytes, double(*p.max_bytes));
  double round = bytes / r.round;
  if (p.pattern.pattern == Pattern::random) {
    // Small random reads cost a seek (or a page-cache lookup) each, whatever their size.
    const double bs = double(p.block_size);
    const double per_read = r.warm ? bs / r.cached : std::max(rate.random_read_s, bs / r.cold);
    round = std::ceil(bytes / bs) * per_read;
  }
  if (p.ramp_time) cost.ramp_s = double(p.ramp_time->count()) * 1e-9;
  cost.min_runtime_s = double(kBudgetMinRuntimeNs) * 1e-9;
  if (p.steady_state)
    cost.min_runtime_s = std::max(cost.min_runtime_s, double(p.steady_state->window_ns) * 1e-9);
  if (p.runtime) round = std::min(round, cost.ramp_s + double(p.runtime->count()) * 1e-9);
  cost.round_s = round;
}

// RETURNS: the CPU seconds the transform `t` takes on a sample of `bytes`: a configured cost as
// it says; a decode what libjpeg-turbo takes on this CPU for that many bytes of JPEG.
double transform_seconds(const TransformCost& t, double bytes) {
  switch (t.per) {
    case TransformCost::Per::none: return 0;
    case TransformCost::Per::sample: return double(t.ns) * 1e-9;
    case TransformCost::Per::mib: return double(t.ns) * 1e-9 * bytes / double(1 << 20);
    case TransformCost::Per::decode:
      return decode_seconds_per_byte(t.size, t.crop == TransformCost::Crop::random_resized) * bytes;
  }
  return 0;
}

void estimate_loader(const LoaderParameters& p, const FileSet& files, const RoundRates& r, CaseCost& cost) {
  const double per_step = double(p.batch_size) * double(p.accelerators);
  double per_epoch_samples = double(files.size());
  double sample_bytes = files.empty() ? 0 : r.selection / double(files.size());
  if (p.samples.kind == SampleFormat::Kind::records) {
    sample_bytes = double(p.samples.record_bytes);
    per_epoch_samples = std::floor(r.selection / std::max(sample_bytes, 1.0));
  }
  double steps = std::ceil(per_epoch_samples / per_step);
  if (p.steps > 0) steps = std::min(steps, double(p.steps));
  const double read_s =
      p.samples.kind == SampleFormat::Kind::memory ? 0 : steps * per_step * sample_bytes / r.round;
  // The transform on every worker at once (the trainers' own threads without workers), at most
  // one a usable core.
  const double threads = double(std::max(p.workers, 1)) * double(std::max(p.accelerators, 1));
  const double transform_s = steps * per_step * transform_seconds(p.transform, sample_bytes) /
                             std::min(threads, double(std::max(usable_cores(), 1u)));
  cost.round_s = double(p.epochs) * std::max({read_s, transform_s, steps * mean_step_s(p.step_time)});
}

// The recording's own loop (its waits and steps), set when the run read the trace: a replay on
// storage like the job's takes about as long.
void estimate_replay(const ReplayParameters& p, CaseCost& cost) {
  const double scale = p.step_scale.value_or(1.0);
  const double passes = std::max(1.0, double(p.recorded_passes));
  const double epochs = p.epochs ? double(*p.epochs) : passes;
  cost.round_s = epochs / passes * (p.recorded_wait_s + scale * p.recorded_step_s);
}

}  // namespace

PathRate probe_read_rate(const FileSet& files) {
  FB_CHECK(!files.empty(), "probing an empty selection");
  PathRate rate;
  // Files spread evenly over the selection's order (so one folder of small files does not stand
  // for the whole data set), enough of them to read past a throttle's burst: up to
  // kProbeMaxFiles files or kProbeMaxBytes.
  FileSet sample(files.root());
  std::uint64_t bytes = 0;
  const std::size_t step = std::max<std::size_t>(1, files.size() / kProbeMaxFiles);
  for (std::size_t i = 0; i < files.size() && sample.size() < kProbeMaxFiles && bytes < kProbeMaxBytes;
       i += step) {
    sample.add(files.relative_path(i), files.file_size(i), files.mtime_ns(i));
    bytes += files.file_size(i);
  }
  sample.sort();
  try {
    evict(sample);
  } catch (const RunError& e) {
    rate.error = std::string("evicting the probe's files: ") + e.what();
    return rate;
  }
  // Read until the rate over the last window stops changing: a store that serves a burst
  // fast and then its steady rate is priced at the steady rate.
  SteadyStateSpec steady;
  steady.limit_percent = kProbeSteadyPercent;
  steady.window_ns = kProbeWindowNs;
  const RoundStats cold =
      probe_round(sample, kProbeMaxBytes, Pattern::sequential, kProbeBlock, kProbeMaxNs, steady);
  if (!cold.error.empty() || cold.bytes == 0) {
    rate.error = cold.error.empty() ? "the probe read nothing (empty files)" : cold.error;
    return rate;
  }
  const RoundStats cached = probe_round(sample, cold.bytes);
  rate.probe_bytes = cold.bytes;
  rate.cold_seconds = std::max(cold.seconds(), 1e-6);
  rate.cached_seconds = std::max(cached.seconds(), 1e-6);
  rate.cold_bytes_per_second = double(cold.bytes) / rate.cold_seconds;
  std::string steady_text =
      "no full window of " + format_duration_ns(double(kProbeWindowNs)) + " (the sample ended first)";
  if (cold.steady_state && cold.steady_state->window_rate > 0) {
    // The last window's rate, never above the whole pass's: a burst is behind it.
    rate.cold_bytes_per_second = std::min(rate.cold_bytes_per_second, cold.steady_state->window_rate);
    rate.steady = cold.steady_state->reached;
    steady_text = std::string(rate.steady ? "steady" : "still changing") + " at " +
                  format_rate(cold.steady_state->window_rate) + " over its last " +
                  format_duration_ns(double(kProbeWindowNs));
  }
  rate.cached_bytes_per_second = cached.error.empty() && cached.bytes > 0
                                     ? double(cached.bytes) / rate.cached_seconds
                                     : rate.cold_bytes_per_second;
  // Small random reads last, on data evicted again: a burst is spent by now.
  try {
    evict(sample);
    const RoundStats random = probe_round(sample, kProbeMaxBytes, Pattern::random, 4096, kProbeRandomNs);
    if (random.error.empty() && random.reads > 0)
      rate.random_read_s = random.seconds() / double(random.reads);
    evict(sample);
  } catch (const RunError& e) {
    rate.error = std::string("evicting the probe's files: ") + e.what();
    return rate;
  }
  char how[480];
  std::snprintf(
      how, sizeof how,
      "random 4 KiB reads took %s each; read %s of %s in %s after evicting %s (%s; %s), again in %s (%s)",
      format_duration_ns(rate.random_read_s * 1e9).c_str(), format_size(double(cold.bytes)).c_str(),
      plural(sample.size(), "file", "files").c_str(), format_duration_ns(double(cold.elapsed_ns)).c_str(),
      sample.size() == 1 ? "it" : "them", format_rate(rate.cold_bytes_per_second).c_str(),
      steady_text.c_str(), format_duration_ns(double(cached.elapsed_ns)).c_str(),
      format_rate(rate.cached_bytes_per_second).c_str());
  rate.how = how;
  return rate;
}

CaseCost estimate_case(const Case& c, const FileSet& files, const PathRate& rate) {
  CaseCost cost;
  cost.name = c.name();
  cost.family = c.family;
  cost.repetitions = c.repetitions;
  RoundRates r;
  r.cold = std::max(rate.cold_bytes_per_second, 1.0);
  r.cached = std::max(rate.cached_bytes_per_second, r.cold);
  r.selection = double(files.total_bytes());
  const double evict_s = double(files.size()) * kEvictPerFileS;
  const std::string& state = c.cache_state();
  r.warm = state == "warm";
  r.round = r.warm ? r.cached : r.cold;
  // Preparation: cold evicts every file; warm reads the selection (from storage the first time).
  if (state == "cold") cost.prepare_s = evict_s;
  if (r.warm) {
    cost.prepare_once_s = r.selection / r.cold;
    cost.prepare_s = r.selection / r.cached + evict_s;
  }

  if (c.family == "file_read") estimate_file_read(c.file_read(), r, rate, cost);
  else if (c.family == "loader") estimate_loader(c.loader(), files, r, cost);
  else if (c.family == "replay") estimate_replay(c.replay(), cost);
  else if (c.family == "stage") cost.round_s = 3 * r.selection / r.cold;  // read, write, verify
  else if (c.family == "checkpoint") {
    // Priced at the source's read rate: the scratch is not probed (that would write). Each
    // checkpoint is written and read back; nothing of the selection is evicted.
    const CheckpointParameters& p = c.checkpoint();
    cost.prepare_s = 0;
    cost.round_s = 2.0 * double(p.checkpoints) * double(checkpoint_layout(p).bytes()) / r.cold;
  }
  return cost;
}

double total_seconds(const std::vector<CaseCost>& costs) {
  double total = 0;
  for (const CaseCost& c : costs)
    total += c.prepare_once_s + c.repetitions * (c.prepare_s + c.round_s + kRepetitionOverheadS);
  return total;
}

namespace {

// RETURNS: the seconds the plan takes with at most `max_reps` repetitions a case and
// file_read runtimes capped at `cap_s` (<= 0: no cap).
double total_with(const std::vector<CaseCost>& costs, int max_reps, double cap_s,
                  std::vector<BudgetChoice>* out) {
  double total = 0;
  if (out) out->clear();
  for (const CaseCost& c : costs) {
    const int reps = std::min(c.repetitions, max_reps);
    double round = c.round_s;
    BudgetChoice choice{reps, 0};
    const double cap = std::max(cap_s, c.min_runtime_s);
    if (c.time_cappable && cap_s > 0 && round > c.ramp_s + cap) {
      round = c.ramp_s + cap;
      choice.runtime_ns = std::int64_t(std::llround(cap * 1e9));
    }
    total += c.prepare_once_s + reps * (c.prepare_s + round + kRepetitionOverheadS);
    if (out) out->push_back(choice);
  }
  return total;
}

}  // namespace

BudgetFit fit_budget(const std::vector<CaseCost>& costs, double budget_s) {
  BudgetFit fit;
  int most = 1;
  for (const CaseCost& c : costs) most = std::max(most, c.repetitions);
  const double min_cap = double(kBudgetMinRuntimeNs) * 1e-9;
  fit.minimum_s = total_with(costs, kBudgetMinRepetitions, min_cap, nullptr);
  // As planned, then fewer repetitions, then shorter file_read rounds.
  for (int reps = most; reps >= kBudgetMinRepetitions || reps == most; --reps) {
    const double t = total_with(costs, reps, 0, &fit.choices);
    if (t <= budget_s) {
      fit.fits = true;
      fit.estimated_s = t;
      return fit;
    }
    if (reps <= kBudgetMinRepetitions) break;
  }
  const int reps = std::min(most, kBudgetMinRepetitions);
  double longest = 0;
  for (const CaseCost& c : costs)
    if (c.time_cappable) longest = std::max(longest, c.round_s - c.ramp_s);
  // The longest whole-second cap that fits: the total grows with the cap.
  std::int64_t lo = std::int64_t(min_cap), hi = std::max<std::int64_t>(lo, std::int64_t(std::ceil(longest)));
  if (total_with(costs, reps, double(lo), nullptr) > budget_s) {
    fit.estimated_s = fit.minimum_s;
    fit.choices.clear();
    return fit;
  }
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (total_with(costs, reps, double(mid), nullptr) <= budget_s) lo = mid;
    else hi = mid - 1;
  }
  fit.fits = true;
  fit.estimated_s = total_with(costs, reps, double(lo), &fit.choices);
  return fit;
}

std::string format_estimate(double seconds) {
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  }
  return buf;
}

}  // namespace feedbench
