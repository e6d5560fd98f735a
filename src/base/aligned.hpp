// src/base/aligned.hpp — std::vector storage on 64-byte boundaries, so the kernels' rows start
// aligned (kernels/shot.hpp). malloc gives only 16 bytes, and large blocks come from mmap
// at a page offset of 16.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace starwave {

template <typename T, std::size_t Align = 64>
struct AlignedAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U, Align>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + Align - 1) / Align * Align;
    void* p = std::aligned_alloc(Align, bytes == 0 ? Align : bytes);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <typename U>
  bool operator==(const AlignedAllocator<U, Align>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const AlignedAllocator<U, Align>&) const {
    return false;
  }
};

template <typename T>
using aligned_vector = std::vector<T, AlignedAllocator<T>>;

}  // namespace starwave
