// Memory aligned for O_DIRECT (4 KiB satisfies every logical block size up to 4 KiB), freed
// with the owner.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace feedbench {

inline constexpr std::size_t kDirectAlignment = 4096;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes (at least one) aligned to `alignment`. Throws std::bad_alloc.
  explicit AlignedBuffer(std::size_t size, std::size_t alignment = kDirectAlignment) : size_(size) {
    void* p = nullptr;
    if (::posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) throw std::bad_alloc();
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
