// A simulated training loop (PyTorch's DataLoader in shape, DLIO's accelerator utilisation in
// purpose): per accelerator a trainer thread and `workers` loader threads. Each worker builds
// whole batches (read every sample, apply the transform's CPU cost) into a bounded, in-order
// queue of workers × prefetch batches; the trainer times how long it waits for each batch
// (the data stall), then "computes" for the step time. Everything is measured, never assumed.
// Independent of Google Benchmark: benchmarks/loader_family.cc runs it inside a case.
//
// The rules that make its figures a verdict (loader_schedule says, before a run, how they apply):
// - Weak scaling, as MLPerf Storage: every accelerator runs the configured steps per epoch on its
//   own disjoint share of the epoch's shuffled order (DistributedSampler's split), so a data set
//   too small for accelerators × steps × batch_size is refused, never run with fewer steps.
//   Shares are disjoint so that no trainer reads a file another just pulled into the page cache.
// - Steps are never silently changed: steps beyond one epoch's share are refused, not cut.
// - Warm-up covers the prefetch queue: at least prefetch × workers steps at the start of the
//   run, because the workers fill a wave of batches while the trainer waits for the first one and
//   those batches are served without waiting. Later epochs start new workers (PyTorch without
//   persistent_workers) and are measured whole, their ramp-up included.
// - A shuffle buffer's fill is counted: a streaming source with a shuffle buffer has no warm-up,
//   its first epoch is measured whole. The fill reads up to shuffle_buffer records ahead in each
//   worker's first batch, which a warm-up would take with it, leaving measured steps served from
//   the buffer without reading.
// - The measured steps must have read what they took: a verdict needs, in every epoch, at least
//   kMinMeasuredReadShare of the bytes of the measured steps' samples read while their batches
//   were built. A stream reads ahead of its records (whole 1 MiB reads of a shard); a read ahead
//   that ended in the warm-up left the measured steps nothing to wait for.
// - A verdict needs at least max(10, 2 × workers) measured steps per trainer in every epoch
//   (batches arrive in waves of `workers`); below it the run is "not enough steps to judge".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "feedbench/base/histogram.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/engine.h"
#include "feedbench/io/read_tally.h"
#include "feedbench/io/skew.h"
#include "feedbench/io/throttle.h"

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
  // RETURNS: how a message names sample i (its file's path for file and record sources).
  virtual std::string sample_name(std::size_t i) const { return "sample " + std::to_string(i); }

  // Streaming sources (SampleSource::shard_records): starts a stream that reads `shards` (indices
  // of the source's shards) whole, in that order, and hands out their records through a shuffle
  // buffer of `buffer` records seeded with `seed` (0 or 1: in file order).
  virtual void start_stream(const std::vector<std::size_t>& shards, std::size_t buffer, std::uint64_t seed);
  // RETURNS: the sample index of the stream's next record, read and parsed as it entered the
  // buffer (its bytes: planned_bytes). Throws RunError naming the shard and byte offset of a
  // corrupt or cut record. REQUIRES: the stream holds another record.
  virtual std::size_t read_next();
  // Streaming sources: RETURNS: the bytes the reader has read from its shards so far, every
  // stream together. A stream reads ahead of the records it hands out (whole reads of
  // block_size, and a shuffle buffer's fill), so this runs ahead of their planned_bytes.
  virtual std::uint64_t stream_bytes_read() const;

  // With keep_data(true), each read keeps the sample's bytes for data() (a transform that
  // decodes needs them; otherwise reads go through the engine's buffer and are dropped).
  void keep_data(bool keep) { keep_ = keep; }
  // RETURNS: the bytes of the last sample read (empty unless keep_data(true)).
  std::span<const std::byte> data() const { return data_; }

 protected:
  bool keep_ = false;
  std::vector<std::byte> data_;
};

