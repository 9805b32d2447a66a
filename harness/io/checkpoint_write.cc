#include "feedbench/io/checkpoint_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/io/engine.h"

namespace feedbench {
namespace {

constexpr std::uint64_t kPage = 4096;

// A rank's buffer: its shard, at most kCheckpointBufferBytes, and all ranks' together at most
// kCheckpointBuffersTotal or a quarter of the memory available (1024 ranks of a model preset
// must not take the page cache the restore is measured against); at least one block.
}  // namespace

std::uint64_t checkpoint_buffer_bytes(const CheckpointWriteSpec& spec) {
  const std::uint64_t shard = spec.file_bytes * std::uint64_t(spec.files_per_rank);
  const std::uint64_t available = available_memory_bytes();
  const std::uint64_t total =
      available > 0 ? std::min(kCheckpointBuffersTotal, available / 4) : kCheckpointBuffersTotal;
  const std::uint64_t cap =
      std::min({shard, kCheckpointBufferBytes, total / std::uint64_t(std::max(1, spec.own_ranks()))});
  // A write in flight owns its block until it completes: the ring holds as many blocks as can be
  // in flight at once (a file's writes all complete before its fsync), whatever the caps say.
  const std::uint64_t file_blocks = (spec.file_bytes + spec.block_size - 1) / spec.block_size;
  const std::uint64_t in_flight =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(spec.queue_depth, file_blocks));
  return std::max(in_flight * spec.block_size, cap / spec.block_size * spec.block_size);
}

