// The loader's schedule: which samples each epoch takes, in what order (a seeded shuffle or
// skewed draws), which trainer's share holds them, which worker's stream a batch comes from, and
// how many steps the data set can hold.
#include "feedbench/loader/loader.h"

#include <algorithm>
#include <random>

#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/io/skew.h"

namespace feedbench {
namespace {

// Fisher-Yates with our own index draw: the same order on every standard library.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, int epoch) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + std::uint64_t(epoch) * 0xD1B54A32D192ED03ull + 1);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

// The plan of trainer `global` of all nodes' trainers: every (accelerators × nodes)-th shard of
// the epoch's order, from `global`.
StreamPlan stream_plan_of(const LoaderOptions& o, const std::vector<std::uint64_t>& shard_records, int epoch,
                          std::size_t global) {
  const std::size_t K = std::size_t(std::max(o.accelerators, 1)) * std::size_t(std::max(o.nodes, 1));
  const std::size_t W = std::size_t(std::max(o.workers, 1));
  const std::uint64_t B = std::uint64_t(std::max(o.batch_size, 1));
  StreamPlan plan;
  plan.shards.resize(W);
  plan.records.resize(W);
  const std::vector<std::size_t> order = epoch_order(shard_records.size(), o.seed, epoch);
  for (std::size_t i = global, n = 0; i < order.size(); i += K, ++n) {
    plan.shards[n % W].push_back(order[i]);
    plan.records[n % W] += shard_records[order[i]];
  }
  std::vector<std::uint64_t> left(W);
  for (std::size_t w = 0; w < W; ++w) left[w] = plan.records[w] / B;  // drop_last per worker
  for (bool more = true; more;) {
    more = false;
    for (std::size_t w = 0; w < W; ++w)
      if (left[w] > 0) {
        plan.batch_worker.push_back(w);
        --left[w];
        more = true;
      }
  }
  return plan;
}

}  // namespace

StreamPlan loader_stream_plan(const LoaderOptions& o, const std::vector<std::uint64_t>& shard_records,
                              int epoch, int trainer) {
  return stream_plan_of(
      o, shard_records, epoch,
      std::size_t(o.node) * std::size_t(std::max(o.accelerators, 1)) + std::size_t(trainer));
}

namespace {

// The streaming part of loader_schedule: steps every trainer of every node can take in every
// epoch (all nodes step together).
void stream_schedule(const LoaderOptions& o, const std::vector<std::uint64_t>& shard_records,
                     LoaderSchedule& s) {
  const std::uint64_t B = std::uint64_t(std::max(o.batch_size, 1));
  std::uint64_t fewest = UINT64_MAX;
  for (int e = 0; e < std::max(o.epochs, 1); ++e)
    for (std::size_t k = 0; k < std::size_t(std::max(o.accelerators, 1)) * std::size_t(std::max(o.nodes, 1));
         ++k)
      fewest = std::min<std::uint64_t>(fewest, stream_plan_of(o, shard_records, e, k).batch_worker.size());
  s.share = std::size_t(fewest * B);
  const std::string why = " (each worker reads whole shards and drops its last short batch; " +
                          std::to_string(shard_records.size()) + " shards, " +
                          std::to_string(std::max(o.accelerators, 1)) + " accelerator(s)" +
                          (o.nodes > 1 ? " × " + std::to_string(o.nodes) + " nodes" : std::string()) + " × " +
                          std::to_string(std::max(o.workers, 1)) + " worker(s))";
  if (o.steps > 0) {
    s.steps_per_epoch = o.steps;
    if (std::uint64_t(o.steps) > fewest)
      s.refused = "loader: steps " + std::to_string(o.steps) + " of batch_size " + std::to_string(B) +
                  " records, but in some epoch a trainer's shards make only " + std::to_string(fewest) +
                  " whole batches" + why +
                  ": refused rather than run fewer steps; lower steps or batch_size, or use "
                  "more records";
  } else {
    s.steps_per_epoch = std::int64_t(fewest);
    if (fewest == 0)
      s.refused = "loader: in some epoch a trainer's shards make no whole batch of " + std::to_string(B) +
                  " records" + why + "; use more records, or lower batch_size, workers or accelerators";
  }
}

}  // namespace

namespace {

// A recorded job's schedule: its batches as recorded, no warm-up (a watched job's every step
// counts), judged on the steps of its first epoch.
LoaderSchedule recorded_schedule(const LoaderOptions& o, std::size_t samples, std::uint64_t dataset_bytes) {
  LoaderSchedule s;
  s.samples = samples;
  s.dataset_bytes = dataset_bytes;
  s.whole_epoch = true;
  s.share = samples;
  const RecordedLoading& r = *o.recorded;
  std::int64_t first_steps = 0;
  // Each pass once: the epochs beyond go over them again.
  for (std::size_t e = 0; e < r.passes.size(); ++e) {
    s.steps_per_epoch = std::max(s.steps_per_epoch, std::int64_t(r.passes[e].batches.size()));
    for (const RecordedLoading::Batch& b : r.passes[e].batches) {
      if (e == 0 && b.step_ns >= 0) ++first_steps;
      if (b.first + b.count > samples && s.refused.empty())
        s.refused = "replay: a batch of epoch " + std::to_string(e + 1) + " reads samples up to " +
                    std::to_string(b.first + b.count) + ", but the recording holds " +
                    std::to_string(samples);
    }
  }
  if (o.accelerators != 1 || o.nodes != 1)
    s.refused = "replay: a recorded job runs as one trainer on one node (accelerators 1)";
  if (r.passes.empty() || r.epochs < 1) s.refused = "replay: the recording holds no batch";
  const int workers = r.passes.empty() ? 0 : r.passes[0].workers;
  s.min_measured_steps = std::max<std::int64_t>(kMinMeasuredSteps, 2 * std::int64_t(workers));
  s.measured_first_epoch = first_steps;
  s.prefetch = r.passes.empty() ? o.prefetch : r.passes[0].prefetch;
  s.workers = workers;
  s.batch_size = o.batch_size;
  s.accelerators = 1;
  s.recorded = true;
  return s;
}

}  // namespace

LoaderSchedule loader_schedule(const LoaderOptions& o, std::size_t samples, std::uint64_t dataset_bytes,
                               const std::vector<std::uint64_t>* shard_records) {
  if (o.recorded) return recorded_schedule(o, samples, dataset_bytes);
  LoaderSchedule s;
  s.samples = samples;
  s.dataset_bytes = dataset_bytes;
  s.whole_epoch = o.steps == 0;
  // Every node's accelerators share each epoch (one node: this process's).
  const std::uint64_t N = std::uint64_t(std::max(o.nodes, 1));
  const std::uint64_t K = std::uint64_t(std::max(o.accelerators, 1)) * N;
  const std::uint64_t B = std::uint64_t(std::max(o.batch_size, 1));
  const std::string trainers =
      N == 1 ? std::to_string(K) + " accelerator(s)"
             : std::to_string(K / N) + " accelerator(s) × " + std::to_string(N) + " nodes";
  s.share = std::size_t(samples / K);
  s.warmup_steps = std::max<std::int64_t>(o.warmup_steps, std::int64_t(o.prefetch) * o.workers);
  // A shuffle buffer's fill is counted, not refused: tf.data fills the buffer each time the data
  // set is iterated, so every epoch of the user's training begins with it and the accelerator
  // waits for it, and an epoch's AU (DLIO's) is the share of the epoch the accelerator computed.
  // A buffer larger than a worker's share (shuffle(10000) over a small set) is a real
  // configuration that deserves an answer, and the answer is the one its training sees. The fill
  // lands in each worker's first batch, so no warm-up can exclude a step without it: the first
  // epoch is measured whole, as later epochs are.
  s.fill_counted = shard_records != nullptr && o.shuffle_buffer > 1;
  if (s.fill_counted) s.warmup_steps = 0;
  s.min_measured_steps = std::max<std::int64_t>(kMinMeasuredSteps, 2 * std::int64_t(o.workers));
  auto size_of = [&](std::uint64_t n) {
    if (dataset_bytes == 0 || samples == 0) return std::string();
    return " (about " + format_size(double(dataset_bytes) / double(samples) * double(n)) + ")";
  };
  if (shard_records) {
    stream_schedule(o, *shard_records, s);
  } else if (o.steps > 0) {
    s.steps_per_epoch = o.steps;
    const std::uint64_t need = std::uint64_t(o.steps) * B * K;
    if (need / K / B != std::uint64_t(o.steps) || need > samples)
      s.refused = "loader: steps " + std::to_string(o.steps) + " × batch_size " + std::to_string(B) + " × " +
                  trainers + " need " + std::to_string(need) + " samples per epoch" + size_of(need) +
                  ", but the data set holds " + std::to_string(samples) + size_of(samples) +
                  ": refused rather than run fewer steps; use a data set of at least " +
                  std::to_string(need) + " samples, or lower steps, batch_size or accelerators";
  } else {
    s.steps_per_epoch = std::int64_t((s.share + B - 1) / B);
    if (s.share == 0)
      s.refused = "loader: the data set holds " + std::to_string(samples) + " samples, fewer than " +
                  (N == 1 ? std::to_string(K) + " accelerators" : trainers + " (" + std::to_string(K) + ")") +
                  ": each needs at least one";
  }
  s.measured_first_epoch = std::max<std::int64_t>(0, s.steps_per_epoch - s.warmup_steps);
  s.prefetch = o.prefetch;
  s.workers = o.workers;
  s.batch_size = std::int64_t(B);
  s.accelerators = std::int64_t(K);
  return s;
}

std::string LoaderSchedule::not_judged_reason() const {
  if (!refused.empty()) return refused;
  if (judged()) return "";
  // A replay's steps are the job's batches: more data would not add any, smaller batches do.
  if (recorded)
    return "not enough steps to judge: the replay's first pass takes " +
           plural(std::size_t(measured_first_epoch), "step", "steps") + ", " +
           std::to_string(min_measured_steps) +
           " needed; --set batch_size=K regroups the recorded samples into more, smaller batches";
  std::string why = "not enough steps to judge: " + std::to_string(measured_first_epoch) + " measured, " +
                    std::to_string(min_measured_steps) + " needed per trainer (" +
                    std::to_string(steps_per_epoch) + " steps in epoch 1 − a warm-up of " +
                    std::to_string(warmup_steps);
  if (warmup_steps == std::int64_t(prefetch) * workers && workers > 0)
    why += " = prefetch " + std::to_string(prefetch) + " × workers " + std::to_string(workers);
  if (fill_counted) why += ": the shuffle buffer's fill is measured";
  why += ")";

  const std::int64_t steps_needed = warmup_steps + min_measured_steps;
  const std::uint64_t samples_needed =
      std::uint64_t(steps_needed) * std::uint64_t(batch_size) * std::uint64_t(accelerators);
  if (!whole_epoch && samples_needed <= samples) why += ": raise steps to " + std::to_string(steps_needed);
  else
    why += ": " + std::to_string(steps_needed) + " steps of batch_size " + std::to_string(batch_size) +
           " × " + std::to_string(accelerators) + " accelerator(s) need a data set of " +
           std::to_string(samples_needed) + " samples (it holds " + std::to_string(samples) +
           "), or lower batch_size";
  return why;
}

std::vector<std::size_t> loader_epoch_order(const LoaderOptions& o, std::size_t count, int epoch) {
  if (o.skew.kind == Skew::Kind::none || count == 0) return epoch_order(count, o.seed, epoch);
  std::vector<std::uint32_t> ranking = o.ranking;
  if (ranking.size() != count) {
    ranking.resize(count);
    for (std::size_t i = 0; i < count; ++i) ranking[i] = std::uint32_t(i);
  }
  const SkewSampler sampler(o.skew, std::move(ranking));
  const std::vector<std::uint32_t> drawn = skewed_order(sampler, count, o.seed, std::uint64_t(epoch));
  return std::vector<std::size_t>(drawn.begin(), drawn.end());
}

std::vector<std::size_t> loader_trainer_share(const std::vector<std::size_t>& all, int trainer,
                                              const LoaderOptions& o, const LoaderSchedule& schedule) {
  // Trainer k of all nodes' trainers takes every K-th sample; this node's trainers are numbered
  // from node * accelerators.
  std::vector<std::size_t> mine;
  const std::size_t trainers = std::size_t(o.accelerators) * std::size_t(o.nodes);
  for (std::size_t i = std::size_t(o.node) * std::size_t(o.accelerators) + std::size_t(trainer);
       i < all.size() && mine.size() < schedule.share; i += trainers)
    mine.push_back(all[i]);
  return mine;
}

std::vector<std::uint64_t> loader_sample_reads(const LoaderOptions& o, const LoaderSchedule& schedule,
                                               std::size_t count) {
  std::vector<std::uint64_t> reads(count, 0);
  const std::size_t per_trainer = std::size_t(schedule.steps_per_epoch) * std::size_t(o.batch_size);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    const std::vector<std::size_t> all = loader_epoch_order(o, count, epoch);
    for (int k = 0; k < o.accelerators; ++k) {
      const std::vector<std::size_t> mine = loader_trainer_share(all, k, o, schedule);
      for (std::size_t i = 0; i < std::min(per_trainer, mine.size()); ++i) ++reads[mine[i]];
    }
  }
  return reads;
}

