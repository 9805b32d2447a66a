// Private to the engines: the factory of each engine and what they share (the file system's
// name for messages, the completion queue of a synchronous engine).
#pragma once

#include <memory>
#include <string>

#include "feedbench/io/engine.h"

namespace feedbench::engines {

// Factories. REQUIRES: options checked by make_engine (queue_depth >= 1, block_size >= 1).
std::unique_ptr<Engine> make_psync(const EngineOptions& options);
std::unique_ptr<Engine> make_mmap(const EngineOptions& options);
std::unique_ptr<Engine> make_libaio(const EngineOptions& options);
std::unique_ptr<Engine> make_io_uring(const EngineOptions& options);

// Completions of reads already done by a synchronous engine, waiting for reap. Fixed size
// (queue_depth), so the hot path never allocates.
class CompletionQueue {
 public:
  explicit CompletionQueue(unsigned capacity) : items_(new Completion[capacity]), capacity_(capacity) {}
  void push(std::uint32_t slot, std::int64_t result) {
    // The caller never has more reads in flight than slots, so this cannot overflow.
    items_[(head_ + size_) % capacity_] = Completion{slot, result};
    ++size_;
  }
  std::size_t pop_into(std::span<Completion> out) {
    std::size_t n = 0;
    while (n < out.size() && size_ > 0) {
      out[n++] = items_[head_];
      head_ = (head_ + 1) % capacity_;
      --size_;
    }
    return n;
  }

 private:
  std::unique_ptr<Completion[]> items_;
  unsigned capacity_;
  unsigned head_ = 0;
  unsigned size_ = 0;
};

}  // namespace feedbench::engines
