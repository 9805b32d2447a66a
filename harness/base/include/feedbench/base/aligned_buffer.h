// Memory aligned for O_DIRECT (4 KiB satisfies every logical block size up to 4 KiB), freed
// with the owner. Buffers of 1 MiB and more are backed by transparent huge pages where the
// kernel has them: an O_DIRECT read goes to the device as one request only when its buffer
// spans at most the queue's max_segments physically separate pieces (254 on a virtio disk),
// and a 1 MiB read into scattered 4 KiB pages (256 pieces) was split in two — feedbench sent
// 2,049 requests for fio's 1,024 on the same 1 GiB (docs/fio-parity.md, "Requests at the
// device"). One 2 MiB page makes a slot one piece, whatever the allocator's luck.
#pragma once

#include <sys/mman.h>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace feedbench {

inline constexpr std::size_t kDirectAlignment = 4096;
// x86-64's transparent huge page; buffers from kHugeBufferMin up are aligned and sized to it.
inline constexpr std::size_t kHugePageSize = std::size_t(2) << 20;
inline constexpr std::size_t kHugeBufferMin = std::size_t(1) << 20;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes (at least one) aligned to `alignment`. Throws std::bad_alloc.
  // From kHugeBufferMin bytes up, the memory is aligned and rounded up to kHugePageSize and
  // advised MADV_HUGEPAGE before its first touch (a hint: without THP it is plain pages).
  explicit AlignedBuffer(std::size_t size, std::size_t alignment = kDirectAlignment) : size_(size) {
    std::size_t bytes = size == 0 ? 1 : size;
    const bool huge = bytes >= kHugeBufferMin;
    if (huge) {
      alignment = alignment > kHugePageSize ? alignment : kHugePageSize;
      bytes = (bytes + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
    }
    void* p = nullptr;
    if (::posix_memalign(&p, alignment, bytes) != 0) throw std::bad_alloc();
    if (huge) ::madvise(p, bytes, MADV_HUGEPAGE);  // refused (no THP): plain pages, still correct
    data_ = static_cast<std::byte*>(p);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  std::byte* get() const { return data_; }
  char* bytes() const { return reinterpret_cast<char*>(data_); }
  std::size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace feedbench