std::vector<EpochRereads> loader_epoch_rereads(const LoaderOptions& o, const LoaderSchedule& schedule,
                                               std::size_t count,
                                               const std::vector<std::uint64_t>* shard_records) {
  if (o.recorded) {  // counted as the recording was built
    std::vector<EpochRereads> out;
    if (!o.recorded->passes.empty())
      for (std::size_t e = 0; e < std::size_t(std::max(o.recorded->epochs, 0)); ++e)
        out.push_back(o.recorded->rereads(e));
    return out;
  }
  std::vector<EpochRereads> out(std::size_t(std::max(o.epochs, 0)));
  const std::uint64_t per_trainer = std::uint64_t(schedule.steps_per_epoch) * std::uint64_t(o.batch_size);
  if (shard_records) {  // streams read each of their shards' records once an epoch
    for (std::size_t e = 0; e < out.size(); ++e) {
      out[e].reads = per_trainer * std::uint64_t(o.accelerators);
      out[e].rereads = e > 0 ? out[e].reads : 0;
    }
    return out;
  }
  std::vector<bool> seen(count, false);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    const std::vector<std::size_t> all = loader_epoch_order(o, count, epoch);
    EpochRereads& r = out[std::size_t(epoch)];
    for (int k = 0; k < o.accelerators; ++k) {
      const std::vector<std::size_t> mine = loader_trainer_share(all, k, o, schedule);
      for (std::size_t i = 0; i < std::min<std::size_t>(per_trainer, mine.size()); ++i) {
        ++r.reads;
        if (seen[mine[i]]) ++r.rereads;
        seen[mine[i]] = true;
      }
    }
  }
  return out;
}

}  // namespace feedbench