// Where samples come from. Shared by every worker; each worker reads through its own reader.
class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual std::size_t count() const = 0;
  // RETURNS: the bytes of all samples at the scan (0 when unknown).
  virtual std::uint64_t total_bytes() const { return 0; }
  // RETURNS: a reader for one worker thread (opens its engine). Throws RunError/InputError.
  virtual std::unique_ptr<SampleReader> make_reader() const = 0;
  // RETURNS: for a source read in streams, shard by shard (TFRecord), the records of each
  // shard, whose samples are numbered shard after shard; null for a source read by index.
  virtual const std::vector<std::uint64_t>* shard_records() const { return nullptr; }
  // RETURNS: false for a source that reads no file (calibration, tests): it opens none.
  virtual bool reads_files() const { return true; }
  // RETURNS: of the bytes its readers have read so far, those the page cache held just before
  // they were read (asked file by file before each sample's reads: what memory served, whatever
  // else reads the same device); nullopt where the source does not ask (all but a recorded
  // job's) or could not.
  virtual std::optional<std::uint64_t> resident_bytes_read() const { return std::nullopt; }
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
                                                 const std::string& engine, std::size_t block_size = 1 << 20,
                                                 std::shared_ptr<Throttle> throttle = nullptr);

// TFRecord shards (tfrecord.h), read in streams as TensorFlow's readers read them: every file of
// `files` is a shard, indexed at construction (each header read, each length CRC checked); a
// sample is one whole record, its framing included in its bytes. A worker reads its shards
// sequentially in chunks of `block_size` bytes and parses each record as it goes; with
// `verify_crc` it also checks each record's data CRC (as TensorFlow's reader does by default).
// Throws RunError naming the shard and the byte offset of a record that is corrupt, cut short
// or not TFRecord at all; InputError when the shards hold no record.
std::unique_ptr<SampleSource> make_tfrecord_source(const FileSet& files, const std::string& engine,
                                                   bool verify_crc = true, std::size_t block_size = 1 << 20,
                                                   std::shared_ptr<Throttle> throttle = nullptr);

// tf.data's shuffle(buffer_size): items enter in input order; each one out is drawn uniformly
// (seeded) from those buffered, so the output is a permutation of the input that moves an item
// at most about `capacity` places ahead of where it came in.
template <class T>
class ShuffleBuffer {
 public:
  explicit ShuffleBuffer(std::size_t capacity = 1, std::uint64_t seed = 0)
      : capacity_(capacity < 1 ? 1 : capacity), state_(seed) {}
  bool full() const { return items_.size() >= capacity_; }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  void push(T item) { items_.push_back(std::move(item)); }
  // RETURNS: an item drawn from the buffer, removed from it. REQUIRES: !empty().
  T pop() {
    const auto n = items_.size();
    const auto i = std::size_t((static_cast<unsigned __int128>(splitmix64(state_)) * n) >> 64);
    std::swap(items_[i], items_.back());
    T item = std::move(items_.back());
    items_.pop_back();
    return item;
  }

 private:
  std::size_t capacity_;
  std::uint64_t state_;
  std::vector<T> items_;
};

// Calibration: no I/O. Sample i copies file_size(i) bytes (of `files`, never read) out of a
// preloaded buffer, so batches are as large as the real ones.
std::unique_ptr<SampleSource> make_memory_source(const FileSet& files);

// Tests: `count` samples of `sample_bytes`, each taking `delay_ns` of sleep. Consecutive reads
// of one reader chain their deadlines, so sleep overshoot does not accumulate over a batch.
std::unique_ptr<SampleSource> make_delay_source(std::size_t count, std::uint64_t sample_bytes,
                                                std::int64_t delay_ns);

// A recorded job's reads, sample by sample (harness/replay builds them from a watched job's
// trace): a sample is reads [first, first + count) of the reads, each one read call of the job
// as it returned (a range of a file of the FileSet), in the job's order.
struct RecordedRead {
  std::uint64_t offset = 0;
  std::uint32_t bytes = 0;
  std::uint32_t file = 0;  // index in the FileSet
};
struct RecordedSample {
  std::uint64_t first = 0;  // its first read
  std::uint32_t count = 0;  // its reads
};

