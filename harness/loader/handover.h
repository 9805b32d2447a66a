// How a built batch reaches its trainer (LoaderOptions::handover).
//
// `thread`: the workers are threads of the trainer's process; the batch they built is the
// trainer's as it is (nothing is copied, nothing crosses).
//
// `process`: as PyTorch's DataLoader with num_workers > 0 hands a batch over from a worker
// process to the training process, with the same kernel work:
// - in the worker, each sample's bytes are held apart as it is read (the sample's tensor), then
//   put into fresh shared-memory buffers, one per tensor the batch hands over: collated `stack`
//   (default_collate's torch.stack into one shared storage), one buffer of the batch's size;
//   collated `list` (a collate_fn returning the samples' list, as variable-size samples need),
//   one buffer per sample, each its own shared storage. Each buffer is a memfd, sized, mapped and
//   written (every page faulted in fresh), and its file descriptor is sent to the trainer over a
//   Unix socket (SCM_RIGHTS, as torch's file_descriptor sharing strategy sends it), one message
//   per tensor, with the batch's index and the tensor's place in it;
// - in the trainer, waiting for the batch includes receiving every tensor's descriptor and
//   mapping its buffer (torch's rebuild of each storage from its fd); after the step the
//   mappings are dropped and the descriptors closed, which frees the buffers' pages.
// Python's own cost per tensor (torch fetches each descriptor from the worker's resource_sharer
// thread over a fresh authenticated connection, waiting for the worker's GIL) is not kernel work
// this does: the loader charges it as time (LoaderOptions::next_cost_per_tensor_ns).
// docs/method.md ("The loader against PyTorch's DataLoader") says what this accounts for, and
// what it leaves out (Python's own per-sample and per-batch cost, pickling).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "feedbench/base/unique_fd.h"

namespace feedbench {

// One tensor's buffer as the trainer holds it: mapped read-only until destroyed (then unmapped
// and its descriptor closed, which frees the buffer).
class SharedTensor {
 public:
  SharedTensor() = default;
  SharedTensor(UniqueFd fd, std::size_t bytes);  // maps `fd`; throws RunError when it cannot
  SharedTensor(SharedTensor&& o) noexcept;
  SharedTensor& operator=(SharedTensor&& o) noexcept;
  SharedTensor(const SharedTensor&) = delete;
  SharedTensor& operator=(const SharedTensor&) = delete;
  ~SharedTensor();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(map_), size_}; }

 private:
  void release();
  UniqueFd fd_;
  void* map_ = nullptr;
  std::size_t size_ = 0;
};

// A batch as the trainer holds it: its tensors, in order (one when stacked, one per sample when
// listed), each mapped until the batch is dropped.
class SharedBatch {
 public:
  SharedBatch() = default;
  explicit SharedBatch(std::vector<SharedTensor> tensors) : tensors_(std::move(tensors)) {}

  // RETURNS: the batch's one tensor's bytes. REQUIRES: tensors() == 1.
  std::span<const std::byte> bytes() const { return tensors_.front().bytes(); }
  const std::vector<SharedTensor>& tensors() const { return tensors_; }
  bool empty() const { return tensors_.empty(); }

 private:
  std::vector<SharedTensor> tensors_;
};

// One epoch's channel from its workers (any thread, each batch once) to its trainer (one
// thread). Throws RunError naming the call that failed (memfd_create, sendmsg, ...).
class BatchChannel {
 public:
  BatchChannel();
  BatchChannel(const BatchChannel&) = delete;
  BatchChannel& operator=(const BatchChannel&) = delete;

  // A worker: puts `samples` (each sample's bytes, in order) into fresh shared-memory buffers
  // and sends them as batch `j`: collated into one buffer (stacked), or one buffer per sample
  // (`list`; a batch of no samples is then one empty tensor). RETURNS: the bytes sent.
  std::size_t send(std::size_t j, std::span<const std::span<const std::byte>> samples, bool list = false);

  // The trainer: RETURNS: batch `j`, every tensor mapped; blocks until all of them arrive,
  // keeping those of later batches that arrive before (so the workers never wait on a full
  // socket while the trainer waits); empty once stop() was called and batch j was not whole.
  SharedBatch receive(std::size_t j);

  // Any thread: no more batches will be sent (a worker failed): receive() stops waiting.
  void stop();

  // RETURNS: batches sent and not yet received (in the socket or kept aside).
  std::size_t pending() const { return sent_.load() - received_; }

 private:
  UniqueFd worker_end_, trainer_end_;
  std::atomic<std::size_t> sent_{0};
  std::size_t received_ = 0;
  // One tensor's message as it arrived: its buffer's descriptor and size, its place and count.
  struct Arrived {
    UniqueFd fd;
    std::size_t bytes = 0, part = 0, parts = 1;
  };
  // Sends one tensor of batch j: a memfd holding `parts_of` (written in order).
  // RETURNS: the tensor's bytes (its parts' together), sent as one buffer.
  std::size_t send_tensor(std::size_t j, std::size_t part, std::size_t parts,
                          std::span<const std::span<const std::byte>> parts_of);
  // RETURNS: false once stopped; else one message received into arrived_.
  bool receive_one();
  // By batch index: the tensors of it that arrived.
  std::map<std::size_t, std::vector<Arrived>> arrived_;
};

}  // namespace feedbench
