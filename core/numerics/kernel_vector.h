// KernelVector<T>: a std::vector whose storage starts on a 64-byte boundary,
// for the arrays the SIMD row kernels load (core/numerics/row_kernel_simd.h:
// frequency words, anchor rows, angle-addition tables).
//
// Why: glibc's malloc aligns to 16 bytes, so a 64-byte AVX-512 load from a
// std::vector<double> crosses a cache line in three loads out of four, and
// which alignment a plan's arrays got depended on the heap's history. The
// layered core (issue 35) made the same machine code 15% slower on a
// float32 table only by allocating in another order; aligned, it runs
// 12-15% faster than either (bench/interleaved_ab.py, BENCHMARKS.md).
//
// Usage:
//   KernelVector<double> w0(RoundUpToKernelLanes(columns), 1.0);
//   Float32RowSimd(w0.data(), ...);
//
// Thread safety and ownership are std::vector's.
#ifndef POSENC_CORE_NUMERICS_KERNEL_VECTOR_H_
#define POSENC_CORE_NUMERICS_KERNEL_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace posenc {

inline constexpr std::size_t kKernelAlignment = 64;  // a cache line, a zmm

template <class T>
struct KernelAllocator {
  using value_type = T;
  KernelAllocator() = default;
  template <class U>
  KernelAllocator(const KernelAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    return static_cast<T*>(
        ::operator new (n * sizeof(T), std::align_val_t{kKernelAlignment}));
  }
  // Unsized: clang declares the sized aligned delete only under
  // -fsized-deallocation, which the fuzz build (clang) does not turn on.
  void deallocate(T* p, std::size_t /*n*/) {
    ::operator delete (p, std::align_val_t{kKernelAlignment});
  }
  template <class U>
  bool operator==(const KernelAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const KernelAllocator<U>&) const {
    return false;
  }
};

template <class T>
using KernelVector = std::vector<T, KernelAllocator<T>>;

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_KERNEL_VECTOR_H_
