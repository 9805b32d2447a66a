#include "feedbench/loader/loader.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/jpeg.h"
#include "feedbench/dataset/tfrecord.h"
#include "feedbench/io/engine.h"

namespace feedbench {
namespace {

using Clock = std::chrono::steady_clock;

// Sleeps most of the way, then spins the last ~100 µs: a simulated step is accurate to a few
// microseconds instead of the scheduler's sleep overshoot.
void wait_until_ns(std::int64_t deadline) {
  constexpr std::int64_t kSpin = 100'000;
  std::int64_t now = now_ns();
  if (deadline - now > kSpin) std::this_thread::sleep_for(std::chrono::nanoseconds(deadline - now - kSpin));
  while (now_ns() < deadline) {
  }
}

// CPU work of `ns` of this thread's CPU time: on a saturated CPU it takes longer in wall time,
// as a real decode would.
void burn_cpu_ns(std::int64_t ns) {
  if (ns <= 0) return;
  const std::int64_t end = thread_cpu_ns() + ns;
  volatile std::uint64_t sink = 0;
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  do {
    for (int i = 0; i < 256; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = sink + x;
  } while (thread_cpu_ns() < end);
}

std::int64_t transform_ns(const TransformCost& t, std::uint64_t bytes) {
  switch (t.per) {
    case TransformCost::Per::none: return 0;
    case TransformCost::Per::sample: return t.ns;
    case TransformCost::Per::mib: return std::int64_t(double(t.ns) * double(bytes) / (1 << 20));
    case TransformCost::Per::decode: return 0;  // real work, done apart
  }
  return 0;
}

// Fisher-Yates with our own index draw: the same order on every standard library.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, int epoch) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + std::uint64_t(epoch) * 0xD1B54A32D192ED03ull + 1);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
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

// ---- sources -------------------------------------------------------------------------------

// Reads [offset, offset+length) of an open file through the engine, one slot, chunk by chunk.
// With `keep`, the bytes read are appended to it.
std::uint64_t read_range(Engine& engine, FileHandle fh, std::uint64_t offset, std::uint64_t length,
                         const std::string& path, std::vector<std::byte>* keep = nullptr) {
  const std::uint64_t chunk = engine.options().block_size;
  std::uint64_t done = 0;
  Completion c;
  while (done < length) {
    ReadOp op;
    op.file = fh;
    op.slot = 0;
    op.offset = offset + done;
    op.length = std::uint32_t(std::min<std::uint64_t>(chunk, length - done));
    engine.submit(std::span<const ReadOp>(&op, 1));
    if (engine.reap(std::span<Completion>(&c, 1), 1) != 1)
      throw RunError("read of " + path + ": the engine returned no completion");
    if (c.result < 0) throw RunError(errno_message("read of " + path, int(-c.result)));
    if (c.result == 0) break;  // file shrank since the scan: read what is there
    if (keep) keep->insert(keep->end(), engine.buffer(0), engine.buffer(0) + c.result);
    done += std::uint64_t(c.result);
  }
  return done;
}

// Opens `path` into *fh. RETURNS: false when the file was removed since the scan (the sample
// then reads 0 bytes of what was planned); throws the engine's RunError for anything else.
bool open_unless_vanished(Engine& engine, const std::string& path, FileHandle* fh) {
  try {
    *fh = engine.open(path);
    return true;
  } catch (const RunError&) {
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return false;
    throw;
  }
}

// One engine per reader, reading one chunk at a time; a throttle in `options` is shared.
EngineOptions reader_options(std::size_t block_size, std::shared_ptr<Throttle> throttle) {
  EngineOptions eo;
  eo.queue_depth = 1;
  eo.block_size = block_size;
  eo.throttle = std::move(throttle);
  return eo;
}

class FileReader : public SampleReader {
 public:
  FileReader(const FileSet& files, const std::string& engine, const EngineOptions& options)
      : files_(files), engine_(make_engine(engine, options)) {
    // Chains open files relative to the data set's root, as the runner's do: the kernel walks
    // one path component per file, not the whole absolute path. Absolute paths where the root
    // cannot be opened.
    if (engine_->reads_whole_files()) root_ = files.open_root();
  }
  std::uint64_t read(std::size_t i) override {
    data_.clear();
    // A file no larger than a block, read whole in one request where the engine can; anything
    // short of that (gone, changed, not a regular file) is read again below and reported so.
    const std::uint64_t size = files_.file_size(i);
    if (engine_->reads_whole(size)) {
      // Relative to the root: no absolute path is built for a file the chain reads.
      const bool relative = root_.get() >= 0;
      const std::string absolute = relative ? std::string() : files_.absolute_path(i);
      const WholeFileRead r{relative ? files_.relative_path(i) : std::string_view(absolute), 0,
                            std::uint32_t(size), relative ? root_.get() : AT_FDCWD};
      engine_->submit_whole_files(std::span<const WholeFileRead>(&r, 1));
      Completion c;
      if (engine_->reap(std::span<Completion>(&c, 1), 1) != 1)
        throw RunError("read of " + files_.absolute_path(i) + ": the engine returned no completion");
      if (c.failed_step == ChainStep::none) {
        if (keep_) data_.assign(engine_->buffer(0), engine_->buffer(0) + c.result);
        return std::uint64_t(c.result);
      }
    }
    const std::string path = files_.absolute_path(i);
    FileHandle fh;
    if (!open_unless_vanished(*engine_, path, &fh)) return 0;
    std::uint64_t n = 0;
    try {
      n = read_range(*engine_, fh, 0, files_.file_size(i), path, keep_ ? &data_ : nullptr);
    } catch (...) {
      engine_->close(fh);
      throw;
    }
    engine_->close(fh);
    return n;
  }
  std::uint64_t planned_bytes(std::size_t i) const override { return files_.file_size(i); }
  Engine::OpenCounts open_counts() const override { return engine_->open_counts(); }
  std::string sample_name(std::size_t i) const override { return files_.absolute_path(i); }

 private:
  const FileSet& files_;
  // Before the engine, so destroyed after it: a chain still in flight (a reap that threw)
  // opens relative to it.
  UniqueFd root_;  // the data set's root, for chains; -1 without
  std::unique_ptr<Engine> engine_;
};

class FileSource : public SampleSource {
 public:
  FileSource(const FileSet& files, std::string engine, EngineOptions options)
      : files_(files), engine_(std::move(engine)), options_(std::move(options)) {}
  std::size_t count() const override { return files_.size(); }
  std::uint64_t total_bytes() const override { return files_.total_bytes(); }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<FileReader>(files_, engine_, options_);
  }

 private:
  const FileSet& files_;
  std::string engine_;
  EngineOptions options_;
};

class RecordSource;

class RecordReader : public SampleReader {
 public:
  RecordReader(const FileSet& files, const std::vector<std::uint64_t>& first, std::uint64_t record_size,
               const std::string& engine, const EngineOptions& options)
      : files_(files), first_(first), record_size_(record_size), engine_(make_engine(engine, options)),
        handles_(files.size(), -1) {}
  ~RecordReader() override {
    for (FileHandle h : handles_)
      if (h >= 0) engine_->close(h);
  }
  std::uint64_t read(std::size_t i) override {
    const auto [shard, r] = locate(i);
    std::string path = files_.absolute_path(shard);
    data_.clear();
    // Kept open: shards are few.
    if (handles_[shard] < 0 && !open_unless_vanished(*engine_, path, &handles_[shard])) return 0;
    return read_range(*engine_, handles_[shard], r * record_size_, record_size_, path,
                      keep_ ? &data_ : nullptr);
  }
  std::string sample_name(std::size_t i) const override {
    const auto [shard, r] = locate(i);
    return files_.absolute_path(shard) + " record " + std::to_string(r);
  }
  std::uint64_t planned_bytes(std::size_t) const override { return record_size_; }
  Engine::OpenCounts open_counts() const override { return engine_->open_counts(); }

