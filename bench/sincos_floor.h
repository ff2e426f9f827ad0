// The sin/cos floor of Encode (bench/encode_bench): the cheapest per-value
// double-precision sin and cos of a fresh angle, vectorised with Highway's
// hwy::Sin and hwy::Cos (hwy/contrib/math, about 1-3 ulp in double; the
// dispatched target is the widest the CPU has, as
// core/numerics/row_kernel_simd).
//
// It is NOT exact: the double results are merely cast to float32 (the
// rounding is not decided). It is what any exact Encode must pay at least
// once per pair, as an arbitrary batch of real points admits no recurrence
// (neither across rows, x arbitrary, nor across frequencies, F_i
// geometric), and deciding a float32 rounding takes a double-grade sin/cos.
//
// Thread-safe (no state).
#ifndef POSENC_BENCH_SINCOS_FLOOR_H_
#define POSENC_BENCH_SINCOS_FLOOR_H_

#include <cstddef>
#include <cstdint>

namespace posenc::bench {

// For each of the `points` positions x[p], writes the float32 row
// cos(x[p] * freqs[i]) for i < half, then sin(x[p] * freqs[i]) for i < half,
// each computed in double and cast to float32, at out + p * 2 * half.
// Precondition: every |x[p] * freqs[i]| <= 39000 (hwy::Sin/Cos's range).
void SinCosFloorRows(const double* x, size_t points, const double* freqs,
                     uint32_t half, float* out);

// The Highway target SinCosFloorRows dispatches to ("AVX3", "AVX2", ...).
const char* SinCosFloorTarget();

}  // namespace posenc::bench

#endif  // POSENC_BENCH_SINCOS_FLOOR_H_
