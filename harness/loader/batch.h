// One batch as a loader worker builds it: each of its samples read through the worker's
// reader, then the transform's cost (CPU work, or a real JPEG decode), each part timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "feedbench/dataset/jpeg.h"
#include "feedbench/loader/loader.h"

namespace feedbench {

struct Batch {
  bool ready = false;
  std::uint64_t samples = 0;
  std::uint64_t bytes = 0;
  std::uint64_t planned = 0;
  // Read from storage while it was built: its samples' bytes when read by index; a stream's
  // reads, which run ahead of its records (none for a batch served from the shuffle buffer).
  std::uint64_t read = 0;
};

struct WorkerTotals {
  std::int64_t read_ns = 0;
  std::int64_t transform_ns = 0;       // wall time
  std::int64_t transform_cpu_ns = 0;   // the worker thread's CPU time in it
  std::int64_t transform_idle_ns = 0;  // of transform_ns, a recorded job's own waits
  std::uint64_t pixels = 0;            // decoded (decode transform)
  std::uint64_t bytes = 0;             // read, warm-up included: what the transform had to work on
  std::uint64_t samples = 0;           // read and transformed, warm-up included
};

// CPU work of `ns` of this thread's CPU time: on a saturated CPU it takes longer in wall time,
// as a real decode would.
void burn_cpu_ns(std::int64_t ns);

// Builds one batch: reads its samples and applies the transform, timing each part. `decoder`:
// the worker's own, for a decode transform.
// `indices` null: a batch of to − from samples from the reader's stream.
// `held` (a hand-over across processes, handover.h): each sample's output kept apart, one entry
// per sample, as a worker process holds each sample's tensor until the batch is collated: the
// decoded pixels of a decode transform, else the bytes read (the reader's when it keeps them,
// else as many zero bytes); its entries' buffers are reused from batch to batch.
// RETURNS: the batch, with what was read to build it.
Batch build_batch(SampleReader& reader, const std::vector<std::size_t>* indices, std::size_t from,
                  std::size_t to, const TransformCost& transform, WorkerTotals& totals, JpegDecoder* decoder,
                  std::vector<std::vector<std::byte>>* held = nullptr);

}  // namespace feedbench