 private:
  // RETURNS: the shard of sample i and its record in that shard.
  std::pair<std::size_t, std::uint64_t> locate(std::size_t i) const {
    // first_[j] is the index of shard j's first record; first_.back() the total.
    auto it = std::upper_bound(first_.begin(), first_.end(), std::uint64_t(i));
    const std::size_t shard = std::size_t(it - first_.begin()) - 1;
    return {shard, std::uint64_t(i) - first_[shard]};
  }

  const FileSet& files_;
  const std::vector<std::uint64_t>& first_;
  std::uint64_t record_size_;
  std::unique_ptr<Engine> engine_;
  std::vector<FileHandle> handles_;
};

class RecordSource : public SampleSource {
 public:
  RecordSource(const FileSet& files, std::uint64_t record_size, std::string engine, EngineOptions options)
      : files_(files), record_size_(record_size), engine_(std::move(engine)), options_(std::move(options)) {
    if (record_size == 0) throw InputError("samples: records need a size above 0");
    std::uint64_t total = 0;
    for (std::size_t j = 0; j < files.size(); ++j) {
      first_.push_back(total);
      total += files.file_size(j) / record_size;
    }
    first_.push_back(total);
    if (total == 0)
      throw InputError("samples: no file of " + files.root() + " holds a whole record of " +
                       std::to_string(record_size) + " bytes");
  }
  std::size_t count() const override { return std::size_t(first_.back()); }
  std::uint64_t total_bytes() const override { return first_.back() * record_size_; }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<RecordReader>(files_, first_, record_size_, engine_, options_);
  }

