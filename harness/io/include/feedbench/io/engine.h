// One small interface for every I/O engine (fio's ioengines.h in spirit): open a file,
// submit reads into the engine's own buffer slots, reap completions. A synchronous engine is
// the degenerate case: submit does the read, reap hands back its completion. psync, libaio and
// io_uring also write, from the caller's memory (submit_writes: a checkpoint's blocks).
// Options that belong to one engine stay inside that engine's file in harness/io/engines/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/base/aligned_buffer.h"

namespace feedbench {

using FileHandle = std::int32_t;

struct ReadOp {
  FileHandle file = -1;
  std::uint32_t slot = 0;    // buffer slot, 0 <= slot < queue_depth; unique among reads in flight
  std::uint32_t length = 0;  // bytes; with O_DIRECT a multiple of the alignment
  std::uint64_t offset = 0;  // with O_DIRECT aligned
};

// A write of `length` bytes from the caller's memory at `data` (a checkpoint's block): the engine
// keeps no copy, so the bytes stay as they are until the write's completion.
struct WriteOp {
  int fd = -1;                      // the caller's descriptor, open for writing (O_DIRECT or not)
  std::uint32_t slot = 0;           // handed back in its Completion; unique among requests in flight
  std::uint32_t length = 0;         // bytes; with O_DIRECT a multiple of the alignment
  std::uint64_t offset = 0;         // with O_DIRECT aligned
  const std::byte* data = nullptr;  // with O_DIRECT aligned
};

// The step of a whole-file read (Engine::submit_whole_files) that kept it from being whole.
enum class ChainStep : std::uint8_t { none, open, read, close };

struct Completion {
  std::uint32_t slot = 0;
  // bytes read (short at end of file) or written (short: the device is full), or -errno
  std::int64_t result = 0;
  // Whole-file reads only: none when the file was opened, read for exactly `expect` bytes and
  // closed. open: result is the open's -errno (ENOENT: the file is gone). read: result is the
  // read's -errno, or the bytes it returned when they were not `expect` (the file shrank,
  // grew, or is not a regular file). close: result is the close's -errno.
  ChainStep failed_step = ChainStep::none;
};

// A file read whole by one chained request (open, read, close): see submit_whole_files.
struct WholeFileRead {
  std::string_view path;     // absolute, or relative to dir_fd
  std::uint32_t slot = 0;    // buffer slot, as ReadOp's
  std::uint32_t expect = 0;  // bytes a whole read returns (the size at the scan), <= block_size
  // An open directory the path is relative to (AT_FDCWD: the working directory); open until
  // the completion. A data set's root opened once spares the kernel the walk of its path.
  int dir_fd = -100;  // AT_FDCWD
};

class Throttle;

struct EngineOptions {
  bool direct = false;            // O_DIRECT
  unsigned queue_depth = 1;       // slots; synchronous engines accept only 1
  std::size_t block_size = 4096;  // bytes per slot buffer
  // false: no slot buffers at all, for an engine that only writes from the caller's memory
  // (submit_writes); queue_depth x block_size would be memory no write touches.
  bool slot_buffers = true;
  // Shared by every engine of a round: reap() waits for it before handing completions back
  // (see throttle.h). Null: reads go at the storage's own pace.
  std::shared_ptr<Throttle> throttle;
  // io_uring: a file no larger than a block may be read whole as one linked open -> read ->
  // close chain (reads_whole_files()). FEEDBENCH_IO_URING_CHAIN=0 in the environment turns it
  // off, for A/B measurement against open-then-read.
  bool whole_file_chain = true;
  // A folder open(path) opens beneath (>= 0): `path` relative to it, every component reached
  // through no symbolic link and never above it, on every open (open_beneath.h), so a folder
  // swapped for a link while a round reads cannot lead it out. Not owned; -1: paths as given.
  // Whole-file reads (submit_whole_files) ignore it: a caller that sets it does not use them.
  int beneath_fd = -1;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual std::string_view name() const = 0;
  unsigned queue_depth() const { return options_.queue_depth; }
  const EngineOptions& options() const { return options_; }

  // REQUIRES: path is a regular file. RETURNS: a handle. Throws RunError (with errno text).
  virtual FileHandle open(const std::string& path) = 0;
  // REQUIRES: no read of this file is in flight.
  virtual void close(FileHandle file) = 0;
  // RETURNS: the file descriptor an open handle reads through (to ask the page cache about the
  // file, page_cache.h), or -1 where the engine keeps none (mmap keeps only the mapping).
  virtual int descriptor(FileHandle) const { return -1; }

