// The loader's sample sources: how a sample is read (a whole file, a fixed-size record of a
// shard, a TFRecord record out of a streamed shard), and the calibration and test sources that
// read none.
#include "feedbench/loader/loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/tfrecord.h"
#include "feedbench/io/engine.h"
#include "feedbench/io/page_cache.h"

namespace feedbench {
namespace {

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

// A recorded job's samples: each opens its file, reads its recorded ranges in order (one engine
// request each: the engine's block holds the largest), and closes it, as the job did. Before the
// first read each sample asks the page cache what of its ranges it holds (one cachestat(2) per
// run of adjacent ranges, about a microsecond): so the bytes a replay read from memory are
// counted file by file, whatever else reads the same device meanwhile.

// What a recorded source's readers found in the page cache before reading, every reader together.
struct ResidentCount {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<bool> unmeasured{false};  // a reader could not ask (an engine without a descriptor)
};

// RETURNS: what read `r` can return of its file as `files` scanned it: its bytes, cut at the
// file's end (a copy of the data whose files changed size, replayed as it is).
std::uint64_t recorded_read_bytes(const FileSet& files, const RecordedRead& r) {
  const std::uint64_t size = files.file_size(r.file);
  return r.offset >= size ? 0 : std::min<std::uint64_t>(r.bytes, size - r.offset);
}

class RecordedReader : public SampleReader {
 public:
  RecordedReader(const FileSet& files, std::span<const RecordedRead> reads,
                 std::span<const RecordedSample> samples, const std::string& engine,
                 const EngineOptions& options, ResidentCount& resident)
      : files_(files), reads_(reads), samples_(samples), engine_(make_engine(engine, options)),
        resident_(resident) {}
  std::uint64_t read(std::size_t i) override {
    data_.clear();
    const RecordedSample& s = samples_[i];
    if (s.count == 0) return 0;
    // Beneath the root by its path there (the engine's beneath_fd), through no link, on every
    // open: a folder swapped for a link mid-replay leads nowhere outside it.
    const std::uint32_t file = reads_[s.first].file;
    const std::string path = files_.absolute_path(file);
    FileHandle fh;
    try {
      fh = engine_->open(std::string(files_.relative_path(file)));
    } catch (const RunError& e) {
      if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return 0;  // vanished
      throw RunError(std::string(e.what()) + " (under " + files_.root() +
                     ", where a replay opens every file beneath, through no symbolic link)");
    }
    std::uint64_t n = 0;
    try {
      count_resident(fh, s);
      for (std::uint64_t k = s.first; k < s.first + s.count; ++k)
        n += read_range(*engine_, fh, reads_[k].offset, bytes_of(reads_[k]), path, keep_ ? &data_ : nullptr);
    } catch (...) {
      engine_->close(fh);
      throw;
    }
    engine_->close(fh);
    return n;
  }
  std::uint64_t planned_bytes(std::size_t i) const override {
    std::uint64_t n = 0;
    for (std::uint64_t k = samples_[i].first; k < samples_[i].first + samples_[i].count; ++k)
      n += bytes_of(reads_[k]);
    return n;
  }
  std::uint64_t bytes_of(const RecordedRead& r) const { return recorded_read_bytes(files_, r); }
  Engine::OpenCounts open_counts() const override { return engine_->open_counts(); }
  std::string sample_name(std::size_t i) const override {
    return samples_[i].count ? files_.absolute_path(reads_[samples_[i].first].file) : unread_name(i);
  }

 private:
  static std::string unread_name(std::size_t i) { return "sample " + std::to_string(i) + " (no read)"; }
  // Adds to resident_ what the page cache holds of sample `s`'s ranges of open file `fh`, each
  // run of adjacent ranges asked once, before any of them is read (a read's read-ahead would
  // otherwise count the next range as memory's).
  void count_resident(FileHandle fh, const RecordedSample& s) {
    const int fd = engine_->descriptor(fh);
    if (fd < 0) {
      resident_.unmeasured.store(true, std::memory_order_relaxed);
      return;
    }
    std::uint64_t found = 0;
    try {
      for (std::uint64_t k = s.first; k < s.first + s.count;) {
        const std::uint64_t begin = reads_[k].offset;
        std::uint64_t end = begin + bytes_of(reads_[k]);
        for (++k; k < s.first + s.count && reads_[k].offset == end; ++k) end += bytes_of(reads_[k]);
        found += resident_bytes_in(fd, begin, end - begin);
      }
    } catch (const RunError&) {  // no way to ask: the replay goes on, its memory share unknown
      resident_.unmeasured.store(true, std::memory_order_relaxed);
      return;
    }
    resident_.bytes.fetch_add(found, std::memory_order_relaxed);
  }
  const FileSet& files_;
  std::span<const RecordedRead> reads_;
  std::span<const RecordedSample> samples_;
  std::unique_ptr<Engine> engine_;
  ResidentCount& resident_;
};

class RecordedSource : public SampleSource {
 public:
  RecordedSource(const FileSet& files, std::span<const RecordedRead> reads,
                 std::span<const RecordedSample> samples, std::string engine, EngineOptions options)
      : files_(files), reads_(reads), samples_(samples), engine_(std::move(engine)),
        options_(std::move(options)), root_(files.open_root()) {
    if (!root_)
      throw RunError(errno_message("cannot open the replayed files' folder " + files.root(), errno));
    options_.beneath_fd = root_.get();
    for (const RecordedRead& r : reads) total_ += recorded_read_bytes(files, r);
  }
  std::size_t count() const override { return samples_.size(); }
  std::uint64_t total_bytes() const override { return total_; }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<RecordedReader>(files_, reads_, samples_, engine_, options_, *resident_);
  }
  std::optional<std::uint64_t> resident_bytes_read() const override {
    if (resident_->unmeasured.load()) return std::nullopt;
    return resident_->bytes.load();
  }