// Per epoch of a run: how many samples its batches read (warm-up included, every trainer of this
// node) and how many of those reads were of a sample read before in the run (earlier in the epoch,
// or in an earlier epoch): the reads the page cache can serve.
struct EpochRereads {
  std::uint64_t reads = 0, rereads = 0;
};

// A recorded job's loading, run again (harness/replay): in place of the shuffled order, the
// drawn step and the transform, each epoch's batches as the job's workers built them — which
// samples of a recorded source (make_recorded_source), which worker, the CPU time the worker
// spent on it, the trainer's step after it — with the epoch's workers, prefetch depth and the
// workers' start-up. Epochs go over the recorded passes again, in order, without copying them:
// what it holds does not grow with the epochs.
struct RecordedLoading {
  struct Batch {
    std::uint64_t first = 0;  // samples [first, first + count) of the source
    std::uint32_t count = 0;
    std::int32_t worker = -1;   // the worker that builds it (-1, or beyond the epoch's: round robin)
    std::int64_t cpu_ns = 0;    // the worker's CPU time on it, its reads included
    std::int64_t step_ns = -1;  // the trainer's step after it; < 0: none (a pass's last batch)
    // The worker's time on it neither reading, on the CPU nor waiting for a core (asleep, on a
    // lock, a remote call): waited out after its reads and CPU time.
    std::int64_t idle_ns = 0;
    std::uint32_t samples = 0;  // the job's samples in it (its batch size), for the figures; 0: count
    // The trainer's CPU time: taking it once ready (within the hand-over, next_cost_ns), and in
    // its step (within step_ns).
    std::int64_t take_cpu_ns = 0, step_cpu_ns = 0;
    // The worker's CPU time after handing it over, before its next (PyTorch's queue feeder
    // pickling it into shared memory while the worker goes on): within the hand-over's wall
    // already, so it delays the worker's next batch, not this one.
    std::int64_t after_cpu_ns = 0;
  };
  struct Epoch {
    std::vector<Batch> batches;
    int workers = 0;                  // 0: the trainer builds its batches itself
    int prefetch = 2;                 // batches in flight per worker
    std::int64_t start_ns = 0;        // from the epoch's first ask to its workers' first fetch
    std::int64_t startup_cpu_ns = 0;  // each worker's CPU time in that start-up
    EpochRereads rereads;             // its samples' files read before in the run, as the epoch of its index
  };
  // The passes replayed, each once (at most `epochs` of them): epoch e is passes[e % passes.size()].
  std::vector<Epoch> passes;
  int epochs = 0;

  // RETURNS: epoch e's pass. REQUIRES: passes not empty.
  const Epoch& epoch(std::size_t e) const { return passes[e % passes.size()]; }
  // RETURNS: epoch e's reads and re-reads: as its pass's on the first round over the passes;
  // after it every file of a pass was read before. REQUIRES: passes not empty.
  EpochRereads rereads(std::size_t e) const {
    const EpochRereads& r = epoch(e).rereads;
    return e < passes.size() ? r : EpochRereads{r.reads, r.reads};
  }
};

// The samples of a recorded job (RecordedLoading): sample i reads samples[i]'s reads of `files`,
// each range as recorded, opening its file for the sample and closing it after, through engine
// `engine`, paced by `throttle` when given. A range past a file's end reads what is there. Every
// open is beneath `files`' root, opened once here, through no symbolic link (a folder swapped
// for a link mid-replay fails the read, never leads outside). Throws RunError when the root
// cannot be opened.
// REQUIRES: `files`, `reads` and `samples` outlive the source; every read's file is in `files`.
std::unique_ptr<SampleSource> make_recorded_source(const FileSet& files, std::span<const RecordedRead> reads,
                                                   std::span<const RecordedSample> samples,
                                                   const std::string& engine,
                                                   std::shared_ptr<Throttle> throttle = nullptr);