 private:
  const FileSet& files_;
  std::uint64_t record_size_;
  std::string engine_;
  EngineOptions options_;
  std::vector<std::uint64_t> first_;
};

// One worker's stream over TFRecord shards: chunks of block_size read in file order through the
// engine (one slot, one read in flight), records parsed out of them as they pass.
class TfRecordReader : public SampleReader {
 public:
  TfRecordReader(const FileSet& files, const std::vector<std::uint64_t>& first,
                 const std::vector<std::uint64_t>& framed, bool verify_crc, const std::string& engine,
                 const EngineOptions& options)
      : files_(files), first_(first), framed_(framed), verify_(verify_crc),
        engine_(make_engine(engine, options)) {}
  ~TfRecordReader() override { close_shard(); }

  std::uint64_t read(std::size_t) override {
    check_failed("a streaming source", __FILE__, __LINE__, "TFRecord samples are read with read_next");
  }
  std::uint64_t planned_bytes(std::size_t i) const override { return framed_[i]; }
  Engine::OpenCounts open_counts() const override { return engine_->open_counts(); }
  std::string sample_name(std::size_t i) const override {
    const auto it = std::upper_bound(first_.begin(), first_.end(), std::uint64_t(i));
    const std::size_t shard = std::size_t(it - first_.begin()) - 1;
    return files_.absolute_path(shard) + " record " + std::to_string(std::uint64_t(i) - first_[shard]);
  }

  void start_stream(const std::vector<std::size_t>& shards, std::size_t buffer, std::uint64_t seed) override {
    close_shard();
    queue_ = shards;
    next_ = 0;
    buffer_ = ShuffleBuffer<Entry>(buffer, seed);
  }

  std::size_t read_next() override {
    while (!buffer_.full() && fill_one()) {
    }
    FB_CHECK(!buffer_.empty(), "the stream plan asks for more records than the worker's shards hold");
    Entry e = buffer_.pop();
    data_ = std::move(e.data);
    return e.index;
  }

 private:
  struct Entry {
    std::size_t index = 0;
    std::vector<std::byte> data;  // kept only with keep_data(true)
  };

  void close_shard() {
    if (fh_ >= 0) engine_->close(fh_);
    fh_ = -1;
  }

  // Hands the next `n` bytes of the open shard to `sink` piece by piece, reading chunks as
  // needed. RETURNS: the bytes handed (fewer than n at the end of the file).
  template <class Sink>
  std::uint64_t take(std::uint64_t n, Sink&& sink) {
    std::uint64_t got = 0;
    while (got < n) {
      if (pos_ == end_) {
        ReadOp op;
        op.file = fh_;
        op.slot = 0;
        op.offset = file_offset_;
        op.length = std::uint32_t(engine_->options().block_size);
        engine_->submit(std::span<const ReadOp>(&op, 1));
        Completion c;
        if (engine_->reap(std::span<Completion>(&c, 1), 1) != 1)
          throw RunError("read of " + path_ + ": the engine returned no completion");
        if (c.result < 0) throw RunError(errno_message("read of " + path_, int(-c.result)));
        if (c.result == 0) return got;
        pos_ = 0;
        end_ = std::size_t(c.result);
        file_offset_ += std::uint64_t(c.result);
      }
      const std::size_t piece = std::size_t(std::min<std::uint64_t>(n - got, end_ - pos_));
      sink(engine_->buffer(0) + pos_, piece);
      pos_ += piece;
      got += piece;
    }
    return got;
  }