 private:
  const FileSet& files_;
  std::span<const RecordedRead> reads_;
  std::span<const RecordedSample> samples_;
  std::string engine_;
  EngineOptions options_;
  UniqueFd root_;  // the files' folder, opened once: every read opens beneath it
  std::uint64_t total_ = 0;
  std::unique_ptr<ResidentCount> resident_ = std::make_unique<ResidentCount>();  // its readers'
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

  std::uint64_t stream_bytes_read() const override { return bytes_read_; }

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
        bytes_read_ += std::uint64_t(c.result);
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
  std::uint64_t bytes_read_ = 0;   // every stream's chunks
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
  // REQUIRES: data.size() >= every read's chunk (min(largest sample, kMemoryChunk)).
  MemoryReader(const FileSet& files, const std::vector<std::byte>& data)
      : files_(files), data_(data), out_(data.size()) {}
  std::uint64_t read(std::size_t i) override {
    std::uint64_t size = files_.file_size(i);
    for (std::uint64_t done = 0; done < size;) {
      std::size_t n = std::size_t(std::min<std::uint64_t>(out_.size(), size - done));
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
  // Each sample is copied in chunks of its size up to kMemoryChunk: every reader's buffer (one a
  // worker: 512 of them on a node of 256 trainers) is no larger than the largest sample.
  explicit MemorySource(const FileSet& files) : files_(files), data_(chunk_for(files)) {
    for (std::size_t i = 0; i < data_.size(); ++i) data_[i] = std::byte(i * 131 + 7);
  }
  std::size_t count() const override { return files_.size(); }
  std::uint64_t total_bytes() const override { return files_.total_bytes(); }
  std::unique_ptr<SampleReader> make_reader() const override {
    return std::make_unique<MemoryReader>(files_, data_);
  }
  bool reads_files() const override { return false; }

 private:
  static std::size_t chunk_for(const FileSet& files) {
    std::uint64_t largest = 1;
    for (std::size_t i = 0; i < files.size(); ++i) largest = std::max(largest, files.file_size(i));
    return std::size_t(std::min<std::uint64_t>(largest, kMemoryChunk));
  }

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
  bool reads_files() const override { return false; }

 private:
  std::size_t count_;
  std::uint64_t bytes_;
  std::int64_t delay_ns_;
};

}  // namespace

std::unique_ptr<SampleSource> make_file_source(const FileSet& files, const std::string& engine,
                                               std::size_t block_size, std::shared_ptr<Throttle> throttle) {
  return std::make_unique<FileSource>(files, engine, reader_options(block_size, std::move(throttle)));
}

std::unique_ptr<SampleSource> make_recorded_source(const FileSet& files, std::span<const RecordedRead> reads,
                                                   std::span<const RecordedSample> samples,
                                                   const std::string& engine,
                                                   std::shared_ptr<Throttle> throttle) {
  // One request per recorded read: the block holds the largest (at least 64 KiB, at most 64 MiB).
  std::size_t block = 64 << 10;
  for (const RecordedRead& r : reads) block = std::max<std::size_t>(block, r.bytes);
  block = std::min<std::size_t>(block, std::size_t{64} << 20);
  return std::make_unique<RecordedSource>(files, reads, samples, engine,
                                          reader_options(block, std::move(throttle)));
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

std::uint64_t SampleReader::stream_bytes_read() const {
  check_failed("a streaming source", __FILE__, __LINE__, "stream_bytes_read on a reader by index");
}

std::unique_ptr<SampleSource> make_memory_source(const FileSet& files) {
  return std::make_unique<MemorySource>(files);
}

std::unique_ptr<SampleSource> make_delay_source(std::size_t count, std::uint64_t sample_bytes,
                                                std::int64_t delay_ns) {
  return std::make_unique<DelaySource>(count, sample_bytes, delay_ns);
}

}  // namespace feedbench
