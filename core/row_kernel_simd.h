// SIMD kernels of the fast path (core/sincos_fast.h on Highway vectors), with
// run-time dispatch to the best x86 target that has FMA (AVX2, AVX-512).
// On CPUs without FMA they report `false` and callers use the scalar path.
//
// Pure functions, thread-safe. Preconditions: the frequency arrays hold at
// least RoundUpToKernelLanes(columns) entries (pad with 1.0 / 0.0), every
// w0 in [2^-900, 1], pos an integer in [1, 2^24].
#ifndef POSENC_CORE_ROW_KERNEL_SIMD_H_
#define POSENC_CORE_ROW_KERNEL_SIMD_H_

#include <cstddef>
#include <cstdint>

#include "core/table_spec.h"

namespace posenc {

// Largest vector length (in doubles) of any dispatched target.
inline constexpr size_t kMaxKernelLanes = 16;
inline size_t RoundUpToKernelLanes(size_t n) {
  return (n + kMaxKernelLanes - 1) / kMaxKernelLanes * kMaxKernelLanes;
}

// Called for each column the kernel cannot decide or does not cover (rare):
// the callee must write both values of that column.
using SlowColumnFn = void (*)(void* ctx, uint32_t column);

// Float32 row, columns [0, columns) of pair frequencies w0 + w1: writes the
// correctly rounded sin/cos at the layout's positions in `row` (d = 2*half
// floats), calling `slow` for every column of a vector that holds an
// undecided value or a partial vector at the end.
// Returns false (writing nothing) if this CPU has no SIMD target with FMA.
bool Float32RowSimd(const double* w0, const double* w1, uint32_t columns,
                    uint32_t half, Layout layout, uint32_t pos, float* row,
                    SlowColumnFn slow, void* ctx);

// sin/cos(pos * (w0 + w1)) in double for columns [0, columns), with relative
// error <= kFastRelError unless risky[i] != 0. Writes RoundUpToKernelLanes
// entries. Returns false if this CPU has no SIMD target with FMA.
bool SinCosColumnsSimd(const double* w0, const double* w1, uint32_t columns,
                       uint32_t pos, double* sin_out, double* cos_out,
                       uint8_t* risky);

// Name of the SIMD target the kernels dispatch to on this CPU ("AVX3",
// "AVX2", ...), or "scalar" when none with FMA is available.
const char* SimdKernelTargetName();

}  // namespace posenc

#endif  // POSENC_CORE_ROW_KERNEL_SIMD_H_