  // Reads the stream's next record into the shuffle buffer. RETURNS: false at the end of the
  // last shard.
  bool fill_one() {
    while (fh_ < 0 || record_ == first_[shard_ + 1]) {
      close_shard();
      if (next_ == queue_.size()) return false;
      shard_ = queue_[next_++];
      path_ = files_.absolute_path(shard_);
      fh_ = engine_->open(path_);
      file_offset_ = 0;
      offset_ = 0;
      pos_ = end_ = 0;
      record_ = first_[shard_];
    }
    // Only the records the index found are read: bytes appended since are not part of the set.
    auto cut = [&](const char* part) {
      return RunError(path_ + ": truncated TFRecord shard: the record at byte offset " +
                      std::to_string(offset_) + " ends inside its " + part);
    };
    unsigned char header[kTfRecordHeaderBytes];
    std::size_t at = 0;
    auto copy_to = [&](unsigned char* out) {
      return [out, &at](const std::byte* p, std::size_t n) {
        std::memcpy(out + at, p, n);
        at += n;
      };
    };
    if (take(sizeof header, copy_to(header)) < sizeof header) throw cut("header");
    const std::uint64_t length = tfrecord_parse_header(header, path_, offset_);
    Entry e;
    e.index = std::size_t(record_);
    std::uint32_t crc = 0;
    if (take(length, [&](const std::byte* p, std::size_t n) {
          if (verify_) crc = crc32c_extend(crc, p, n);
          if (keep_) e.data.insert(e.data.end(), p, p + n);
        }) < length)
      throw cut("data");
    unsigned char footer[4];
    at = 0;
    if (take(sizeof footer, copy_to(footer)) < sizeof footer) throw cut("data CRC");
    if (verify_) {
      std::uint32_t stored = 0;
      for (int i = 3; i >= 0; --i) stored = (stored << 8) | footer[i];
      if (stored != mask_crc(crc))
        throw RunError(path_ + ": corrupt TFRecord shard: the data CRC of the record at byte offset " +
                       std::to_string(offset_) + " does not match");
    }
    offset_ += length + kTfRecordFramingBytes;
    ++record_;
    buffer_.push(std::move(e));
    return true;
  }

  const FileSet& files_;
  const std::vector<std::uint64_t>& first_;   // first sample of each shard; back(): the total
  const std::vector<std::uint64_t>& framed_;  // bytes of each sample, framing included
  bool verify_;
  std::unique_ptr<Engine> engine_;
  std::vector<std::size_t> queue_;  // the stream's shards
  std::size_t next_ = 0;            // of queue_
  ShuffleBuffer<Entry> buffer_;
  FileHandle fh_ = -1;
  std::size_t shard_ = 0;
  std::string path_;
  std::uint64_t record_ = 0;       // sample index of the next record of the shard
  std::uint64_t offset_ = 0;       // of the next record in the shard
  std::uint64_t file_offset_ = 0;  // of the next chunk
  std::size_t pos_ = 0, end_ = 0;  // unread bytes of the chunk in the engine's buffer
};

class TfRecordSource : public SampleSource {
 public:
  TfRecordSource(const FileSet& files, bool verify_crc, std::string engine, EngineOptions options)
      : files_(files), verify_(verify_crc), engine_(std::move(engine)), options_(std::move(options)) {
    for (std::size_t j = 0; j < files.size(); ++j) {
      first_.push_back(framed_.size());
      const std::vector<TfRecordRef> refs = index_tfrecord_shard(files.absolute_path(j));
      for (const TfRecordRef& r : refs) framed_.push_back(r.length + kTfRecordFramingBytes);
      records_.push_back(refs.size());
      total_ += files.file_size(j);
    }
    first_.push_back(framed_.size());
    if (framed_.empty())
      throw InputError("samples: tfrecord: the shards of " + files.root() + " hold no record");
  }
  std::size_t count() const override { return framed_.size(); }
  std::uint64_t total_bytes() const override { return total_; }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<TfRecordReader>(files_, first_, framed_, verify_, engine_, options_);
  }
  const std::vector<std::uint64_t>* shard_records() const override { return &records_; }

