#include "core/numerics/rounding.h"

#include <algorithm>
#include <cmath>

namespace posenc {

FloatFormat FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {24, -126, 8};
    case DType::kFloat64:
      return {53, -1022, 11};
    case DType::kFloat16:
      return {11, -14, 5};
    case DType::kBFloat16:
      return {8, -126, 8};
  }
  return {24, -126, 8};
}

uint64_t EncodeExact(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case DType::kFloat32: {
      const float f = static_cast<float>(v);  // exact by precondition
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DType::kFloat16:
    case DType::kBFloat16:
      break;
  }
  const FloatFormat fmt = FormatOf(dtype);
  const int width = 1 + fmt.exponent_bits + fmt.precision - 1;
  const uint64_t sign = std::signbit(v) ? uint64_t{1} << (width - 1) : 0;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  const int frac_bits = fmt.precision - 1;
  if (e >= fmt.min_exponent) {
    const uint64_t biased = static_cast<uint64_t>(e - fmt.min_exponent + 1);
    const uint64_t mant = static_cast<uint64_t>(std::ldexp(a, frac_bits - e)) -
                          (uint64_t{1} << frac_bits);
    return sign | (biased << frac_bits) | mant;
  }
  // Subnormal: a is a multiple of 2^(min_exponent - frac_bits).
  return sign |
         static_cast<uint64_t>(std::ldexp(a, frac_bits - fmt.min_exponent));
}

uint64_t RoundDoubleToBits(double y, DType dtype) {
  if (dtype == DType::kFloat64) return EncodeExact(y, dtype);
  if (dtype == DType::kFloat32) {
    // The conversion is one IEEE operation: correctly rounded (RNE).
    return EncodeExact(static_cast<float>(y), dtype);
  }
  const FloatFormat fmt = FormatOf(dtype);
  const double a = std::fabs(y);
  if (a == 0) return EncodeExact(y, dtype);
  // Quantum of the result: 2^u, u >= the subnormal quantum.
  const int e = std::ilogb(a);
  const int u = std::max(e, fmt.min_exponent) - (fmt.precision - 1);
  // Scaling by 2^-u is exact and the result is < 2^precision, so
  // nearbyint (ties-to-even in the default mode) rounds exactly once.
  const double r = std::ldexp(std::nearbyint(std::ldexp(a, -u)), u);
  return EncodeExact(std::copysign(r, y), dtype);
}

uint64_t RoundMpfrToBits(mpfr_srcptr x, DType dtype) {
  const int negative = mpfr_signbit(x);
  if (mpfr_zero_p(x)) return EncodeExact(negative ? -0.0 : 0.0, dtype);
  const FloatFormat fmt = FormatOf(dtype);
  // |x| = m * 2^E, m in [1/2, 1): leading bit at 2^(E-1). Bits kept run from
  // there down to the quantum 2^(min_exponent - precision + 1).
  const mpfr_exp_t lead = mpfr_get_exp(x) - 1;
  const mpfr_exp_t quantum_exp = fmt.min_exponent - fmt.precision + 1;
  const mpfr_exp_t kept =
      std::min<mpfr_exp_t>(fmt.precision, lead - quantum_exp + 1);
  double magnitude;
  if (kept >= 1) {
    mpfr_t t;
    mpfr_init2(t, static_cast<mpfr_prec_t>(kept));
    mpfr_abs(t, x, MPFR_RNDN);             // one rounding, ties to even
    magnitude = mpfr_get_d(t, MPFR_RNDN);  // exact: fits in a double
    mpfr_clear(t);
  } else if (kept == 0) {
    // |x| in [2^(q-1), 2^q): rounds up to 2^q unless exactly the tie,
    // which goes to the even neighbour 0.
    mpfr_t half;
    mpfr_init2(half, 2);
    mpfr_set_ui_2exp(half, 1, quantum_exp - 1, MPFR_RNDN);
    magnitude = mpfr_cmpabs(x, half) > 0 ? std::ldexp(1.0, quantum_exp) : 0.0;
    mpfr_clear(half);
  } else {
    magnitude = 0.0;  // below half the smallest subnormal
  }
  return EncodeExact(negative ? -magnitude : magnitude, dtype);
}

}  // namespace posenc