struct LoaderOptions {
  int batch_size = 1;
  int workers = 1;          // 0: the trainer loads each batch itself (PyTorch's num_workers=0)
  int prefetch = 2;         // batches in flight per worker (prefetch_factor)
  Distribution step_time;   // simulated accelerator step
  TransformCost transform;  // CPU work per sample / per MiB
  int epochs = 1;
  // Steps per epoch per trainer; 0: the trainer's whole share of the epoch. More than the share
  // holds is refused (loader_schedule), never cut.
  std::int64_t steps = 0;
  // First steps of the run excluded from the metrics; the warm-up in effect is at least
  // prefetch × workers, and none for a streaming source with a shuffle buffer (loader_schedule).
  int warmup_steps = 1;
  int accelerators = 1;  // trainers, each with its own workers and share of every epoch
  // Across nodes (the ranks of a distributed run), as DLIO's loader: the source is the whole
  // data set on every node, each epoch's order is cut between all nodes × accelerators
  // trainers, and this process runs those of node `node`. As the order is drawn anew each epoch
  // (seed, epoch), a node reads another share each epoch. REQUIRES: 0 <= node < nodes.
  int node = 0;
  int nodes = 1;
  std::uint64_t seed = 42;
  // Streaming sources: each worker's shuffle buffer, in records (0 or 1: file order). Its fill
  // is measured: the run has no warm-up.
  std::size_t shuffle_buffer = 0;
  // Sampling: none, each epoch a seeded shuffle of every sample; a skew (skew.h), each epoch as
  // many draws with replacement, samples ranked by `ranking` (sample indices, hottest first;
  // empty: by index).
  Skew skew;
  std::vector<std::uint32_t> ranking;
  // Called before each epoch, untimed, when set. RETURNS: the fraction of the data set in the
  // page cache now (recorded per epoch: a later epoch may be served from memory).
  std::function<double()> residency;
  // Called before each epoch and after the last, untimed, when set. RETURNS: the bytes the data's
  // block devices have read so far (DeviceReads), nullopt when not known. Per epoch, what the
  // device read against what the workers read says how much the page cache served.
  std::function<std::optional<std::uint64_t>()> device_read_bytes;
  // Accelerator cuda: each trainer's step runs on a device (its batch copied over, then a kernel
  // of the drawn step time; DeviceStep says how overlap works), made once per trainer before its
  // first epoch; throws RunError when it cannot. Unset: the step is a wait on the CPU.
  std::function<std::unique_ptr<DeviceStep>(int trainer)> device_step;
  // How a worker's batch reaches its trainer (harness/loader/handover.h): process, as PyTorch's
  // worker processes hand it over (each tensor put in shared memory, its descriptor sent, mapped
  // by the trainer while it waits for the batch); thread, as it is (threads of one address
  // space). None with workers 0 (the trainer builds its batches itself). The plan's default is
  // PyTorch's (loader_apply_framework); a LoaderOptions as constructed is threads, no cost.
  enum class Handover { thread, process };
  Handover handover = Handover::thread;
  // What a batch hands over: stack, one tensor (default_collate stacks the samples); list, one
  // tensor per sample (a collate_fn returning the samples' list, as variable-size samples need).
  enum class Collate { stack, list };
  Collate collate = Collate::stack;
  // The training process's own cost to take a ready batch (a framework's next(): PyTorch's
  // unpickling, and per tensor the descriptor fetched from the worker and mapped):
  // next_cost_ns per batch, next_cost_per_tensor_ns per tensor it hands over (Collate) and
  // next_cost_per_mib_ns per MiB of its samples as read: waited out on the trainer's clock once
  // the batch is taken, before the step, so it counts as data wait. 0: none.
  std::int64_t next_cost_ns = 0;
  std::int64_t next_cost_per_tensor_ns = 0;
  std::int64_t next_cost_per_mib_ns = 0;
  // A framework worker's own CPU to build a batch beyond reading its samples (PyTorch's: the
  // worker loop's index fetch, a Dataset __getitem__ call per sample, collate and the batch's
  // pickling): worker_cost_ns per batch and worker_cost_per_sample_ns per sample, spent on the
  // worker's thread after its reads and transform, before the hand-over, counted as its transform
  // CPU. Not for a recorded job (its workers' CPU is recorded). 0: none.
  std::int64_t worker_cost_ns = 0;
  std::int64_t worker_cost_per_sample_ns = 0;
  // A recorded job's loading (set: a replay): its epochs, batches, workers, prefetch and steps
  // replace epochs, the shuffle, workers, prefetch, step_time and transform (epochs and workers
  // must be set to the recording's count and largest). A batch with no step after it (a pass's
  // last) is taken, its reads counted, but is no measured step: a watched job's AU leaves it out.
  // One accelerator, one node, no warm-up: the job's every step is measured, as watch measures it.
  std::shared_ptr<const RecordedLoading> recorded;
};