 private:
  const FileSet& files_;
  bool verify_;
  std::string engine_;
  EngineOptions options_;
  std::vector<std::uint64_t> first_, framed_, records_;
  std::uint64_t total_ = 0;
};

constexpr std::size_t kMemoryChunk = 4 << 20;

class MemoryReader : public SampleReader {
 public:
  MemoryReader(const FileSet& files, const std::vector<std::byte>& data)
      : files_(files), data_(data), out_(kMemoryChunk) {}
  std::uint64_t read(std::size_t i) override {
    std::uint64_t size = files_.file_size(i);
    for (std::uint64_t done = 0; done < size;) {
      std::size_t n = std::size_t(std::min<std::uint64_t>(kMemoryChunk, size - done));
      std::memcpy(out_.data(), data_.data(), n);
      done += n;
    }
    return size;
  }
  std::uint64_t planned_bytes(std::size_t i) const override { return files_.file_size(i); }

 private:
  const FileSet& files_;
  const std::vector<std::byte>& data_;
  std::vector<std::byte> out_;
};

class MemorySource : public SampleSource {
 public:
  explicit MemorySource(const FileSet& files) : files_(files), data_(kMemoryChunk) {
    for (std::size_t i = 0; i < data_.size(); ++i) data_[i] = std::byte(i * 131 + 7);
  }
  std::size_t count() const override { return files_.size(); }
  std::uint64_t total_bytes() const override { return files_.total_bytes(); }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<MemoryReader>(files_, data_);
  }

 private:
  const FileSet& files_;
  std::vector<std::byte> data_;
};

class DelayReader : public SampleReader {
 public:
  DelayReader(std::uint64_t bytes, std::int64_t delay_ns) : bytes_(bytes), delay_ns_(delay_ns) {}
  std::uint64_t read(std::size_t) override {
    std::int64_t now = now_ns();
    // A device model: reads that follow each other chain onto the last deadline, so a late
    // wake-up (scheduling on a loaded machine) is made up by the next reads and a busy reader
    // gets exactly one sample per d. After a pause of over 4 samples it starts afresh.
    std::int64_t start = (now - deadline_ < 4 * delay_ns_) ? deadline_ : now;
    deadline_ = start + delay_ns_;
    if (deadline_ > now) std::this_thread::sleep_for(std::chrono::nanoseconds(deadline_ - now));
    return bytes_;
  }
  std::uint64_t planned_bytes(std::size_t) const override { return bytes_; }

 private:
  std::uint64_t bytes_;
  std::int64_t delay_ns_;
  std::int64_t deadline_ = INT64_MIN / 2;
};

class DelaySource : public SampleSource {
 public:
  DelaySource(std::size_t count, std::uint64_t bytes, std::int64_t delay_ns)
      : count_(count), bytes_(bytes), delay_ns_(delay_ns) {}
  std::size_t count() const override { return count_; }
  std::uint64_t total_bytes() const override { return std::uint64_t(count_) * bytes_; }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<DelayReader>(bytes_, delay_ns_);
  }

 private:
  std::size_t count_;
  std::uint64_t bytes_;
  std::int64_t delay_ns_;
};

// ---- the simulation ------------------------------------------------------------------------

struct Batch {
  bool ready = false;
  std::uint64_t samples = 0;
  std::uint64_t bytes = 0;
  std::uint64_t planned = 0;
};

struct WorkerTotals {
  std::int64_t read_ns = 0;
  std::int64_t transform_ns = 0;
  std::uint64_t pixels = 0;  // decoded (decode transform)
  std::uint64_t bytes = 0;   // read, warm-up included: what the transform had to work on
};

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
struct EpochOutcome {
  std::uint64_t samples = 0, bytes = 0, planned = 0, steps = 0, warmup = 0;
  std::int64_t wait_ns = 0, compute_ns = 0, step_ns = 0;
  std::int64_t first_t0 = 0, last_t2 = 0;
  bool measured = false;
  std::int64_t epoch_ns = 0;
  Histogram wait;
};

struct TrainerOutcome {
  std::optional<SinkStats> device_copy;
  std::int64_t device_busy_ns = 0;
  std::vector<EpochOutcome> epochs;
  Engine::OpenCounts opens;
  WorkerTotals work;
};