  // Starts the reads. REQUIRES: each op's slot is free; ops.size() <= free slots.
  // NOTE: io_uring hands them to the kernel at the next reap(), in the system call that waits;
  // synchronous engines (psync, mmap) perform them here.
  virtual void submit(std::span<const ReadOp> ops) = 0;
  // Starts the writes; their completions come back through reap() as the reads' do.
  // REQUIRES: each op's slot free (slots are shared with reads); ops.size() <= free slots.
  // NOTE: psync writes here (one pwrite each: the caller writes the rest of a short one),
  // libaio hands them to the kernel here, io_uring at the next reap(). mmap throws
  // std::logic_error: it has no write.
  virtual void submit_writes(std::span<const WriteOp> ops);
  // Waits until at least `min_complete` requests (reads or writes) have completed (0: only what
  // is ready). RETURNS: completions written to `out` (at most out.size()).
  // With a throttle (options().throttle), returns once the bytes the completions moved fit its
  // rate: charged by what was read or written, not asked for (a read past a file's end is short).
  std::size_t reap(std::span<Completion> out, std::size_t min_complete);

  // RETURNS: true when submit_whole_files works here (io_uring with direct descriptors and
  // linked fixed-file lookup, IORING_FEAT_LINKED_FILE: kernel 5.18 or later; and
  // options().whole_file_chain unless FEEDBENCH_IO_URING_CHAIN=0). It turns false for the
  // rest of the engine's life once a chain's read comes back EAGAIN (a file system that cannot
  // read without blocking), so callers ask before each file.
  virtual bool reads_whole_files() const { return false; }
  // RETURNS: true when a file of `size` bytes (as scanned) goes to submit_whole_files():
  // reads_whole_files() and 0 < size <= block_size. An empty file stays with open(): a FIFO in
  // its place would read 0 bytes too.
  bool reads_whole(std::uint64_t size) const {
    return size > 0 && size <= options().block_size && reads_whole_files();
  }
  // Starts one whole-file read per entry: open (read-only, non-blocking so a FIFO cannot hold
  // it, O_DIRECT with options().direct), one read of block_size bytes at offset 0 into the
  // slot's buffer, close; no file handle is left behind, whatever fails. Each hands back ONE
  // Completion (its slot) through reap(), with failed_step saying what kept it from being whole.
  // The caller falls back to open() + submit() for a file whose read was not whole.
  // LIMIT: the chain cannot fstat what it opened, so a device in the file's place that reads
  // exactly `expect` bytes passes as whole (a directory or any other size does not; nor does a
  // FIFO, unless a writer sends exactly `expect` bytes within the chain's 2 s read timeout).
  // NOTE: a whole-file read's latency is its open, read and close together; open-then-read
  // records the read alone, so latency figures differ with FEEDBENCH_IO_URING_CHAIN=0.
  // REQUIRES: reads_whole_files(); each slot free, as for submit(); path shorter than PATH_MAX
  // (a longer one fails at the open step). Throws std::logic_error where unsupported.
  virtual void submit_whole_files(std::span<const WholeFileRead> files);

  // The buffer of a slot: block_size bytes, 4096-aligned, owned by the engine.
  // REQUIRES: options().slot_buffers.
  std::byte* buffer(std::uint32_t slot) { return buffers_.get() + std::size_t(slot) * stride_; }

  // Opens so far with O_NOATIME (the file's access time left as it was) and without it (the
  // kernel allows O_NOATIME only to the file's owner or with CAP_FOWNER).
  struct OpenCounts {
    std::uint64_t noatime = 0;
    std::uint64_t plain = 0;
  };
  const OpenCounts& open_counts() const { return open_counts_; }

 protected:
  explicit Engine(const EngineOptions& options);

  // What reap() does before the throttle: each engine's own way of collecting completions.
  virtual std::size_t collect(std::span<Completion> out, std::size_t min_complete) = 0;

  // Opens `path` read-only (O_DIRECT when `direct`), with O_NOATIME until the kernel refuses
  // it once (EPERM: the files are someone else's; a data set's files share an owner, so the
  // engine stops asking rather than pay a second open per file). RETURNS: the fd. Throws
  // RunError naming the path; O_DIRECT refused (EINVAL) reads "O_DIRECT not supported by
  // <fs> at <path>".
  int open_for_read(const std::string& path, bool direct);
  // For engines that open files themselves (whole-file reads): whether to ask for O_NOATIME,
  // and the count of an open made so, as open_for_read counts its own. A refusal (EPERM) is
  // handled by the caller's fallback to open(), which stops asking.
  bool try_noatime() const { return try_noatime_; }
  void count_open(bool noatime) { ++(noatime ? open_counts_.noatime : open_counts_.plain); }

  EngineOptions options_;

 private:
  AlignedBuffer buffers_;
  std::size_t stride_ = 0;
  OpenCounts open_counts_;
  bool try_noatime_ = true;
};

// The engines this build has: psync, mmap, libaio, io_uring.
std::vector<std::string> engine_names();

// RETURNS: a ready engine. Throws InputError for an unknown name or options the engine cannot
// take (e.g. queue_depth > 1 for psync), RunError when the system refuses it (io_uring
// disabled by a sandbox, O_DIRECT unsupported), with the reason.
std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options);

}  // namespace feedbench
