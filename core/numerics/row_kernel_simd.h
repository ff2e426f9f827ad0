// SIMD kernels of the fast path (core/numerics/sincos_fast.h on Highway
// vectors), of the double-double path (core/numerics/sincos_double_double.h)
// and of the angle-addition range paths for every dtype
// (core/numerics/angle_addition.h), with run-time dispatch to the best x86
// target that has FMA (AVX2, AVX-512). On CPUs without FMA they report `false`
// and callers use the scalar path.
//
// Pure functions, thread-safe. Preconditions: the frequency arrays hold at
// least RoundUpToKernelLanes(columns) entries (pad with 1.0 / 0.0, or with
// copies of a real column), every w0 >= 2^-900, and pos a double (an
// integer position of a table, or a real point of
// core/plan/real_encoding_plan.h) with |pos * w0| <= 2^24 in every lane: the
// error bounds depend on the angle's magnitude, not on pos being an integer.
#ifndef POSENC_CORE_NUMERICS_ROW_KERNEL_SIMD_H_
#define POSENC_CORE_NUMERICS_ROW_KERNEL_SIMD_H_

#include <cstddef>
#include <cstdint>

#include "core/numerics/dtype.h"

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
                    uint32_t half, Layout layout, double pos, float* row,
                    SlowColumnFn slow, void* ctx);

// As Float32RowSimd, into float16 or bfloat16 (RNE): every column's sin and
// cos decided by the fast path's bound, else `slow(ctx, column)` (which
// must write both). Columns may end within a vector: the words must be
// padded to RoundUpToKernelLanes(columns). Returns false if this CPU has
// no SIMD target with FMA (nothing written).
bool Half16RowSimd(const double* w0, const double* w1, uint32_t columns,
                   uint32_t half, Layout layout, double pos, bool bfloat16,
                   uint16_t* row, SlowColumnFn slow, void* ctx);

// sin/cos(pos * (w0 + w1)) in double for columns [0, columns), with relative
// error <= kFastRelError unless risky[i] != 0. Writes RoundUpToKernelLanes
// entries. Returns false if this CPU has no SIMD target with FMA.
bool SinCosColumnsSimd(const double* w0, const double* w1, uint32_t columns,
                       double pos, double* sin_out, double* cos_out,
                       uint8_t* risky);

// Float32 row p0 + j from its anchor row p0 by angle addition
// (core/numerics/angle_addition.h): with s0/c0 the anchor's sin/cos(p0 * f_i)
// and sj/cj the plan's sin/cos(j * f_i), writes RNE_float32 of s0*cj + c0*sj
// and c0*cj - s0*sj, decided by the absolute-slack interval test; sj == nullptr
// (cj ignored) writes the anchor row itself (relative slack). Calls `slow` for
// each undecided column (after storing the vector, so `slow` overwrites).
// `stream`: use non-temporal stores where the row is suitably aligned (call
// FlushStreamingStores before publishing the output to other threads). All
// arrays hold RoundUpToKernelLanes(columns) finite entries; columns beyond
// `columns` are never written. `slack_scale` multiplies the absolute slack: a
// RoPE attention factor a in (1, 2] folded into the anchor row (s0, c0 times a)
// scales the bound of the identity by a, so such rows pass 2
// (core/plan/encoding_plan.cc). Returns false (writing nothing) if this CPU has
// no SIMD target with FMA.
bool Float32RowFromAnchorSimd(const double* s0, const double* c0,
                              const double* sj, const double* cj,
                              uint32_t columns, uint32_t half, Layout layout,
                              float* row, bool stream, SlowColumnFn slow,
                              void* ctx, double slack_scale = 1.0);

// The same for a float16 (bfloat16 = false) or bfloat16 row of 16-bit
// words: each value rounded straight from the double y (never through
// float32) by the vector equivalent of RoundDoubleToBits, decided by the
// same interval tests (absolute slack kAngleAddCheckSlack, relative
// kFastCheckSlack for the anchor row). Ordinary stores only.
bool Half16RowFromAnchorSimd(const double* s0, const double* c0,
                             const double* sj, const double* cj,
                             uint32_t columns, uint32_t half, Layout layout,
                             bool bfloat16, uint16_t* row, SlowColumnFn slow,
                             void* ctx, double slack_scale = 1.0);

// Anchor (s0, c0) and table (sj = sin(j f), cj = cos(j f)) rows of the
// 16-bit range path: the double values of the kernels above and their
// float32 roundings (RN).
struct Half16Arrays {
  const float *s0, *c0, *sj, *cj;
  const double *s0d, *c0d, *sjd, *cjd;
};