// Builds one batch: reads its samples and applies the transform, timing each part. `decoder`:
// the worker's own, for a decode transform.
// `indices` null: a batch of to − from samples from the reader's stream.
Batch build_batch(SampleReader& reader, const std::vector<std::size_t>* indices, std::size_t from,
                  std::size_t to, const TransformCost& transform, WorkerTotals& totals,
                  JpegDecoder* decoder) {
  Batch b;
  for (std::size_t k = from; k < to; ++k) {
    std::int64_t t0 = now_ns();
    std::size_t index = 0;
    std::uint64_t n = 0;
    if (indices) {
      index = (*indices)[k];
      n = reader.read(index);
    } else {
      index = reader.read_next();
      n = reader.planned_bytes(index);
    }
    std::int64_t t1 = now_ns();
    if (transform.per == TransformCost::Per::decode) {
      FB_CHECK(decoder != nullptr, "a decode transform without a decoder");
      const DecodedImage img = decoder->decode(reader.data(), transform.size, reader.sample_name(index));
      totals.pixels += img.pixels();
    } else {
      burn_cpu_ns(transform_ns(transform, n));
    }
    std::int64_t t2 = now_ns();
    totals.read_ns += t1 - t0;
    totals.transform_ns += t2 - t1;
    totals.bytes += n;
    b.bytes += n;
    b.planned += reader.planned_bytes(index);
    ++b.samples;
  }
  b.ready = true;
  return b;
}

// One simulated accelerator: its readers and step-time stream live across epochs; each epoch
// runs on a thread of its own with fresh workers (PyTorch without persistent_workers).
class Trainer {
 public:
  Trainer(const LoaderOptions& o, const LoaderSchedule& schedule, const SampleSource& source, int index,
          RunState& run)
      : o_(o), schedule_(schedule), source_(source), index_(index), run_(run),
        rng_(o.seed * 0xBF58476D1CE4E5B9ull + std::uint64_t(index) * 1000003 + 17) {}

