// The float64 path: sin and cos of x = pos * f in double-double arithmetic
// with a rigorous relative error bound (kDoubleDoubleRelError), enough to
// decide the correctly rounded float64 value except for ~2^-40 of inputs.
//
// Pure, thread-safe (the coefficient table is a function-local static built
// once with MPFR).
//
// Error bound (derivation in docs/numerics.md):
//  * f = w0 + w1 + w2 within 2^-158 f; the angle pos * f is formed from two
//    exact TwoProds and one rounded product: error <= 2^-133 (abs).
//  * reduction by pi/2 in four words: |r error| <= 2^-128 when q != 0,
//    <= 2^-103 |r| when q == 0; r is flagged risky when q != 0 and
//    |r| < 2^-28.
//  * Taylor series to degree 27 (sin) / 26 (cos): remainder < 2^-106;
//    terms with k >= 9 in double (< 2^-56 relative, so their rounding
//    is < 2^-108), the rest by Horner with double-double operations
//    (JMP 2017 bounds, <= 8 * 2^-106 per step).
//  * total relative error < 2^-98 for both results when !risky; we claim
//    kDoubleDoubleRelError = 2^-96 and test against 2^-94 for margin.
#ifndef POSENC_CORE_NUMERICS_SINCOS_DOUBLE_DOUBLE_H_
#define POSENC_CORE_NUMERICS_SINCOS_DOUBLE_DOUBLE_H_

#include "core/numerics/double_double.h"
#include "core/numerics/frequency_words.h"

namespace posenc {

inline constexpr double kDoubleDoubleRelError = 0x1p-96;
inline constexpr double kDoubleDoubleCheckSlack = 0x1p-94;

struct DoubleDoubleSinCos {
  DoubleDouble sin;
  DoubleDouble cos;
  bool risky;  // the error bound does not hold; use the MPFR path
};

// Precondition: |pos * f| <= 2^24 (pos an integer position of a table, or
// a real point of core/plan/real_encoding_plan.h), f.w0 >= 2^-900. The bounds
// above depend on the angle's magnitude only. With `risky` set the result
// is still within 2^-128 (absolute, the reduction) + 2^-98 |value|
// (relative), which the real-point path uses near zero crossings.
DoubleDoubleSinCos DoubleDoubleSinCosOf(double pos, const FrequencyWords& f);

// Taylor coefficients of DoubleDoubleSinCosOf (for the SIMD version in
// core/numerics/row_kernel_simd.cc, which repeats it operation for operation):
// sin_c[k] = (-1)^k/(2k+1)!, cos_c[k] = (-1)^k/(2k)!, k <= 13.
struct DoubleDoubleTaylor {
  DoubleDouble sin_c[14];
  DoubleDouble cos_c[14];
};
const DoubleDoubleTaylor& DoubleDoubleTaylorTables();

// Correctly rounded double of the real value y (|y - (hi+lo)| <=
// kDoubleDoubleRelError * |y|), or false when not decided.
bool RoundDoubleDoubleToDouble(DoubleDouble y, double* out);

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_SINCOS_DOUBLE_DOUBLE_H_