// RETURNS: the tensors a batch of `samples` hands over (LoaderOptions::Collate): 1 stacked, one
// per sample listed.
std::uint64_t loader_batch_tensors(const LoaderOptions& o, std::uint64_t samples);

// RETURNS: the trainer's cost to take a batch of `bytes` in `tensors` tensors
// (LoaderOptions::next_cost_ns, _per_tensor_ns, _per_mib_ns).
std::int64_t loader_next_cost_ns(const LoaderOptions& o, std::uint64_t bytes, std::uint64_t tensors = 1);

// PyTorch's DataLoader's own cost of next() on a ready batch handed over by a worker process,
// calibrated with tools/compare-pytorch (docs/method.md, "The loader against PyTorch's
// DataLoader"): per batch (unpickling, the next index sent), and per tensor handed over (its
// descriptor fetched from the worker's resource_sharer thread over a fresh authenticated
// connection, its storage mapped). The kernel's part of the hand-over the loader does itself
// (handover process); these are the rest. Per tensor: --calibrate's charge on the quiet host
// (PyTorch's wait per batch with 4 workers reading warm files, always ahead, less the loader's
// own in the same shape), 0.31 ms a tensor up to 8. Per batch: where the workers read from the
// device, as a job's do, PyTorch's trainer waits longer for a ready batch than with warm files
// (the matrix's fed rows, workers always ahead, quiet host: PyTorch's wait 1.3 to 1.4 ms a batch
// of one tensor more than the loader's own); --calibrate's warm files give 0 a batch.
inline constexpr std::int64_t kPytorchNextPerBatchNs = 1'000'000;
inline constexpr std::int64_t kPytorchNextPerTensorNs = 310'000;
// PyTorch's worker's own CPU per batch beyond reading its samples (LoaderOptions::worker_cost_ns),
// from --calibrate's worker cycle (one worker reading warm files with no step: PyTorch's time a
// batch less the loader's own, framework none, in the same shape), fitted over batches of 2 to
// 32 samples on the quiet host (`--calibrate --rounds 3`): 0.72 ms a batch + 0.023 ms a sample.
inline constexpr std::int64_t kPytorchWorkerPerBatchNs = 720'000;
inline constexpr std::int64_t kPytorchWorkerPerSampleNs = 23'000;

// The framework whose costs a loader pays (the plan's `framework`): none, a free hand-over;
// pytorch, PyTorch's DataLoader's.
enum class LoaderFramework { none, pytorch };

// Sets `o`'s hand-over, next() and worker costs to the framework's: pytorch with workers, handover
// process, next() costs kPytorchNextPerBatchNs and kPytorchNextPerTensorNs and the worker's
// kPytorchWorkerPerBatchNs and kPytorchWorkerPerSampleNs (PyTorch's
// num_workers=0 loads in the training process: nothing crosses, nothing is charged); none,
// threads and no cost. REQUIRES: o.workers set.
void loader_apply_framework(LoaderOptions& o, LoaderFramework f);