namespace {

// Fills `buffer` with splitmix64 of the rank's seed: bytes no compressor shrinks.
void fill(AlignedBuffer& buffer, std::uint64_t seed) {
  std::uint64_t state = seed;
  const std::size_t words = buffer.size() / sizeof(std::uint64_t);
  auto* out = reinterpret_cast<std::uint64_t*>(buffer.get());
  for (std::size_t i = 0; i < words; ++i) out[i] = splitmix64(state);
}

// Sleeps `ms`, or less once `stop` is set.
void pause_for_test(int ms, const std::atomic<int>* stop) {
  const std::int64_t until = now_ns() + std::int64_t(ms) * 1'000'000;
  while (now_ns() < until && !(stop && stop->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// What every rank shares while the checkpoint is written.
struct Shared {
  const CheckpointWriteSpec& spec;
  ScratchFolder& folder;
  // NOTE: test hook: FEEDBENCH_CHECKPOINT_TEST_DELAY_MS, a pause after each write (not timed
  // as the write's), so that tests fill the disk or interrupt the run half way.
  int delay_ms = 0;
  std::atomic<int> ready{0};  // ranks with their engine made (or refused)
  std::atomic<bool> go{false};
  std::atomic<bool> failed{false};
  std::int64_t start_ns = 0;
};

// RETURNS: the options of a rank's engine: writes only, from the rank's buffer.
EngineOptions writer_options(const CheckpointWriteSpec& spec) {
  EngineOptions o;
  o.direct = spec.direct;
  o.queue_depth = spec.queue_depth;
  o.block_size = spec.block_size;
  o.slot_buffers = false;
  o.whole_file_chain = false;
  return o;
}

// A write in flight: its block, and how much of it the engine has written so far.
struct Pending {
  const std::byte* data = nullptr;
  std::uint64_t offset = 0;
  std::uint32_t length = 0, done = 0;
  std::int64_t t0 = 0;  // its first submission
};

// One rank while it writes: its engine, its ring of blocks, its writes in flight.
struct RankWriter {
  RankWriter(Shared& s, Engine& e, const AlignedBuffer& buffer, RankWrite& o, Histogram& l)
      : shared(s), spec(s.spec), engine(e), base(buffer.get()), ring(buffer.size()), out(o), latency(l),
        // Never more in flight than the ring has blocks (checkpoint_buffer_bytes makes it enough).
        depth(unsigned(std::min<std::uint64_t>(spec.queue_depth, ring / spec.block_size))), slots(depth),
        done(depth) {
    for (unsigned i = depth; i-- > 0;) free.push_back(i);
    ops.reserve(depth);
  }
  Shared& shared;
  const CheckpointWriteSpec& spec;
  Engine& engine;
  std::byte* const base;
  const std::uint64_t ring;
  RankWrite& out;
  Histogram& latency;
  const unsigned depth;
  std::uint64_t at = 0;  // where the next block is taken from the ring
  std::vector<Pending> slots;
  std::vector<std::uint32_t> free;  // slots with no write in flight
  std::vector<WriteOp> ops;         // to submit
  std::vector<Completion> done;     // reaped
};

// Takes the next block of the ring for the file's bytes at `offset`, stamps each of its 4 KiB
// pages with its own mix of (checkpoint, file, page), and queues its write. RETURNS: its length.
std::uint64_t queue_block(RankWriter& w, int fd, std::uint64_t file_key, std::uint64_t offset) {
  const auto length = std::uint32_t(std::min(w.spec.block_size, w.spec.file_bytes - offset));
  std::byte* block = w.base + w.at;
  for (std::uint64_t page = 0; page < length; page += kPage) {
    const std::uint64_t stamp = mix64(w.spec.seed ^ (file_key + (offset + page) / kPage));
    std::memcpy(block + page, &stamp, sizeof stamp);
  }
  const std::uint32_t slot = w.free.back();
  w.free.pop_back();
  w.slots[slot] = Pending{block, offset, length, 0, now_ns()};
  w.ops.push_back(WriteOp{fd, slot, length, offset, block});
  w.at = (w.at + w.spec.block_size) % w.ring;
  return length;
}

// Writes one file through the rank's engine, up to `depth` writes in flight; a short write goes
// on from where it stopped, as pwrite's caller would. RETURNS: "" (written, or another rank failed:
// shared.failed), "stopped", or why a write failed (`path` named); the writes in flight complete
// before it returns. Throws RunError when the engine fails.
std::string write_file(RankWriter& w, int fd, const std::string& path, std::uint64_t file_key) {
  const CheckpointWriteSpec& spec = w.spec;
  std::string why;
  bool halted = false;  // no more blocks: stopped, or a write of this rank or another failed
  unsigned in_flight = 0;
  for (std::uint64_t offset = 0;;) {
    while (!halted && in_flight < w.depth && offset < spec.file_bytes) {
      const bool stopped = spec.stop && spec.stop->load(std::memory_order_relaxed);
      if (stopped) why = "stopped";
      halted = stopped || w.shared.failed.load(std::memory_order_relaxed);
      if (halted) break;
      offset += queue_block(w, fd, file_key, offset);
      ++in_flight;
    }
    if (!w.ops.empty()) w.engine.submit_writes(w.ops);
    w.ops.clear();
    if (in_flight == 0) return why;
    const std::size_t n = w.engine.reap(w.done, 1);
    for (std::size_t i = 0; i < n; ++i) {
      const Completion& c = w.done[i];
      Pending& p = w.slots[c.slot];
      if (c.result > 0 && p.done + std::uint64_t(c.result) < p.length && why.empty()) {
        p.done += std::uint32_t(c.result);  // short: the rest, from where it stopped
        w.ops.push_back(WriteOp{fd, c.slot, p.length - p.done, p.offset + p.done, p.data + p.done});
        continue;
      }
      w.free.push_back(c.slot);
      --in_flight;
      if (c.result <= 0) {  // 0: nothing written, the device is full
        if (why.empty() || why == "stopped")
          why = errno_message("writing " + path, c.result < 0 ? int(-c.result) : ENOSPC);
        halted = true;
        continue;
      }
      if (!why.empty()) continue;  // a write after the failure: not a figure of the checkpoint
      w.latency.record(std::uint64_t(now_ns() - p.t0));
      w.out.bytes += p.length;
      if (w.shared.delay_ms > 0) pause_for_test(w.shared.delay_ms, spec.stop);
    }
  }
}

// One rank's write of its files through its engine. RETURNS: "" or why it stopped.
std::string write_rank(Shared& shared, int rank, const AlignedBuffer& buffer, Engine& engine, RankWrite& out,
                       Histogram& latency) {
  const CheckpointWriteSpec& spec = shared.spec;
  RankWriter w(shared, engine, buffer, out, latency);
  for (int f = 0; f < spec.files_per_rank; ++f) {
    const std::string name = checkpoint_file_name(spec.checkpoint, rank, f);
    const std::string path = shared.folder.path() + "/" + name;
    UniqueFd fd(shared.folder.create(name, spec.direct ? O_DIRECT : 0));
    if (!fd) return errno_message("creating " + path, errno);
    out.files.push_back(name);
    // Every 4 KiB page of the checkpoint gets a stamp of its own: (checkpoint, file, page), mixed.
    const std::uint64_t file_key =
        (std::uint64_t(spec.checkpoint) * std::uint64_t(spec.ranks * spec.files_per_rank) +
         std::uint64_t(rank * spec.files_per_rank + f))
        << 36;
    std::string why;
    try {
      why = write_file(w, fd.get(), path, file_key);
    } catch (const RunError& e) {
      why = "writing " + path + ": " + e.what();
    }
    if (!why.empty() || shared.failed.load(std::memory_order_relaxed)) return why;
    if (spec.fsync) {
      const std::int64_t t0 = now_ns();
      if (::fsync(fd.get()) != 0) return errno_message("fsync of " + path, errno);
      out.fsync_ns += now_ns() - t0;
    }
    if (::close(fd.release()) != 0) return errno_message("closing " + path, errno);
  }
  return "";
}

}  // namespace

std::string checkpoint_file_name(int checkpoint, int rank, int file) {
  char name[64];
  std::snprintf(name, sizeof name, "ckpt-%04d-rank-%05d-file-%04d.bin", checkpoint, rank, file);
  return name;
}

CheckpointBuffers make_checkpoint_buffers(const CheckpointWriteSpec& spec) {
  CheckpointBuffers out;
  const std::uint64_t each = checkpoint_buffer_bytes(spec);
  try {
    for (int r = 0; r < spec.own_ranks(); ++r) out.ranks.emplace_back(each);
  } catch (const std::bad_alloc&) {
    out.error = "cannot allocate " + std::to_string(spec.own_ranks()) + " buffers of " +
                std::to_string(each) + " bytes";
    return out;
  }
  std::vector<std::thread> threads;
  const std::int64_t start = now_ns();
  const int own = spec.own_ranks();
  for (int r = 0; r < own && out.error.empty(); ++r)
    out.error = start_thread(
        threads,
        [&out, &spec, r] {
          fill(out.ranks[std::size_t(r)], mix64(spec.seed + std::uint64_t(spec.first_rank + r)));
        },
        "buffer filler", std::size_t(r), std::size_t(own));
  for (std::thread& t : threads) t.join();
  out.seconds = double(now_ns() - start) * 1e-9;
  out.bytes = each * std::uint64_t(own);
  return out;
}

double CheckpointWrite::slowest_rank_seconds() const {
  double slowest = 0;
  for (const RankWrite& r : ranks) slowest = std::max(slowest, r.seconds());
  return slowest;
}

double CheckpointWrite::fsync_share() const {
  double busy = 0, in_fsync = 0;
  for (const RankWrite& r : ranks) {
    busy += double(r.end_ns - r.start_ns);
    in_fsync += double(r.fsync_ns);
  }
  return busy > 0 ? in_fsync / busy : 0;
}

CheckpointWrite write_checkpoint(ScratchFolder& folder, const CheckpointWriteSpec& spec,
                                 const CheckpointBuffers& buffers) {
  const std::size_t own = std::size_t(spec.own_ranks());
  FB_CHECK(buffers.ranks.size() == own, "one buffer per rank");
  CheckpointWrite out;
  out.ranks.resize(own);
  std::vector<Histogram> latency(own);
  std::vector<std::string> errors(own);
  Shared shared{spec, folder};
  if (const char* ms = std::getenv("FEEDBENCH_CHECKPOINT_TEST_DELAY_MS")) shared.delay_ms = std::atoi(ms);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < own && out.error.empty(); ++i) {
    const int r = spec.first_rank + int(i);  // the rank's number in the whole checkpoint
    out.error = start_thread(
        threads,
        [&, r, i] {
          std::unique_ptr<Engine> engine;  // made before the clock, as the buffers are
          try {
            engine = make_engine(spec.engine, writer_options(spec));
          } catch (const std::exception& e) {  // refused (io_uring in a sandbox): the rank's error
            errors[i] = e.what();
            shared.failed.store(true);
          }
          shared.ready.fetch_add(1);
          while (!shared.go.load(std::memory_order_acquire)) std::this_thread::yield();
          out.ranks[i].start_ns = shared.start_ns;
          if (engine) errors[i] = write_rank(shared, r, buffers.ranks[i], *engine, out.ranks[i], latency[i]);
          out.ranks[i].end_ns = now_ns();
          if (!errors[i].empty()) shared.failed.store(true);
        },
        "checkpoint writer", i, own);
  }
  if (!out.error.empty()) shared.failed.store(true);
  while (shared.ready.load() < int(threads.size())) std::this_thread::yield();
  shared.start_ns = now_ns();
  shared.go.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  std::int64_t end = shared.start_ns;
  for (std::size_t i = 0; i < out.ranks.size(); ++i) {
    out.bytes += out.ranks[i].bytes;
    out.latency.merge(latency[i]);
    end = std::max(end, out.ranks[i].end_ns);
    if (out.error.empty() && !errors[i].empty() && errors[i] != "stopped") out.error = errors[i];
  }
  out.writes = out.latency.count();
  if (spec.stop && spec.stop->load()) {
    out.stopped_by = spec.stop->load();
    if (out.error.empty())
      out.error = std::string("interrupted by ") + (out.stopped_by == SIGINT ? "SIGINT" : "SIGTERM");
  }
  if (out.error.empty() && spec.fsync) {
    const std::int64_t t0 = now_ns();
    if (::fsync(folder.fd()) != 0) out.error = errno_message("fsync of the folder " + folder.path(), errno);
    out.folder_fsync_ns = now_ns() - t0;
    end = now_ns();
  }
  out.elapsed_ns = end - shared.start_ns;
  return out;
}

}  // namespace feedbench