  // The body of the epoch's trainer thread: failures go to the run state.
  void run_epoch(int epoch) {
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

  // After the last epoch: counts the readers' opens and closes them.
  void finish() {
    for (const auto& r : readers_) {
      outcome.opens.noatime += r->open_counts().noatime;
      outcome.opens.plain += r->open_counts().plain;
    }
    readers_.clear();
    decoders_.clear();
    if (device_) {
      outcome.device_copy = device_->copy_stats();
      outcome.device_busy_ns = device_->device_busy_ns();
      device_.reset();
    }
  }

  TrainerOutcome outcome;

 private:
  void run_epoch(int epoch, EpochOutcome& out) {
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

  static void record_step(EpochOutcome& out, std::int64_t t0, std::int64_t t1, std::int64_t t2,
                          const Batch& b) {
    if (!out.measured) {
      out.measured = true;
      out.first_t0 = t0;
    }
    out.last_t2 = t2;
    ++out.steps;
    out.samples += b.samples;
    out.bytes += b.bytes;
    out.planned += b.planned;
    out.wait_ns += t1 - t0;
    out.compute_ns += t2 - t1;
    out.step_ns += t2 - t0;
    out.wait.record(std::uint64_t(t1 - t0));
  }

  const LoaderOptions& o_;
  const LoaderSchedule& schedule_;
  const SampleSource& source_;
  int index_;
  RunState& run_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<SampleReader>> readers_;
  std::vector<std::unique_ptr<JpegDecoder>> decoders_;  // per reader, for a decode transform
  std::unique_ptr<DeviceStep> device_;                  // accelerator cuda (or a stand-in): the step's device
};

}  // namespace

std::unique_ptr<SampleSource> make_file_source(const FileSet& files, const std::string& engine,
                                               std::size_t block_size, std::shared_ptr<Throttle> throttle) {
  return std::make_unique<FileSource>(files, engine, reader_options(block_size, std::move(throttle)));
}

std::unique_ptr<SampleSource> make_record_source(const FileSet& files, std::uint64_t record_size,
                                                 const std::string& engine, std::size_t block_size,
                                                 std::shared_ptr<Throttle> throttle) {
  return std::make_unique<RecordSource>(files, record_size, engine,
                                        reader_options(block_size, std::move(throttle)));
}

std::unique_ptr<SampleSource> make_tfrecord_source(const FileSet& files, const std::string& engine,
                                                   bool verify_crc, std::size_t block_size,
                                                   std::shared_ptr<Throttle> throttle) {
  return std::make_unique<TfRecordSource>(files, verify_crc, engine,
                                          reader_options(block_size, std::move(throttle)));
}

void SampleReader::start_stream(const std::vector<std::size_t>&, std::size_t, std::uint64_t) {
  check_failed("a streaming source", __FILE__, __LINE__, "start_stream on a reader by index");
}

std::size_t SampleReader::read_next() {
  check_failed("a streaming source", __FILE__, __LINE__, "read_next on a reader by index");
}

std::unique_ptr<SampleSource> make_memory_source(const FileSet& files) {
  return std::make_unique<MemorySource>(files);
}

std::unique_ptr<SampleSource> make_delay_source(std::size_t count, std::uint64_t sample_bytes,
                                                std::int64_t delay_ns) {
  return std::make_unique<DelaySource>(count, sample_bytes, delay_ns);
}

namespace {

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

LoaderSchedule loader_schedule(const LoaderOptions& o, std::size_t samples, std::uint64_t dataset_bytes,
                               const std::vector<std::uint64_t>* shard_records) {
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
  std::string why = "not enough steps to judge: " + std::to_string(measured_first_epoch) + " measured, " +
                    std::to_string(min_measured_steps) + " needed per trainer (" +
                    std::to_string(steps_per_epoch) + " steps in epoch 1 − a warm-up of " +
                    std::to_string(warmup_steps);
  if (warmup_steps == std::int64_t(prefetch) * workers && workers > 0)
    why += " = prefetch " + std::to_string(prefetch) + " × workers " + std::to_string(workers);
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
}

LoaderSchedule LoaderSim::schedule() const {
  return loader_schedule(options_, source_.count(), source_.total_bytes(), source_.shard_records());
}

LoaderResult LoaderSim::run() {
  if (source_.count() == 0) throw RunError("loader: the data set has no samples");
  const LoaderSchedule sched = schedule();
  if (!sched.refused.empty()) throw RunError(sched.refused);
  RunState state;
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (int k = 0; k < options_.accelerators; ++k)
    trainers.push_back(std::make_unique<Trainer>(options_, sched, source_, k, state));

  // Every trainer finishes an epoch before the next starts (training synchronises its
  // accelerators), so the page cache can be measured between epochs; that pause is neither
  // wall nor CPU of the run.
  std::vector<std::optional<double>> residency;
  double paused_cpu = 0;
  std::int64_t paused_ns = 0;
  const double cpu0 = process_cpu_seconds();
  const std::int64_t start = now_ns();
  for (int e = 0; e < options_.epochs && !state.failed; ++e) {
    if (options_.residency) {
      const double c0 = process_cpu_seconds();
      const std::int64_t t0 = now_ns();
      residency.push_back(options_.residency());
      paused_ns += now_ns() - t0;
      paused_cpu += process_cpu_seconds() - c0;
    } else {
      residency.push_back(std::nullopt);
    }
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < trainers.size(); ++k) {
      Trainer* t = trainers[k].get();
      const std::string refused = start_thread(
          threads, [t, e] { t->run_epoch(e); }, "trainer", k, trainers.size());
      if (!refused.empty()) {  // those started see `failed` and stop
        state.fail(refused);
        break;
      }
    }
    for (std::thread& t : threads) t.join();
  }
  for (auto& t : trainers) t->finish();
  const std::int64_t wall = now_ns() - start - paused_ns;
  const double cpu = process_cpu_seconds() - cpu0 - paused_cpu;
  if (state.failed) throw RunError(state.error);

