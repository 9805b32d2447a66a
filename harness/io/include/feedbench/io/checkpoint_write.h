// A checkpoint's write: ranks writing their shards at once into a ScratchFolder, from buffers of
// incompressible bytes made before the clock (docs/method.md, "Checkpoints"). The restore reads
// the files back with the runner (runner.h); the family joins the two (checkpoint_family.cc).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/histogram.h"
#include "feedbench/io/scratch_folder.h"

namespace feedbench {

struct CheckpointWriteSpec {
  int ranks = 1;
  int files_per_rank = 1;
  std::uint64_t file_bytes = 0;        // each file's; a multiple of 4 KiB
  std::uint64_t block_size = 1 << 20;  // bytes per write; with direct a multiple of 4 KiB
  bool direct = false;                 // O_DIRECT
  // How each rank writes (engine.h): psync (pwrite, one write at a time), io_uring or libaio
  // (up to queue_depth writes in flight on its file, at consecutive offsets).
  std::string engine = "psync";
  unsigned queue_depth = 1;
  bool fsync = true;        // each file before its close, then the folder
  std::uint64_t seed = 42;  // the bytes' seed
  int checkpoint = 0;       // which checkpoint of the case: in names and stamps
  // The ranks this process writes, first_rank .. first_rank + local_ranks - 1 (under mpirun each
  // process writes its part of the checkpoint); local_ranks 0: all `ranks`.
  int first_rank = 0;
  int local_ranks = 0;
  const std::atomic<int>* stop = nullptr;  // non-zero (a signal number): stop at the next block
  // RETURNS: how many ranks this process writes.
  int own_ranks() const { return local_ranks > 0 ? local_ranks : ranks; }
};

// Each rank's buffer: at most kCheckpointBufferBytes (and its shard, and its share of
// kCheckpointBuffersTotal), a whole number of blocks and at least queue_depth of them (each
// write in flight has a block of its own), filled with the seeded mix; writes take it in turn,
// a stamp making every 4 KiB page unique.
inline constexpr std::uint64_t kCheckpointBufferBytes = 64ull << 20;
// ... and all ranks' buffers together at most this (or a quarter of the memory available).
inline constexpr std::uint64_t kCheckpointBuffersTotal = 1ull << 30;

struct CheckpointBuffers {
  std::vector<AlignedBuffer> ranks;  // one per rank this process writes (own_ranks)
  std::uint64_t bytes = 0;           // made, all ranks together
  double seconds = 0;                // the ranks making them at once: the wall time
  std::string error;                 // a thread or an allocation refused ("" when made)
  // RETURNS: the generation rate, bytes made a second (0 when not made).
  double bytes_per_second() const { return seconds > 0 ? double(bytes) / seconds : 0; }
};

// RETURNS: the bytes of each rank's buffer for `spec` (the caps above, whole blocks, at least
// min(queue_depth, blocks of a file) blocks: as many as can be in flight).
std::uint64_t checkpoint_buffer_bytes(const CheckpointWriteSpec& spec);

// RETURNS: the buffer of each rank this process writes, made by those ranks at once, timed.
CheckpointBuffers make_checkpoint_buffers(const CheckpointWriteSpec& spec);

// RETURNS: the name of file `file` of rank `rank` in checkpoint `checkpoint`:
// "ckpt-0000-rank-00003-file-0000.bin".
std::string checkpoint_file_name(int checkpoint, int rank, int file);

struct RankWrite {
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // from the ranks' common start to its last close
  std::int64_t fsync_ns = 0;              // of its files' fsyncs
  std::vector<std::string> files;         // its files, in order
  double seconds() const { return double(end_ns - start_ns) * 1e-9; }
};

struct CheckpointWrite {
  std::vector<RankWrite> ranks;  // this process's ranks, in order
  Histogram latency;             // per write (submission to completion), ns, all ranks
  std::uint64_t bytes = 0;       // written, all ranks
  std::uint64_t writes = 0;
  std::int64_t elapsed_ns = 0;  // the common start to the folder's fsync (the last close without)
  std::int64_t folder_fsync_ns = 0;
  std::string error;   // the first failure ("" when the whole checkpoint was written)
  int stopped_by = 0;  // the signal that stopped it, else 0
  double seconds() const { return double(elapsed_ns) * 1e-9; }
  // RETURNS: the slowest rank's time, seconds.
  double slowest_rank_seconds() const;
  // RETURNS: the share of the ranks' write time spent in fsync (0..1).
  double fsync_share() const;
};

// Writes checkpoint `spec.checkpoint` into `folder`: every rank this process writes (own_ranks(),
// from first_rank), each on its own thread with an engine of its own (spec.engine, made before
// the clock), creates its files (checkpoint_file_name) and writes them in block_size writes from
// its buffer, up to queue_depth in flight, fsyncs each once all its writes completed
// (spec.fsync) and closes it; after the last rank the folder is fsynced. A failed write
// (ENOSPC, EIO), an engine or thread refused, or spec.stop ends every rank at its next block
// (the writes in flight completed first), with `error` set; the files stay in `folder`, whose
// remove_all() removes them.
// REQUIRES: `buffers` from make_checkpoint_buffers(spec).
// NOTE: test hook: FEEDBENCH_CHECKPOINT_TEST_DELAY_MS pauses that long after each write (outside
// its latency), so tests can fill the disk or interrupt a write half way.
CheckpointWrite write_checkpoint(ScratchFolder& folder, const CheckpointWriteSpec& spec,
                                 const CheckpointBuffers& buffers);

}  // namespace feedbench