// The rows p0 + j, j >= 1, of Half16RowFromAnchorSimd on float32 lanes:
// y = fl32(s0*cj + fl32(c0*sj)) and fl32(c0*cj - fl32(s0*sj)), every value
// rounded straight from y to the 16-bit format where the interval test with
// absolute slack kAngleAdd32CheckSlack decides it
// (core/numerics/angle_addition.h). Twice the lanes of the double kernel per
// vector and half its loads. A column that test leaves undecided (~1.5%
// float16, ~0.2% bfloat16) is retried in double (the double kernel's y and
// slack kAngleAddCheckSlack, RoundHalf16IfDecided); `slow` is called for it
// only if that is undecided too (after storing). Arrays hold
// RoundUpToKernelLanes(columns) finite entries.
bool Half16RowFromAnchorF32Simd(const Half16Arrays& a, uint32_t columns,
                                uint32_t half, Layout layout, bool bfloat16,
                                uint16_t* row, SlowColumnFn slow, void* ctx,
                                double slack_scale = 1.0);

// Double-double arrays of the float64 range path: anchor row s0/c0 and
// table row sj/cj (sin/cos(j f_i)); sj_hi == nullptr for the anchor row
// itself. A NaN hi word marks a value that is not available (risky).
struct DdArrays {
  const double *s0_hi, *s0_lo, *c0_hi, *c0_lo;
  const double *sj_hi, *sj_lo, *cj_hi, *cj_lo;
  // Multiplies the absolute slack: 2 when the anchor row carries a RoPE
  // attention factor a in (1, 2] (see Float32RowFromAnchorSimd).
  double slack_scale = 1.0;
};

// Float64 row p0 + j from its anchor by double-double angle addition
// (core/numerics/angle_addition.h): writes RN_double of the double-double
// s0*cj + c0*sj and c0*cj - s0*sj where the interval test with absolute
// slack kDdAngleAddCheckSlack decides it (anchor row: relative slack
// kDoubleDoubleCheckSlack), calls `slow` for every other column (after
// storing). `stream`: non-temporal stores where aligned, as for float32
// (call FlushStreamingStores before publishing the output). False if no
// SIMD target with FMA.
bool Float64RowFromAnchorSimd(const DdArrays& a, uint32_t columns,
                              uint32_t half, Layout layout, double* row,
                              bool stream, SlowColumnFn slow, void* ctx);

// A run of consecutive rows p0 + j, p0 + j + 1, ..., j >= 1, of one anchor,
// for the *RowsFromAnchor* kernels below: row r takes every table array
// advanced by r * table_stride and is written r * row_stride elements after
// the first row; `slow` is called with r * columns + column. One dispatch
// for the run; the bytes are those of the one-row kernels row by row.
struct AnchorRun {
  uint32_t rows = 0;
  size_t table_stride = 0;
  size_t row_stride = 0;
};
bool Float32RowsFromAnchorSimd(const double* s0, const double* c0,
                               const double* sj, const double* cj,
                               const AnchorRun& run, uint32_t columns,
                               uint32_t half, Layout layout, float* row,
                               SlowColumnFn slow, void* ctx);
bool Half16RowsFromAnchorF32Simd(const Half16Arrays& a, const AnchorRun& run,
                                 uint32_t columns, uint32_t half, Layout layout,
                                 bool bfloat16, uint16_t* row,
                                 SlowColumnFn slow, void* ctx);
bool Float64RowsFromAnchorSimd(const DdArrays& a, const AnchorRun& run,
                               uint32_t columns, uint32_t half, Layout layout,
                               double* row, SlowColumnFn slow, void* ctx);

// DoubleDoubleSinCosOf(pos, {w0[i], w1[i], w2[i]}) for columns
// [0, columns), operation for operation (the same bits), as double-double
// hi/lo arrays; risky results get a NaN hi word. Writes
// RoundUpToKernelLanes(columns) entries. False if no SIMD target with FMA.
bool DdSinCosColumnsSimd(const double* w0, const double* w1, const double* w2,
                         uint32_t columns, double pos, double* s_hi,
                         double* s_lo, double* c_hi, double* c_lo);

// Orders earlier non-temporal stores of this thread before later stores
// (sfence on x86).
void FlushStreamingStores();

// Name of the SIMD target the kernels dispatch to now ("AVX3", "AVX2", ...;
// asked of the dispatched code itself, so it honours hwy's target masks), or
// "scalar" when none with FMA is available.
const char* SimdKernelTargetName();

// Name of the best target with FMA that this CPU supports and posenc was
// compiled for (Highway's compiled targets include AVX3 = AVX-512 on x86),
// or "scalar".
const char* SimdBestTargetName();

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_ROW_KERNEL_SIMD_H_