  LoaderResult r;
  r.schedule = sched;
  std::int64_t wait = 0, compute = 0, step = 0, epoch_total = 0, epoch_count = 0;
  for (int e = 0; e < options_.epochs; ++e) {
    EpochFigures f;
    f.epoch = e + 1;
    f.residency_before = residency[std::size_t(e)];
    std::int64_t first = INT64_MAX, last = INT64_MIN, ew = 0, ec = 0, es = 0;
    for (auto& t : trainers) {
      const EpochOutcome& o = t->outcome.epochs[std::size_t(e)];
      f.steps += o.steps;
      f.warmup_steps += o.warmup;
      f.samples += o.samples;
      f.bytes += o.bytes;
      ew += o.wait_ns;
      ec += o.compute_ns;
      es += o.step_ns;
      f.wait_ns.merge(o.wait);
      r.bytes_planned += o.planned;
      epoch_total += o.epoch_ns;
      ++epoch_count;
      if (o.measured) {
        first = std::min(first, o.first_t0);
        last = std::max(last, o.last_t2);
      }
    }
    f.measured_s = last > first ? double(last - first) * 1e-9 : 0;
    f.wait_s = double(ew) * 1e-9;
    f.compute_s = double(ec) * 1e-9;
    f.step_s = double(es) * 1e-9;
    f.au = es > 0 ? double(ec) / double(es) : 0;
    f.stall_fraction = es > 0 ? double(ew) / double(es) : 0;
    if (f.measured_s > 0) {
      f.samples_per_second = double(f.samples) / f.measured_s;
      f.bytes_per_second = double(f.bytes) / f.measured_s;
    }
    r.samples += f.samples;
    r.bytes += f.bytes;
    r.steps += f.steps;
    r.warmup_steps += f.warmup_steps;
    r.measured_s += f.measured_s;
    r.wait_ns.merge(f.wait_ns);
    wait += ew;
    compute += ec;
    step += es;
    r.epochs.push_back(std::move(f));
  }
  r.min_au = 1;
  for (auto& t : trainers) {
    const TrainerOutcome& o = t->outcome;
    r.opens.noatime += o.opens.noatime;
    r.opens.plain += o.opens.plain;
    if (o.device_copy) {
      if (!r.device_copy) r.device_copy.emplace();
      r.device_copy->merge(*o.device_copy);
      r.device_busy_s += double(o.device_busy_ns) * 1e-9;
    }
    r.read_s += double(o.work.read_ns) * 1e-9;
    r.transform_s += double(o.work.transform_ns) * 1e-9;
    r.transform_bytes += o.work.bytes;
    r.decoded_pixels += o.work.pixels;
    std::int64_t c = 0, s = 0;
    for (const EpochOutcome& eo : o.epochs) c += eo.compute_ns, s += eo.step_ns;
    const double au = s > 0 ? double(c) / double(s) : 0;
    r.au_per_trainer.push_back(au);
    r.min_au = std::min(r.min_au, au);
  }
  r.epoch_s = epoch_count ? double(epoch_total) * 1e-9 / double(epoch_count) : 0;
  r.wait_s = double(wait) * 1e-9;
  r.compute_s = double(compute) * 1e-9;
  r.step_s = double(step) * 1e-9;
  r.stall_fraction = step > 0 ? double(wait) / double(step) : 0;
  r.au = step > 0 ? double(compute) / double(step) : 0;
  r.cpu_util = wall > 0 ? cpu / (double(wall) * 1e-9 * usable_cores()) : 0;
  if (r.measured_s > 0) {
    r.samples_per_second = double(r.samples) / r.measured_s;
    r.bytes_per_second = double(r.bytes) / r.measured_s;
  }
  return r;
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

bool loader_cpu_bound(double au, double target_au, double cpu_util, double read_s, double transform_s) {
  return au < target_au && cpu_util >= 0.85 && transform_s > read_s;
}

std::string loader_verdict(double au, double stall_fraction, double target_au, bool cpu_bound, double read_s,
                           double transform_s) {
  char buf[256];
  if (au >= target_au) {
    std::snprintf(buf, sizeof buf, "AU %.1f%% — storage keeps up", au * 100);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "AU %.1f%% — training waits for data %.1f%% of the time", au * 100,
                stall_fraction * 100);
  std::string text = buf;
  if (cpu_bound) {
    text += " — the loader is CPU-bound, not storage-bound: more workers will not help on this CPU";
  } else if (transform_s > read_s && transform_s > 0) {
    std::snprintf(buf, sizeof buf,
                  " — workers spend %.0f%% of their time in the transform, not reading: more "
                  "workers may help while the CPU has room",
                  100 * transform_s / (transform_s + read_s));
    text += buf;
  }
  return text;
}

}  // namespace feedbench
