// A simulated training loop (PyTorch's DataLoader in shape, DLIO's accelerator utilisation in
// purpose): per accelerator a trainer thread and `workers` loader threads. Each worker builds
// whole batches (read every sample, apply the transform's CPU cost) into a bounded, in-order
// queue of workers × prefetch batches; the trainer times how long it waits for each batch
// (the data stall), then "computes" for the step time. Everything is measured, never assumed.
// Independent of Google Benchmark: benchmarks/loader_family.cc runs it inside a case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedbench/dataset.h"
#include "feedbench/engine.h"
#include "feedbench/histogram.h"
#include "feedbench/throttle.h"
#include "feedbench/units.h"

namespace feedbench {

// Reads samples for one worker thread; not shared between threads.
class SampleReader {
 public:
  virtual ~SampleReader() = default;
  // Reads sample i in full. RETURNS: bytes read (fewer than planned_bytes(i) when its file
  // shrank or vanished since the scan). Throws RunError on an I/O failure.
  virtual std::uint64_t read(std::size_t i) = 0;
  // RETURNS: the bytes a complete read of sample i returns.
  virtual std::uint64_t planned_bytes(std::size_t i) const = 0;
  // RETURNS: the opens this reader made with and without O_NOATIME (none without files).
  virtual Engine::OpenCounts open_counts() const { return {}; }
};

// Where samples come from. Shared by every worker; each worker reads through its own reader.
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual std::size_t count() const = 0;
  // RETURNS: a reader for one worker thread (opens its engine). Throws RunError/InputError.
  virtual std::unique_ptr<SampleReader> make_reader() const = 0;
};

// One sample per file of `files`, read whole through engine `engine` (psync, mmap, io_uring)
// in chunks of `block_size` bytes, every reader's chunks paced by `throttle` when given.
// REQUIRES: `files` outlives the source.
std::unique_ptr<SampleSource> make_file_source(const FileSet& files, const std::string& engine,
                                               std::size_t block_size = 1 << 20,
                                               std::shared_ptr<Throttle> throttle = nullptr);

// Fixed-size records out of shard files: shard j holds file_size(j) / record_size records,
// record r of it at offset r × record_size. Throws InputError when no file holds a record.
std::unique_ptr<SampleSource> make_record_source(const FileSet& files, std::uint64_t record_size,
                                                 const std::string& engine,
                                                 std::size_t block_size = 1 << 20,
                                                 std::shared_ptr<Throttle> throttle = nullptr);

// Calibration: no I/O. Sample i copies file_size(i) bytes (of `files`, never read) out of a
// preloaded buffer, so batches are as large as the real ones.
std::unique_ptr<SampleSource> make_memory_source(const FileSet& files);

// Tests: `count` samples of `sample_bytes`, each taking `delay_ns` of sleep. Consecutive reads
// of one reader chain their deadlines, so sleep overshoot does not accumulate over a batch.
std::unique_ptr<SampleSource> make_delay_source(std::size_t count, std::uint64_t sample_bytes,
                                                std::int64_t delay_ns);

struct LoaderOptions {
  int batch_size = 1;
  int workers = 1;   // 0: the trainer loads each batch itself (PyTorch's num_workers=0)
  int prefetch = 2;  // batches in flight per worker (prefetch_factor)
  Distribution step_time;  // simulated accelerator step
  TransformCost transform;  // CPU work per sample / per MiB
  int epochs = 1;
  std::int64_t steps = 0;  // cap on steps per epoch per trainer; 0: the whole epoch
  int warmup_steps = 1;    // first steps of the run excluded from the metrics
  int accelerators = 1;    // trainers, each with its own workers, sharing the data set
  std::uint64_t seed = 42;
};

struct LoaderResult {
  std::uint64_t samples = 0;  // in measured steps, all trainers
  std::uint64_t bytes = 0;    // read for measured steps
  std::uint64_t bytes_planned = 0;  // what those samples hold at the scan: more than `bytes`
                                    // when files shrank or vanished during the run
  Engine::OpenCounts opens;  // every open of the run (warm-up included), with/without O_NOATIME
  std::uint64_t steps = 0;    // measured steps, all trainers
  std::uint64_t warmup_steps = 0;  // excluded
  double measured_s = 0;  // wall: first measured step start to last step end
  double epoch_s = 0;     // mean wall of an epoch (warm-up included), over trainers and epochs
  Histogram wait_ns;      // data wait per measured step
  double wait_s = 0;      // totals over measured steps, all trainers
  double compute_s = 0;
  double step_s = 0;      // wait + compute + loop overhead
  double stall_fraction = 0;  // wait_s / step_s
  double au = 0;              // compute_s / step_s
  std::vector<double> au_per_trainer;
  double min_au = 0;
  double read_s = 0;       // worker time spent reading samples (all batches)
  double transform_s = 0;  // worker time spent in the transform
  double cpu_util = 0;     // process CPU over the run / (wall × cores)
  double samples_per_second = 0;
  double bytes_per_second = 0;
};

class LoaderSim {
 public:
  // REQUIRES: batch_size >= 1, workers >= 0, prefetch >= 1, epochs >= 1, accelerators >= 1.
  // Throws InputError otherwise.
  LoaderSim(const LoaderOptions& options, const SampleSource& source);

  // Runs every trainer to the end of its epochs (or steps cap) and joins every thread.
  // RETURNS: the measurements. Throws RunError (first failure of any worker) after a clean stop.
  LoaderResult run();

 private:
  LoaderOptions options_;
  const SampleSource& source_;
};

// True when the loader, not storage, limits training: AU below target, the CPU near saturation
// (cpu_util >= 0.85) and workers spending more time transforming than reading.
bool loader_cpu_bound(double au, double target_au, double cpu_util, double read_s,
                      double transform_s);

// RETURNS: "AU 96.1% — storage keeps up", "AU 61.3% — training waits for data 38.7% of the
// time", with " — the loader is CPU-bound, not storage-bound: ..." when `cpu_bound`, or a note
// that workers spend most time in the transform when that dominates but the CPU has room.
std::string loader_verdict(double au, double stall_fraction, double target_au, bool cpu_bound,
                           double read_s = 0, double transform_s = 0);

}  // namespace feedbench
