// Angle addition from anchor rows: the float32 table path for ranges of rows.
//
// Rows p0 = multiple of K ("anchors") get sin/cos(p0 * f_i) in double from
// the fast path (core/numerics/sincos_fast.h, relative error <= kFastRelError,
// risky values from the double-double or MPFR paths). Row p = p0 + j, 0 < j <
// K, is then
//   sin(p f) = sin(p0 f) cos(j f) + cos(p0 f) sin(j f)
//   cos(p f) = cos(p0 f) cos(j f) - sin(p0 f) sin(j f)
// with sin/cos(j f) precomputed per plan (same accuracy as the anchors).
// The identity is exact in the reals, so only the input errors and two
// roundings matter; the bound is ABSOLUTE (derivation in docs/numerics.md):
//   with eps = kFastRelError = 2^-47 on each of the four inputs and
//   u = 2^-53 per rounding (one product, one fma),
//   |y - exact| <= 2 eps + eps^2 + 2.01 u < 1.02 * 2^-46
// because |sin(a) cos(b)| + |cos(a) sin(b)| <= 1 (Cauchy-Schwarz).
// The boundary test rounds y - E and y + E, E = kAngleAddCheckSlack = 2^-45,
// which covers the bound plus the rounding of y +- E (<= 2^-53 (1 + E)).
// Values within ~2^-45 of a float32 rounding boundary (in particular all
// |y| < 2^-21, i.e. near zero crossings) are undecided and go to the
// per-value rigorous path (fast path with relative slack, then MPFR).
//
// Pure, thread-safe. Scalar reference of the arithmetic in
// core/numerics/row_kernel_simd.cc (same operations).
#ifndef POSENC_CORE_NUMERICS_ANGLE_ADDITION_H_
#define POSENC_CORE_NUMERICS_ANGLE_ADDITION_H_

#include <cmath>

namespace posenc {

// Absolute error bound of AngleAddSin/AngleAddCos claimed (proof: 1.02 *
// 2^-46 given inputs within kFastRelError = 2^-47 relative).
inline constexpr double kAngleAddAbsError = 0x1p-46 * 1.03;
// Slack of the boundary test: kAngleAddAbsError plus the rounding of
// y +- slack (2^-53 * (1 + 2^-45)) fits in 2^-45 with room to spare.
inline constexpr double kAngleAddCheckSlack = 0x1p-45;

// float16 / bfloat16 ranges: the same identity in float32 arithmetic, on
// float32 copies (RN) of the double inputs above. A 16-bit value needs 8 or
// 11 bits, so float32 lanes (twice as many per vector, half the bytes
// loaded) keep a wide margin. Each input is then within
// eps = 2^-24 + 2^-47 (1 + 2^-24) relative of its true value, plus 2^-150
// absolute where it underflows; u = 2^-24 per rounding (one product, one
// fma; an underflowing product adds <= 2^-150):
//   |y - exact| <= 2 eps + eps^2 + 2.01 u + 2^-146 < 1.01 * 2^-22.
// The test rounds |y| -+ E to float32 (<= 2^-24 (1 + E) each): E = 2^-21
// covers the bound with a 1.5x margin. Values within ~2^-21 of a 16-bit
// rounding boundary, or |y| < 2^-21, are undecided (the per-value path).
inline constexpr double kAngleAdd32AbsError = 0x1p-22 * 1.01;
inline constexpr float kAngleAdd32CheckSlack = 0x1p-21f;

// Float64 ranges: the same identity in double-double arithmetic. Inputs are
// the double-double path's values (core/numerics/sincos_double_double.h), each
// within eps = kDoubleDoubleRelError = 2^-96 relative. Four products by DdMul
// (unnormalised, <= 5 u^2 relative each, u = 2^-53; the magnitudes of each
// pair of products sum to <= (1 + eps)^2 by Cauchy-Schwarz, so <= 5.01 u^2
// absolute per pair), and each sum as TwoSum of the high words (exact) plus
// two rounded additions of terms below 2^-51 (<= 2^-103.4):
//   |y - exact| <= 2 eps + eps^2 + 5.01 u^2 + 2^-103.4 < 1.02 * 2^-95.
// The test rounds hi + fl(t -+ E) to double (monotone in the addend; each
// fl() adds <= 2^-104): E = 2^-94 covers the bound with a 1.9x margin.
inline constexpr double kDdAngleAddAbsError = 0x1p-95 * 1.02;
inline constexpr double kDdAngleAddCheckSlack = 0x1p-94;

// fl(s0*cj + fl(c0*sj)): ~sin(p0 f + j f).
inline double AngleAddSin(double s0, double c0, double sj, double cj) {
  return std::fma(s0, cj, c0 * sj);
}

// fl(c0*cj - fl(s0*sj)): ~cos(p0 f + j f).
inline double AngleAddCos(double s0, double c0, double sj, double cj) {
  return std::fma(c0, cj, -(s0 * sj));
}

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_ANGLE_ADDITION_H_
