// One simulated accelerator of a LoaderSim run, and what it measures: the consumer loop that
// waits for each batch (the data stall), then computes for the step time, with its workers
// building batches ahead of it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batch.h"
#include "feedbench/base/histogram.h"
#include "feedbench/dataset/jpeg.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/engine.h"
#include "feedbench/io/read_tally.h"
#include "feedbench/loader/loader.h"
#include "handover.h"

namespace feedbench {

// Shared by every thread of a run: the first failure stops everything.
struct RunState {
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;
  void fail(const std::string& what) {
    std::lock_guard lock(mutex);
    if (error.empty()) error = what;
    failed = true;
  }
};

// One trainer's part of one epoch.
// One trainer's epoch: its counters (read_bytes: Batch::read of its measured steps' batches).
struct EpochOutcome : LoaderCounters {
  ReadTally read;  // bytes read and planned in measured steps
  std::int64_t first_t0 = 0, last_t2 = 0;
  bool measured = false;
  std::int64_t epoch_ns = 0;
  Histogram wait;
};

struct TrainerOutcome {
  std::optional<SinkStats> device_copy;
  std::int64_t device_busy_ns = 0;
  std::vector<EpochOutcome> epochs;
  ReadTally read;  // after finish(): every epoch's, and every open of the readers (warm-up included)
  WorkerTotals work;
};

// The bounded, in-order queue between an epoch's workers and its trainer: batch j may be built
// once the trainer has taken all but `depth` of the batches before it (workers × prefetch), and
// is taken in order. Every wait ends at stop().
class BatchQueue {
 public:
  BatchQueue(std::size_t batches, std::size_t depth) : slots_(batches), depth_(depth) {}
  // A worker: waits until batch j may be built. RETURNS: false once stopped.
  bool wait_turn(std::size_t j);
  void put(std::size_t j, const Batch& b);
  // The trainer: waits for batch j into *b. RETURNS: false when stopped before it was ready.
  bool take(std::size_t j, Batch* b);
  void stop();
  bool stopped();

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Batch> slots_;
  std::size_t depth_;
  std::size_t consumed_ = 0;
  bool stop_ = false;
};

// Which batches of an epoch each worker builds, and of which samples.
struct EpochJobs {
  std::vector<std::vector<std::size_t>> jobs;  // per worker, in order (worker 0 alone when the trainer loads)
  // By index: the trainer's share of the epoch's order, batch j its [j × B, (j + 1) × B). Streams:
  // empty, and batch j is B records of its worker's stream.
  std::vector<std::size_t> mine;
  bool streams = false;
  // A recorded job's epoch: batch j is its batches[j], samples from `base` in `mine`.
  const RecordedLoading::Epoch* recorded = nullptr;
  std::uint64_t base = 0;
};

// One simulated accelerator: its readers and step-time stream live across epochs; each epoch
// runs on a thread of its own with fresh workers (PyTorch without persistent_workers).
class Trainer {
 public:
  Trainer(const LoaderOptions& o, const LoaderSchedule& schedule, const SampleSource& source, int index,
          RunState& run);

  // The body of the epoch's trainer thread: failures go to the run state. `order`: the epoch's
  // order over the samples (loader_epoch_order), drawn once for every trainer, which takes its
  // share of it; nullptr where the source streams or the job is recorded.
  // REQUIRES: `order` outlives the call.
  void run_epoch(int epoch, const std::vector<std::size_t>* order);

  // After the last epoch: tallies the epochs' reads and the readers' opens, and closes them.
  void finish();

  TrainerOutcome outcome;

 private:
  void run_epoch(int epoch, const std::vector<std::size_t>* order, EpochOutcome& out);
  // RETURNS: the epoch's batches dealt to the workers; starts each worker's stream when the
  // source is read in streams.
  EpochJobs deal_batches(int epoch, std::size_t batches, const std::vector<std::size_t>* order);
  // Starts a thread per worker building its batches into `queue` (each first sent through
  // `channel` when the hand-over is across processes); on a refused thread, fails the run.
  // A recorded epoch's workers first wait out its recorded start-up from `epoch_start`.
  void start_workers(const EpochJobs& jobs, BatchQueue& queue, BatchChannel* channel,
                     std::vector<WorkerTotals>& totals, std::vector<std::thread>& threads,
                     std::int64_t epoch_start);
  // RETURNS: batch j of the epoch, built by worker w's reader; with `hold`, each of its samples'
  // outputs kept in held_[w] for the hand-over.
  Batch build(const EpochJobs& jobs, std::size_t w, std::size_t j, WorkerTotals& totals, bool hold = false);
  // The accelerator's step on batch b, from t1, of compute_ns on the device or as a wait.
  // RETURNS: false after failing the run (the device failed).
  bool compute_step(const Batch& b, std::int64_t t1, std::int64_t compute_ns, bool last_of_epoch);
  // RETURNS: the workers of epoch `epoch` (a recorded epoch's own).
  std::size_t workers_of(int epoch) const;

  static void record_step(EpochOutcome& out, std::int64_t t0, std::int64_t t1, std::int64_t t2,
                          const Batch& b);

  // RETURNS: whether batches cross from worker processes to the trainer's (handover.h).
  bool crosses_processes() const { return o_.workers > 0 && o_.handover == LoaderOptions::Handover::process; }

  const LoaderOptions& o_;
  const LoaderSchedule& schedule_;
  const SampleSource& source_;
  int index_;
  RunState& run_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<SampleReader>> readers_;
  std::vector<std::unique_ptr<JpegDecoder>> decoders_;  // per reader, for a decode transform
  // Per reader: its batch's samples held until collated (handover process), reused.
  std::vector<std::vector<std::vector<std::byte>>> held_;
  std::unique_ptr<DeviceStep> device_;  // accelerator cuda (or a stand-in): the step's device
};

}  // namespace feedbench