// Measured steps per trainer, per epoch, below which a run is not judged.
inline constexpr std::int64_t kMinMeasuredSteps = 10;

// The share of the measured steps' sample bytes that must have been read for those steps'
// batches (not ahead of them, in the warm-up) for a run to be judged: a read ahead of up to a
// tenth of what the steps took does not turn waiting into feeding.
inline constexpr double kMinMeasuredReadShare = 0.9;

// How a run's steps fall, known before it starts.
struct LoaderSchedule {
  std::size_t samples = 0;                // in the data set
  std::uint64_t dataset_bytes = 0;        // of the data set at the scan (0: unknown)
  std::size_t share = 0;                  // samples of one trainer's share of an epoch
  std::int64_t steps_per_epoch = 0;       // per trainer
  std::int64_t warmup_steps = 0;          // in effect, per trainer, at the start of the run
  bool fill_counted = false;              // a stream's shuffle buffer: no warm-up, its fill measured
  std::int64_t measured_first_epoch = 0;  // per trainer (later epochs measure every step)
  std::int64_t min_measured_steps = 0;    // per trainer, per epoch, for a verdict
  std::string refused;                    // why the run cannot take the configured steps ("" when it can)
  bool whole_epoch = false;               // steps 0: each trainer's whole share
  int prefetch = 0, workers = 0;          // as configured, for the reasons' texts
  std::int64_t batch_size = 0, accelerators = 0;
  bool recorded = false;  // a replay's: its steps are the recorded job's

  // RETURNS: whether the figures can carry a verdict (not refused, enough measured steps);
  // LoaderResult::judged adds what the measured steps read.
  bool judged() const { return refused.empty() && measured_first_epoch >= min_measured_steps; }
  // RETURNS: "not enough steps to judge: 6 measured per trainer in epoch 1 (10 steps − warm-up
  // 4), 16 needed: ...", or "" when judged.
  std::string not_judged_reason() const;
};

// How one trainer reads a streaming source in one epoch, as PyTorch's DataLoader reads an
// IterableDataset of shards: the epoch's seeded shuffle of the shards is dealt to the trainers
// (trainer k takes every K-th), each trainer's to its workers (every W-th); every worker reads
// its shards whole, in order, through its own shuffle buffer, and makes batches of batch_size
// records of its own (a last short batch is dropped: drop_last); the trainer takes batches from
// its workers in turn, skipping a worker that has no more.
struct StreamPlan {
  std::vector<std::vector<std::size_t>> shards;  // per worker (one when workers is 0)
  std::vector<std::uint64_t> records;            // per worker
  std::vector<std::size_t> batch_worker;         // per batch of the epoch: the worker that makes it
};

// RETURNS: the plan of this node's (options.node) trainer `trainer` in epoch `epoch` (0-based)
// over shards holding `shard_records` records each: every (accelerators × nodes)-th shard of the
// epoch's order, from node × accelerators + trainer.
StreamPlan loader_stream_plan(const LoaderOptions& options, const std::vector<std::uint64_t>& shard_records,
                              int epoch, int trainer);

// RETURNS: the schedule of `options` over a data set of `samples` samples holding
// `dataset_bytes` bytes; for a streaming source, `shard_records` (the records of each shard):
// each epoch then has as many steps as the trainer with the fewest batches in its plan has in
// the epoch where it has fewest (so every trainer takes the same steps), and the share is
// those steps' samples. Never throws; a refusal is in `refused`.
LoaderSchedule loader_schedule(const LoaderOptions& options, std::size_t samples,
                               std::uint64_t dataset_bytes = 0,
                               const std::vector<std::uint64_t>* shard_records = nullptr);

