// A growable array of trivially copyable values in one malloc'd block, grown with realloc.
// For arrays of millions of elements (a FileSet's entries and paths): glibc grows a large
// block in place or with mremap, so growing never holds the old and the new copy at once as
// std::vector's copy-and-free does, and the peak resident memory stays at the array's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace feedbench {

template <class T>
class PodArray {
  static_assert(std::is_trivially_copyable_v<T>, "PodArray holds trivially copyable values only");

 public:
  PodArray() = default;
  ~PodArray() { std::free(data_); }
  PodArray(const PodArray& o) { append(o.data_, o.size_); }
  PodArray& operator=(const PodArray& o) {
    if (this != &o) {
      size_ = 0;
      append(o.data_, o.size_);
    }
    return *this;
  }
  PodArray(PodArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  PodArray& operator=(PodArray&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void push_back(const T& value) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = value;
  }
  // Appends `count` values from `values` (which must not point into this array).
  void append(const T* values, std::size_t count) {
    if (count == 0) return;
    if (capacity_ - size_ < count) grow(size_ + count);
    std::memcpy(static_cast<void*>(data_ + size_), values, count * sizeof(T));
    size_ += count;
  }
  // Keeps the first `n` values (n <= size()).
  void truncate(std::size_t n) { size_ = n < size_ ? n : size_; }
  void clear() { size_ = 0; }
  // Gives back the unused capacity (a scan's arrays are full-sized from then on).
  void shrink_to_fit() {
    if (capacity_ == size_) return;
    if (size_ == 0) {
      std::free(std::exchange(data_, nullptr));
      capacity_ = 0;
      return;
    }
    if (void* p = std::realloc(data_, size_ * sizeof(T))) {
      data_ = static_cast<T*>(p);
      capacity_ = size_;
    }
  }

 private:
  void grow(std::size_t needed) {
    // 1.5x: large blocks grow by mremap, so a smaller factor costs little time and less slack.
    std::size_t capacity = capacity_ < 16 ? 16 : capacity_ + capacity_ / 2;
    if (capacity < needed) capacity = needed;
    if (capacity > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    void* p = std::realloc(data_, capacity * sizeof(T));
    if (!p) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = capacity;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace feedbench
