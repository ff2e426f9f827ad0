// The fast path: sin and cos of x = pos * f in double precision with a
// rigorous relative error bound, for deciding float32/float16/bfloat16
// roundings (the caller checks the bound against the rounding boundaries).
//
// Scalar reference version; core/numerics/row_kernel_simd.cc is the same
// arithmetic, operation for operation, on Highway vectors. Pure, thread-safe.
//
// Error bound (see docs/numerics.md for the derivation):
//  * angle: f = w0 + w1 with |f - (w0+w1)| <= 2^-105 f; x = xh + xl from an
//    exact TwoProd, |x - (xh+xl)| <= 2^-80 (x <= 2^24) and <= 2^-103 x.
//  * reduction: q = nearest(xh * 2/pi), r = x - q*pi/2 as rh + rl with
//    pi/2 in three words and one TwoSum: |r error| <= 2^-78 when q != 0,
//    <= 2^-102 |r| when q == 0 (then r = x with no cancellation).
//    |r| <= pi/4 + 2^-26.
//  * polynomials: truncated Taylor series (alternating, remainder below the
//    first omitted term: 2^-63 for sin, 2^-68 for cos, relative) evaluated
//    by Horner with FMA; accumulated rounding < 2.3 * 2^-53 (sin) and
//    3.3 * 2^-53 (cos) relative.
//  * total relative error < 2^-50 whenever !risky, where risky means q != 0
//    and |rh| < 2^-26 (then the reduction error could dominate).
// kFastRelError = 2^-47 claims 8x less than that, for margin.
#ifndef POSENC_CORE_NUMERICS_SINCOS_FAST_H_
#define POSENC_CORE_NUMERICS_SINCOS_FAST_H_

#include <cmath>
#include <cstdint>

#include "core/numerics/double_double.h"

namespace posenc {

inline constexpr double kFastRelError = 0x1p-47;
// Slack used by the boundary test: covers kFastRelError plus the rounding of
// y +- slack * |y| themselves.
inline constexpr double kFastCheckSlack = 0x1p-46;
inline constexpr double kRiskyReducedArg = 0x1p-26;

// pi/2 = kPio2W1 + kPio2W2 + kPio2W3 + kPio2W4 + O(2^-217); 2/pi rounded.
inline constexpr double kPio2W1 = 0x1.921fb54442d18p+0;
inline constexpr double kPio2W2 = 0x1.1a62633145c07p-54;
inline constexpr double kPio2W3 = -0x1.f1976b7ed8fbcp-110;
inline constexpr double kPio2W4 = 0x1.4cf98e804177dp-164;
inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

// Taylor coefficients (-1)^k / (2k+1)! for sin and (-1)^k / (2k)! for cos,
// each correctly rounded by the compiler's constant folding.
inline constexpr double kSinC[9] = {1.0,
                                    -1.0 / 6,
                                    1.0 / 120,
                                    -1.0 / 5040,
                                    1.0 / 362880,
                                    -1.0 / 39916800,
                                    1.0 / 6227020800,
                                    -1.0 / 1307674368000,
                                    1.0 / 355687428096000};
inline constexpr double kCosC[10] = {1.0,
                                     -1.0 / 2,
                                     1.0 / 24,
                                     -1.0 / 720,
                                     1.0 / 40320,
                                     -1.0 / 3628800,
                                     1.0 / 479001600,
                                     -1.0 / 87178291200,
                                     1.0 / 20922789888000,
                                     -1.0 / 6402373705728000};

struct FastSinCos {
  double sin;
  double cos;
  bool risky;  // the error bound does not hold; use a slower path
};

// Precondition: |pos * w0| <= 2^24 (pos an integer position, or a real
// point), w0 >= 2^-900, w1 the second word of the frequency.
inline FastSinCos FastSinCosScalar(double pos, double w0, double w1) {
  // Angle as xh + xl.
  const double xh = pos * w0;
  const double e0 = std::fma(pos, w0, -xh);  // exact
  const double xl = std::fma(pos, w1, e0);
  // Quadrant and reduced argument.
  const double q = std::nearbyint(xh * kTwoOverPi);
  const double t1 = std::fma(-q, kPio2W1, xh);  // exact (Sterbenz + fma)
  double a2h, a2l;
  TwoProd(q, kPio2W2, a2h, a2l);
  const double u = xl - a2h;
  double rh, rl;
  TwoSum(t1, u, rh, rl);
  rl = rl - std::fma(q, kPio2W3, a2l);
  const bool risky = q != 0 && std::fabs(rh) < kRiskyReducedArg;
  // Polynomials in z = rh^2.
  const double z = rh * rh;
  double ps = kSinC[8];
  for (int k = 7; k >= 1; --k) ps = std::fma(ps, z, kSinC[k]);
  double pc = kCosC[9];
  for (int k = 8; k >= 2; --k) pc = std::fma(pc, z, kCosC[k]);
  // sin(rh + rl) ~= rh + (rl + rh*z*ps); cos ~= 1 + (z*(-1/2 + z*pc) - rh*rl)
  const double s = rh + std::fma(rh * z, ps, rl);
  const double w = std::fma(z, std::fma(z, pc, -0.5), -rh * rl);
  const double c = 1.0 + w;
  // Undo the quadrant: x = r + q*pi/2.
  const int64_t qi = static_cast<int64_t>(q);
  double sin_x = (qi & 1) ? c : s;
  double cos_x = (qi & 1) ? s : c;
  if (qi & 2) sin_x = -sin_x;
  if ((qi + 1) & 2) cos_x = -cos_x;
  return {sin_x, cos_x, risky};
}

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_SINCOS_FAST_H_
