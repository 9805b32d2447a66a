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

}  // namespace

Trainer::Trainer(const LoaderOptions& o, const LoaderSchedule& schedule, const SampleSource& source,
                 int index, RunState& run)
    : o_(o), schedule_(schedule), source_(source), index_(index), run_(run),
      rng_(o.seed * 0xBF58476D1CE4E5B9ull + std::uint64_t(index) * 1000003 + 17) {}

void Trainer::run_epoch(int epoch) {
  outcome.epochs.emplace_back();
  try {
    if (readers_.empty()) {
      const bool decode = o_.transform.per == TransformCost::Per::decode;
      for (int w = 0; w < std::max(o_.workers, 1); ++w) {
        readers_.push_back(source_.make_reader());
        readers_.back()->keep_data(decode);
        decoders_.push_back(decode ? std::make_unique<JpegDecoder>() : nullptr);
      }
    }
    if (o_.device_step && !device_) device_ = o_.device_step(index_);
    run_epoch(epoch, outcome.epochs.back());
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

void Trainer::run_epoch(int epoch, EpochOutcome& out) {
  const std::size_t B = std::size_t(o_.batch_size);
  const std::size_t batches = std::size_t(schedule_.steps_per_epoch);
  const std::size_t W = std::size_t(o_.workers);
  // jobs[w]: the batches worker w builds, in order (worker 0 alone when the trainer loads).
  std::vector<std::vector<std::size_t>> jobs(std::max<std::size_t>(W, 1));
  std::vector<std::size_t> mine;
  const std::vector<std::uint64_t>* shard_records = source_.shard_records();
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
    for (std::size_t j = 0; j < batches; ++j) jobs[plan.batch_worker[j]].push_back(j);
  } else {
    // DistributedSampler's split across all nodes' trainers (loader_trainer_share).
    mine = loader_trainer_share(loader_epoch_order(o_, source_.count(), epoch), index_, o_, schedule_);
    FB_CHECK(batches * B < mine.size() + B, "the schedule refuses more steps than the share holds");
    // PyTorch's round robin: worker w builds batches w, w+W, ...
    for (std::size_t j = 0; j < batches; ++j) jobs[j % jobs.size()].push_back(j);
  }
  const std::vector<std::size_t>* indices = shard_records ? nullptr : &mine;
  // A batch's samples: [j × B, (j + 1) × B) of `mine`, or B records of its worker's stream.
  auto batch_end = [&](std::size_t j) {
    return shard_records ? (j + 1) * B : std::min(mine.size(), (j + 1) * B);
  };

  std::vector<Batch> slots(batches);
  std::mutex m;
  std::condition_variable cv;
  std::size_t consumed = 0;
  bool stop = false;
  const std::size_t depth = W * std::size_t(std::max(o_.prefetch, 1));
  std::vector<WorkerTotals> totals(std::max<std::size_t>(W, 1));

  const std::int64_t epoch_start = now_ns();
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < W; ++w) {
    const std::string refused = start_thread(
        threads,
        [&, w] {
          try {
            // At most `depth` batches are outstanding ahead of the trainer.
            for (std::size_t j : jobs[w]) {
              {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return stop || j < consumed + depth; });
                if (stop) return;
              }
              Batch b = build_batch(*readers_[w], indices, j * B, batch_end(j), o_.transform, totals[w],
                                    decoders_[w].get());
              std::lock_guard lock(m);
              slots[j] = b;
              cv.notify_all();
            }
          } catch (const std::exception& ex) {
            run_.fail(ex.what());
            std::lock_guard lock(m);
            stop = true;
            cv.notify_all();
          }
        },
        "loader worker", w, W);
    if (!refused.empty()) {  // the system would not start it (pids limit): the run fails
      run_.fail(refused);
      std::lock_guard lock(m);
      stop = true;
      cv.notify_all();
      break;
    }
  }

  for (std::size_t j = 0; j < batches && !run_.failed; ++j) {
    const std::int64_t t0 = now_ns();
    Batch b;
    if (W == 0) {
      b = build_batch(*readers_[0], indices, j * B, batch_end(j), o_.transform, totals[0],
                      decoders_[0].get());
    } else {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return stop || slots[j].ready; });
      if (!slots[j].ready) break;
      b = slots[j];
      consumed = j + 1;
      cv.notify_all();
    }
    const std::int64_t t1 = now_ns();
    const std::int64_t compute_ns = draw_step_ns(o_.step_time, rng_);
    if (device_) {
      try {
        device_->step(b.bytes, compute_ns);
        if (j + 1 == batches) device_->finish();  // the epoch ends when its last kernel does
      } catch (const std::exception& ex) {        // the workers are stopped and joined below
        run_.fail(ex.what());
        break;
      }
    } else {
      wait_until_ns(t1 + compute_ns);
    }
    const std::int64_t t2 = now_ns();
    // The warm-up is the first steps of the run: later epochs are measured whole.
    if (epoch == 0 && std::int64_t(out.warmup) < schedule_.warmup_steps) ++out.warmup;
    else record_step(out, t0, t1, t2, b);
  }
  out.epoch_ns = now_ns() - epoch_start;
  {
    std::lock_guard lock(m);
    stop = true;
    cv.notify_all();
  }
  for (std::thread& t : threads) t.join();
  for (const WorkerTotals& t : totals) {
    outcome.work.read_ns += t.read_ns;
    outcome.work.transform_ns += t.transform_ns;
    outcome.work.pixels += t.pixels;
    outcome.work.bytes += t.bytes;
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
  out.wait_ns += t1 - t0;
  out.compute_ns += t2 - t1;
  out.step_ns += t2 - t0;
  out.wait.record(std::uint64_t(t1 - t0));
}

}  // namespace feedbench