// What the loader counts of its steps: one trainer's in one epoch, an epoch's over its trainers,
// a run's over its epochs, a run's over ranks, all summed by operator+= alone.
struct LoaderCounters {
  std::uint64_t samples = 0;       // in measured steps
  std::uint64_t steps = 0;         // measured steps
  std::uint64_t warmup_steps = 0;  // excluded from the figures
  // Read while the batches of the measured steps (of the warm-up) were built: a stream's reads
  // ahead count where they were made, not where their records were taken.
  std::uint64_t read_bytes = 0, warmup_read_bytes = 0;
  // Over the measured steps: the trainer's waits for data, its steps' compute, and each step's
  // whole (wait + compute + the loop's own overhead).
  std::int64_t waited_ns = 0, computed_ns = 0, stepped_ns = 0;
  // Of waited_ns, the framework's charge for taking ready batches (loader_next_cost_ns).
  std::int64_t charged_ns = 0;

  LoaderCounters& operator+=(const LoaderCounters& other);
  // RETURNS: computed / stepped (AU as DLIO defines it), 0 without a step.
  double au_counted() const { return stepped_ns > 0 ? double(computed_ns) / double(stepped_ns) : 0; }
  // RETURNS: waited / stepped, 0 without a step.
  double stall_counted() const { return stepped_ns > 0 ? double(waited_ns) / double(stepped_ns) : 0; }
  // RETURNS: charged / waited, 0 without a wait.
  double charged_share() const { return waited_ns > 0 ? double(charged_ns) / double(waited_ns) : 0; }
  // RETURNS: the bytes the workers read, warm-up included.
  std::uint64_t all_read_bytes() const { return read_bytes + warmup_read_bytes; }
};

// One epoch's figures over every trainer (its counters: all trainers).
struct EpochFigures : LoaderCounters {
  int epoch = 0;  // 1-based
  std::uint64_t bytes = 0;
  double measured_s = 0;  // wall: the epoch's first measured step start to its last step end
  double wait_s = 0, compute_s = 0, step_s = 0;
  double au = 0, stall_fraction = 0;
  Histogram wait_ns;
  double samples_per_second = 0, bytes_per_second = 0;
  std::optional<double> residency_before;  // page-cache fraction as the epoch began
  // What the data's devices read during the epoch (warm-up included; nullopt: not known), and
  // the share of the usable cores busy with any process's work while it ran.
  std::optional<std::uint64_t> device_bytes;
  // Of the bytes the workers read in the epoch, those the page cache held as they were read
  // (SampleSource::resident_bytes_read; nullopt: the source does not ask).
  std::optional<std::uint64_t> resident_bytes;
  std::optional<double> host_cpu_busy;
  double cpu_util = 0;  // this process's CPU over the epoch / (wall × usable cores)
  double wall_s = 0;    // the epoch's wall, warm-up and every worker included: what the counts span
};

// A run's figures. Its read tally counts the bytes read for measured steps against what those
// samples held at the scan (more than read when files shrank or vanished during the run; then
// `incomplete` says so), and every open of the run, warm-up included.
// Its counters: all trainers, all epochs.
struct LoaderResult : ReadTally, LoaderCounters {
  double measured_s = 0;  // wall of the measured steps: the sum over epochs of EpochFigures
  double epoch_s = 0;     // mean wall of an epoch (warm-up included), over trainers and epochs
  Histogram wait_ns;      // data wait per measured step
  double wait_s = 0;      // totals over measured steps, all trainers
  double compute_s = 0;
  double step_s = 0;          // wait + compute + loop overhead
  double stall_fraction = 0;  // wait_s / step_s
  double au = 0;              // compute_s / step_s
  std::vector<double> au_per_trainer;
  double min_au = 0;
  double read_s = 0;                    // worker time spent reading samples (all batches)
  double transform_s = 0;               // worker time spent in the transform
  std::uint64_t transform_bytes = 0;    // bytes the transform worked on (all batches)
  std::uint64_t transform_samples = 0;  // samples it worked on (all batches)
  double transform_cpu_s = 0;           // the workers' CPU time in the transform (transform_s: wall)
  double transform_idle_s = 0;          // of transform_s, a recorded job's own waits (RecordedLoading)
  std::uint64_t decoded_pixels = 0;     // pixels a decode transform produced (all batches)
  double cpu_util = 0;                  // process CPU over the run / (wall × cores)
  unsigned cores = 1;                   // usable_cores() as the run began
  // Every process's use of the usable cores over the run (nullopt: /proc/stat not readable),
  // and what the data's devices read in it (nullopt: not known), summed over epochs.
  std::optional<double> host_cpu_busy;
  std::optional<std::uint64_t> device_bytes;
  std::optional<std::uint64_t> resident_bytes;  // EpochFigures::resident_bytes, summed over epochs
  double samples_per_second = 0;
  double bytes_per_second = 0;
  std::vector<EpochFigures> epochs;
  LoaderSchedule schedule;
  // With a device step: every step's batch copy (warm-up included), all trainers, and the
  // device time its kernels ran.
  std::optional<SinkStats> device_copy;
  double device_busy_s = 0;

