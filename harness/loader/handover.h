// How a built batch reaches its trainer (LoaderOptions::handover).
//
// `thread`: the workers are threads of the trainer's process; the batch they built is the
// trainer's as it is (nothing is copied, nothing crosses).
//
// `process`: as PyTorch's DataLoader with num_workers > 0 hands a batch over from a worker
// process to the training process, with the same kernel work:
// - in the worker, each sample's bytes are held apart as it is read (the sample's tensor), then
//   collated into one fresh shared-memory buffer of the batch's size (default_collate's
//   torch.stack into a shared storage: a memfd, sized, mapped and written, every page faulted in
//   fresh), and its file descriptor is sent to the trainer over a Unix socket (SCM_RIGHTS, as
//   torch's file_descriptor sharing strategy sends it) with the batch's index;
// - in the trainer, waiting for the batch includes receiving that descriptor and mapping the
//   buffer (torch's rebuild of the storage from the fd); after the step the mapping is dropped
//   and the descriptor closed, which frees the buffer's pages (the batch's storage freed).
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

// A batch's buffer as the trainer holds it: mapped read-only until destroyed (then unmapped
// and its descriptor closed, which frees the buffer).
class SharedBatch {
 public:
  SharedBatch() = default;
  SharedBatch(UniqueFd fd, std::size_t bytes);  // maps `fd`; throws RunError when it cannot
  SharedBatch(SharedBatch&& o) noexcept;
  SharedBatch& operator=(SharedBatch&& o) noexcept;
  SharedBatch(const SharedBatch&) = delete;
  SharedBatch& operator=(const SharedBatch&) = delete;
  ~SharedBatch();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(map_), size_}; }
  bool empty() const { return !fd_; }

 private:
  void release();
  UniqueFd fd_;
  void* map_ = nullptr;
  std::size_t size_ = 0;
};

// One epoch's channel from its workers (any thread, each batch once) to its trainer (one
// thread). Throws RunError naming the call that failed (memfd_create, sendmsg, ...).
class BatchChannel {
 public:
  BatchChannel();
  BatchChannel(const BatchChannel&) = delete;
  BatchChannel& operator=(const BatchChannel&) = delete;

  // A worker: collates `samples` (each sample's bytes, in order) into a fresh shared-memory
  // buffer and sends it as batch `j`. RETURNS: the bytes collated.
  std::size_t send(std::size_t j, std::span<const std::span<const std::byte>> samples);

  // The trainer: RETURNS: batch `j`, mapped; blocks until it arrives, keeping those that arrive
  // before it (so the workers never wait on a full socket while the trainer waits); empty once
  // stop() was called and batch j had not arrived.
  SharedBatch receive(std::size_t j);

  // Any thread: no more batches will be sent (a worker failed): receive() stops waiting.
  void stop();

  // RETURNS: batches sent and not yet received (in the socket or kept aside).
  std::size_t pending() const { return sent_.load() - received_; }

 private:
  UniqueFd worker_end_, trainer_end_;
  std::atomic<std::size_t> sent_{0};
  std::size_t received_ = 0;
  std::map<std::size_t, std::pair<UniqueFd, std::size_t>> arrived_;  // by index: fd and size
};

}  // namespace feedbench
