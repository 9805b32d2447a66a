// The trainer's consumer loop and its workers (see trainer.h).
#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/threads.h"

namespace feedbench {
namespace {

// Sleeps most of the way, then spins the last ~100 µs: a simulated step is accurate to a few
// microseconds instead of the scheduler's sleep overshoot.
void wait_until_ns(std::int64_t deadline) {
  constexpr std::int64_t kSpin = 100'000;
  std::int64_t now = now_ns();
  if (deadline - now > kSpin) std::this_thread::sleep_for(std::chrono::nanoseconds(deadline - now - kSpin));
  while (now_ns() < deadline) {
  }
}

std::int64_t draw_step_ns(const Distribution& d, std::mt19937_64& rng) {
  switch (d.kind) {
    case Distribution::Kind::fixed: return d.a_ns;
    case Distribution::Kind::normal: {
      std::normal_distribution<double> dist(double(d.a_ns), double(d.b_ns));
      return std::max<std::int64_t>(0, std::int64_t(dist(rng)));
    }
    case Distribution::Kind::uniform: {
      if (d.b_ns <= d.a_ns) return d.a_ns;
      std::uniform_int_distribution<std::int64_t> dist(d.a_ns, d.b_ns);
      return dist(rng);
    }
  }
  return d.a_ns;
}

// Spends `ns` of CPU time on this worker thread (none when ns <= 0), counted as its transform's:
// a recorded job's CPU beyond its reads, or a framework's own work in its worker.
void burn_worker_cpu(std::int64_t ns, WorkerTotals& totals) {
  if (ns <= 0) return;
  const std::int64_t t0 = now_ns();
  burn_cpu_ns(ns);
  totals.transform_cpu_ns += ns;
  totals.transform_ns += now_ns() - t0;
}

}  // namespace

Trainer::Trainer(const LoaderOptions& o, const LoaderSchedule& schedule, const SampleSource& source,
                 int index, RunState& run)
    : o_(o), schedule_(schedule), source_(source), index_(index), run_(run),
      rng_(o.seed * 0xBF58476D1CE4E5B9ull + std::uint64_t(index) * 1000003 + 17) {}

void Trainer::run_epoch(int epoch, const std::vector<std::size_t>* order) {
  outcome.epochs.emplace_back();
  try {
    if (readers_.empty()) {
      const bool decode = o_.transform.per == TransformCost::Per::decode;
      for (int w = 0; w < std::max(o_.workers, 1); ++w) {
        readers_.push_back(source_.make_reader());
        readers_.back()->keep_data(decode || crosses_processes());
        decoders_.push_back(decode ? std::make_unique<JpegDecoder>() : nullptr);
      }
      held_.resize(readers_.size());
    }
    if (o_.device_step && !device_) device_ = o_.device_step(index_);
    run_epoch(epoch, order, outcome.epochs.back());
  } catch (const std::exception& ex) {
    run_.fail(ex.what());
  }
}

void Trainer::finish() {
  for (const EpochOutcome& e : outcome.epochs) outcome.read.merge(e.read);
  // A reader returns what is left of a sample whose file shrank or vanished, without naming it.
  if (!outcome.read.complete())
    outcome.read.incomplete = "files of the selection shrank or vanished since the scan";
  for (const auto& r : readers_) {
    const Engine::OpenCounts opens = r->open_counts();
    outcome.read.files_opened += opens.noatime + opens.plain;
    outcome.read.noatime_opens += opens.noatime;
  }
  readers_.clear();
  decoders_.clear();
  if (device_) {
    outcome.device_copy = device_->copy_stats();
    outcome.device_busy_ns = device_->device_busy_ns();
    device_.reset();
  }
}

bool BatchQueue::stopped() {
  std::lock_guard lock(m_);
  return stop_;
}

bool BatchQueue::wait_turn(std::size_t j) {
  std::unique_lock lock(m_);
  cv_.wait(lock, [&] { return stop_ || j < consumed_ + depth_; });
  return !stop_;
}

void BatchQueue::put(std::size_t j, const Batch& b) {
  std::lock_guard lock(m_);
  slots_[j] = b;
  cv_.notify_all();
}

bool BatchQueue::take(std::size_t j, Batch* b) {
  std::unique_lock lock(m_);
  cv_.wait(lock, [&] { return stop_ || slots_[j].ready; });
  if (!slots_[j].ready) return false;
  *b = slots_[j];
  consumed_ = j + 1;
  cv_.notify_all();
  return true;
}

void BatchQueue::stop() {
  std::lock_guard lock(m_);
  stop_ = true;
  cv_.notify_all();
}

std::size_t Trainer::workers_of(int epoch) const {
  return std::size_t(o_.recorded ? o_.recorded->epoch(std::size_t(epoch)).workers : o_.workers);
}

void Trainer::run_epoch(int epoch, const std::vector<std::size_t>* order, EpochOutcome& out) {
  const RecordedLoading::Epoch* recorded = o_.recorded ? &o_.recorded->epoch(std::size_t(epoch)) : nullptr;
  const std::size_t batches = recorded ? recorded->batches.size() : std::size_t(schedule_.steps_per_epoch);
  const std::size_t W = workers_of(epoch);
  const EpochJobs jobs = deal_batches(epoch, batches, order);
  const int prefetch = recorded ? recorded->prefetch : o_.prefetch;
  BatchQueue queue(batches, W * std::size_t(std::max(prefetch, 1)));
  std::vector<WorkerTotals> totals(std::max<std::size_t>(W, 1));
  std::optional<BatchChannel> channel;
  if (crosses_processes()) channel.emplace();

  const std::int64_t epoch_start = now_ns();
  std::vector<std::thread> threads;
  start_workers(jobs, queue, channel ? &*channel : nullptr, totals, threads, epoch_start);
  for (std::size_t j = 0; j < batches && !run_.failed; ++j) {
    const std::int64_t t0 = now_ns();
    Batch b;
    SharedBatch shared;  // across processes: the batch's buffer, mapped until after the step
    if (W == 0) {
      b = build(jobs, 0, j, totals[0]);
    } else {
      if (channel && (shared = channel->receive(j)).empty()) break;  // a worker failed
      if (!queue.take(j, &b)) break;
    }
    // The framework's own cost of next() on a ready batch is the trainer's wait too; a recorded
    // job's trainer spent so much of it on the CPU (unpickling).
    const std::int64_t taken = now_ns();
    if (recorded) burn_cpu_ns(recorded->batches[j].take_cpu_ns);
    // Across processes the tensors are those that arrived; else those the collate makes.
    const std::uint64_t tensors =
        shared.empty() ? loader_batch_tensors(o_, b.samples) : shared.tensors().size();
    const std::int64_t charged = loader_next_cost_ns(o_, b.bytes, tensors);
    if (charged > 0) wait_until_ns(taken + charged);
    const std::int64_t t1 = now_ns();
    const std::int64_t recorded_step = recorded ? recorded->batches[j].step_ns : 0;
    const std::int64_t compute_ns =
        recorded ? std::max<std::int64_t>(recorded_step, 0) : draw_step_ns(o_.step_time, rng_);
    if (recorded) burn_cpu_ns(recorded->batches[j].step_cpu_ns);  // the step's CPU, within its wall
    if (!compute_step(b, t1, compute_ns, j + 1 == batches))
      break;  // the workers are stopped and joined below
    const std::int64_t t2 = now_ns();
    // The warm-up is the first steps of the run: later epochs are measured whole. A recorded
    // batch with no step after it (a pass's last) is no step either, but its wait is one of the
    // job's waits, as watch counts them.
    if (recorded_step < 0) {
      out.warmup_read_bytes += b.read;
      out.wait.record(std::uint64_t(t1 - t0));
    } else if (epoch == 0 && std::int64_t(out.warmup_steps) < schedule_.warmup_steps) {
      ++out.warmup_steps;
      out.warmup_read_bytes += b.read;
    } else {
      record_step(out, t0, t1, t2, b);
      out.charged_ns += charged;
    }
  }
  out.epoch_ns = now_ns() - epoch_start;
  queue.stop();
  if (channel) channel->stop();  // a worker still sending gives up
  for (std::thread& t : threads) t.join();
  for (const WorkerTotals& t : totals) {
    outcome.work.read_ns += t.read_ns;
    outcome.work.transform_ns += t.transform_ns;
    outcome.work.transform_cpu_ns += t.transform_cpu_ns;
    outcome.work.transform_idle_ns += t.transform_idle_ns;
    outcome.work.pixels += t.pixels;
    outcome.work.bytes += t.bytes;
    outcome.work.samples += t.samples;
  }
}

EpochJobs Trainer::deal_batches(int epoch, std::size_t batches, const std::vector<std::size_t>* order) {
  const std::size_t B = std::size_t(o_.batch_size);
  EpochJobs out;
  out.jobs.resize(std::max<std::size_t>(workers_of(epoch), 1));
  if (o_.recorded) {
    // The recording's batches: each by its recorded worker where the epoch has it, else in
    // PyTorch's round robin.
    const RecordedLoading::Epoch& e = o_.recorded->epoch(std::size_t(epoch));
    out.recorded = &e;
    std::uint64_t low = UINT64_MAX, high = 0;
    for (const RecordedLoading::Batch& b : e.batches)
      low = std::min(low, b.first), high = std::max(high, b.first + b.count);
    out.base = low == UINT64_MAX ? 0 : low;
    for (std::uint64_t i = out.base; i < high; ++i) out.mine.push_back(std::size_t(i));
    for (std::size_t j = 0; j < batches; ++j) {
      const std::int32_t w = e.batches[j].worker;
      out.jobs[w >= 0 && std::size_t(w) < out.jobs.size() ? std::size_t(w) : j % out.jobs.size()].push_back(
          j);
    }
    return out;
  }
  const std::vector<std::uint64_t>* shard_records = source_.shard_records();
  out.streams = shard_records != nullptr;
  if (shard_records) {
    // Streams: each worker reads its shards of the plan; batch j comes from the worker the
    // plan names.
    const StreamPlan plan = loader_stream_plan(o_, *shard_records, epoch, index_);
    FB_CHECK(plan.batch_worker.size() >= batches, "the schedule refuses more steps than the plan holds");
    for (std::size_t w = 0; w < plan.shards.size(); ++w) {
      const std::uint64_t seed =
          mix64(o_.seed ^ mix64((std::uint64_t(epoch) << 40) ^ (std::uint64_t(index_) << 20) ^ w));
      readers_[w]->start_stream(plan.shards[w], o_.shuffle_buffer, seed);
    }
    for (std::size_t j = 0; j < batches; ++j) out.jobs[plan.batch_worker[j]].push_back(j);
  } else {
    // DistributedSampler's split across all nodes' trainers (loader_trainer_share).
    FB_CHECK(order != nullptr, "an epoch read by index has its order");
    out.mine = loader_trainer_share(*order, index_, o_, schedule_);
    FB_CHECK(batches * B < out.mine.size() + B, "the schedule refuses more steps than the share holds");
    // PyTorch's round robin: worker w builds batches w, w+W, ...
    for (std::size_t j = 0; j < batches; ++j) out.jobs[j % out.jobs.size()].push_back(j);
  }
  return out;
}

void Trainer::start_workers(const EpochJobs& jobs, BatchQueue& queue, BatchChannel* channel,
                            std::vector<WorkerTotals>& totals, std::vector<std::thread>& threads,
                            std::int64_t epoch_start) {
  const std::size_t W = jobs.recorded ? std::size_t(jobs.recorded->workers) : std::size_t(o_.workers);
  // A recorded job's workers started this long after its first ask (processes spawned, imports).
  const std::int64_t start_at = jobs.recorded ? epoch_start + jobs.recorded->start_ns : 0;
  const std::int64_t startup_cpu = jobs.recorded ? jobs.recorded->startup_cpu_ns : 0;
  auto stop = [&queue, channel] {
    queue.stop();
    if (channel) channel->stop();
  };
  for (std::size_t w = 0; w < W; ++w) {
    const std::string refused = start_thread(
        threads,
        [&, w, channel, stop, start_at, startup_cpu] {  // by value: this call's own
          try {
            burn_cpu_ns(startup_cpu);  // the worker's own start-up on the CPU, then the rest waited
            if (start_at > 0) wait_until_ns(start_at);
            // At most `depth` batches are outstanding ahead of the trainer.
            for (std::size_t j : jobs.jobs[w]) {
              if (!queue.wait_turn(j)) return;
              Batch b = build(jobs, w, j, totals[w], channel != nullptr);
              // The framework's own work in its worker (a recorded job's is in its recorded CPU).
              if (!jobs.recorded)
                burn_worker_cpu(o_.worker_cost_ns + o_.worker_cost_per_sample_ns * std::int64_t(b.samples),
                                totals[w]);
              if (channel) {
                std::vector<std::span<const std::byte>> samples(held_[w].begin(), held_[w].end());
                channel->send(j, samples, o_.collate == LoaderOptions::Collate::list);
              }
              queue.put(j, b);
              // The job's worker put the batch on its queue, whose feeder thread pickled it
              // while the worker went on to its next: that CPU, after the hand-over.
              if (jobs.recorded) burn_worker_cpu(jobs.recorded->batches[j].after_cpu_ns, totals[w]);
            }
          } catch (const std::exception& ex) {
            if (queue.stopped()) return;  // the epoch ended while this worker sent ahead of it
            run_.fail(ex.what());
            stop();
          }
        },
        "loader worker", w, W);
    if (!refused.empty()) {  // the system would not start it (pids limit): the run fails
      run_.fail(refused);
      stop();
      break;
    }
  }
}

Batch Trainer::build(const EpochJobs& jobs, std::size_t w, std::size_t j, WorkerTotals& totals, bool hold) {
  if (jobs.recorded) {
    // The recorded reads, then what the job's worker spent on the CPU beyond them (its
    // transform and collate: this worker's own reads' CPU counted against it).
    const RecordedLoading::Batch& rb = jobs.recorded->batches[j];
    const std::int64_t cpu0 = thread_cpu_ns();
    const std::size_t from = std::size_t(rb.first - jobs.base);
    Batch b = build_batch(*readers_[w], &jobs.mine, from, from + rb.count, TransformCost{}, totals,
                          decoders_[w].get(), hold ? &held_[w] : nullptr);
    burn_worker_cpu(rb.cpu_ns - (thread_cpu_ns() - cpu0), totals);
    if (rb.samples > 0) b.samples = rb.samples;  // the job's samples, not its files read
    if (rb.idle_ns > 0) {  // the job's own wait in its fetch: the transform's wall, not its CPU
      const std::int64_t t1 = now_ns();
      wait_until_ns(t1 + rb.idle_ns);
      totals.transform_ns += now_ns() - t1;
      totals.transform_idle_ns += now_ns() - t1;
    }
    return b;
  }
  const std::size_t B = std::size_t(o_.batch_size);
  const std::size_t end = jobs.streams ? (j + 1) * B : std::min(jobs.mine.size(), (j + 1) * B);
  return build_batch(*readers_[w], jobs.streams ? nullptr : &jobs.mine, j * B, end, o_.transform, totals,
                     decoders_[w].get(), hold ? &held_[w] : nullptr);
}

bool Trainer::compute_step(const Batch& b, std::int64_t t1, std::int64_t compute_ns, bool last_of_epoch) {
  if (!device_) {
    wait_until_ns(t1 + compute_ns);
    return true;
  }
  try {
    device_->step(b.bytes, compute_ns);
    if (last_of_epoch) device_->finish();  // the epoch ends when its last kernel does
    return true;
  } catch (const std::exception& ex) {
    run_.fail(ex.what());
    return false;
  }
}

void Trainer::record_step(EpochOutcome& out, std::int64_t t0, std::int64_t t1, std::int64_t t2,
                          const Batch& b) {
  if (!out.measured) {
    out.measured = true;
    out.first_t0 = t0;
  }
  out.last_t2 = t2;
  ++out.steps;
  out.samples += b.samples;
  out.read.bytes += b.bytes;
  out.read.bytes_planned += b.planned;
  out.read_bytes += b.read;
  out.waited_ns += t1 - t0;
  out.computed_ns += t2 - t1;
  out.stepped_ns += t2 - t0;
  out.wait.record(std::uint64_t(t1 - t0));
}

}  // namespace feedbench