  // RETURNS: whether the figures carry a verdict: the schedule judges them (enough measured
  // steps), and in every epoch the measured steps read at least kMinMeasuredReadShare of the
  // bytes their samples hold.
  bool judged() const;
  // RETURNS: why the figures carry no verdict ("" when judged): the schedule's reason, or "not
  // judged: the measured steps read 0 B, 0.0% of the 224 KiB their samples hold ...".
  std::string not_judged_reason() const;
};

// RETURNS: the order of epoch `epoch` (0-based) over `count` samples, before it is split between
// trainers: a seeded shuffle, or skewed draws when options.skew is set.
std::vector<std::size_t> loader_epoch_order(const LoaderOptions& options, std::size_t count, int epoch);

// RETURNS: this node's trainer `trainer`'s share of an epoch's order `all` (DistributedSampler's
// split across options.nodes nodes of options.accelerators trainers each: every
// (accelerators × nodes)-th sample from node × accelerators + trainer, at most schedule.share).
std::vector<std::size_t> loader_trainer_share(const std::vector<std::size_t>& all, int trainer,
                                              const LoaderOptions& options, const LoaderSchedule& schedule);

// RETURNS: how often each of `count` samples is read by this node (options.node) over a run of
// `options` (every epoch, every trainer of the node, warm-up included): what the trainers' batches take from
// their shares. REQUIRES: schedule is loader_schedule(options, count, ...) and not refused.
std::vector<std::uint64_t> loader_sample_reads(const LoaderOptions& options, const LoaderSchedule& schedule,
                                               std::size_t count);

// RETURNS: the re-reads of each epoch of `options` over `count` samples; for a streaming source
// (shard_records set) none in the first epoch, every read after it. REQUIRES: as loader_sample_reads.
std::vector<EpochRereads> loader_epoch_rereads(const LoaderOptions& options, const LoaderSchedule& schedule,
                                               std::size_t count,
                                               const std::vector<std::uint64_t>* shard_records);

class LoaderSim {
 public:
  // REQUIRES: batch_size >= 1, workers >= 0, prefetch >= 1, epochs >= 1, accelerators >= 1.
  // Throws InputError otherwise.
  LoaderSim(const LoaderOptions& options, const SampleSource& source);

  // RETURNS: loader_schedule of the options over the source.
  LoaderSchedule schedule() const;

  // Runs every trainer through each epoch (all trainers finish an epoch before the next starts)
  // and joins every thread. RETURNS: the measurements; their judged() says whether they carry
  // a verdict. Throws RunError with schedule().refused before starting anything when the
  // data set cannot hold the configured steps, and RunError (first failure of any worker) after a
  // clean stop.
  LoaderResult run();

 private:
  LoaderOptions options_;
  const SampleSource& source_;
};

}  // namespace feedbench
