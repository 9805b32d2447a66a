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
#include <new>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"

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
  return std::max(spec.block_size, cap / spec.block_size * spec.block_size);
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
  std::atomic<bool> go{false};
  std::atomic<bool> failed{false};
  std::int64_t start_ns = 0;
};

// One rank's write of its files. RETURNS: "" or why it stopped.
std::string write_rank(Shared& shared, int rank, const AlignedBuffer& buffer, RankWrite& out,
                       Histogram& latency) {
  const CheckpointWriteSpec& spec = shared.spec;
  const std::uint64_t ring = buffer.size();
  std::byte* const base = buffer.get();
  std::uint64_t at = 0;  // where the next block is taken from the ring
  for (int f = 0; f < spec.files_per_rank; ++f) {
    const std::string name = checkpoint_file_name(spec.checkpoint, rank, f);
    UniqueFd fd(shared.folder.create(name, spec.direct ? O_DIRECT : 0));
    if (!fd) return errno_message("creating " + shared.folder.path() + "/" + name, errno);
    out.files.push_back(name);
    // Every 4 KiB page of the checkpoint gets a stamp of its own: (checkpoint, file, page), mixed.
    const std::uint64_t file_key =
        (std::uint64_t(spec.checkpoint) * std::uint64_t(spec.ranks * spec.files_per_rank) +
         std::uint64_t(rank * spec.files_per_rank + f))
        << 36;
    for (std::uint64_t offset = 0; offset < spec.file_bytes;) {
      if (shared.failed.load(std::memory_order_relaxed)) return "";
      if (spec.stop && spec.stop->load(std::memory_order_relaxed)) return "stopped";
      const std::uint64_t length = std::min(spec.block_size, spec.file_bytes - offset);
      std::byte* block = base + at;
      for (std::uint64_t page = 0; page < length; page += kPage) {
        const std::uint64_t stamp = mix64(spec.seed ^ (file_key + (offset + page) / kPage));
        std::memcpy(block + page, &stamp, sizeof stamp);
      }
      const std::int64_t t0 = now_ns();
      std::uint64_t done = 0;
      while (done < length) {
        const ssize_t n = ::pwrite(fd.get(), block + done, length - done, off_t(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
          return errno_message("writing " + shared.folder.path() + "/" + name, n < 0 ? errno : ENOSPC);
        done += std::uint64_t(n);
      }
      latency.record(std::uint64_t(now_ns() - t0));
      if (shared.delay_ms > 0) pause_for_test(shared.delay_ms, spec.stop);
      out.bytes += length;
      offset += length;
      at = (at + spec.block_size) % ring;
    }
    if (spec.fsync) {
      const std::int64_t t0 = now_ns();
      if (::fsync(fd.get()) != 0)
        return errno_message("fsync of " + shared.folder.path() + "/" + name, errno);
      out.fsync_ns += now_ns() - t0;
    }
    if (::close(fd.release()) != 0)
      return errno_message("closing " + shared.folder.path() + "/" + name, errno);
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
          while (!shared.go.load(std::memory_order_acquire)) std::this_thread::yield();
          out.ranks[i].start_ns = shared.start_ns;
          errors[i] = write_rank(shared, r, buffers.ranks[i], out.ranks[i], latency[i]);
          out.ranks[i].end_ns = now_ns();
          if (!errors[i].empty()) shared.failed.store(true);
        },
        "checkpoint writer", i, own);
  }
  if (!out.error.empty()) shared.failed.store(true);
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
