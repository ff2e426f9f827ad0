#include "core/numerics/sincos_double_double.h"

#include <mpfr.h>

#include <cmath>
#include <cstdint>

#include "core/numerics/sincos_fast.h"

namespace posenc {
namespace {

// Taylor coefficients as double-doubles: sin_c[k] = (-1)^k/(2k+1)!,
// cos_c[k] = (-1)^k/(2k)!, k <= 13; each within 2^-106 relative.
using TaylorTables = DoubleDoubleTaylor;

TaylorTables BuildTaylorTables() {
  TaylorTables t;
  mpfr_t v, rest;
  mpfr_inits2(256, v, rest, static_cast<mpfr_ptr>(nullptr));
  auto split = [&](int n, int sign) {
    mpfr_fac_ui(v, n, MPFR_RNDN);  // exact: n! < 2^256
    mpfr_ui_div(v, 1, v, MPFR_RNDN);
    if (sign < 0) mpfr_neg(v, v, MPFR_RNDN);
    DoubleDouble d;
    d.hi = mpfr_get_d(v, MPFR_RNDN);
    mpfr_sub_d(rest, v, d.hi, MPFR_RNDN);
    d.lo = mpfr_get_d(rest, MPFR_RNDN);
    return d;
  };
  for (int k = 0; k < 14; ++k) {
    const int sign = (k % 2) ? -1 : 1;
    t.sin_c[k] = split(2 * k + 1, sign);
    t.cos_c[k] = split(2 * k, sign);
  }
  mpfr_clears(v, rest, static_cast<mpfr_ptr>(nullptr));
  return t;
}

const TaylorTables& Taylor() {
  static const TaylorTables tables = BuildTaylorTables();
  return tables;
}

// Sum over k in [first, 13] of c[k] * z^(k - first) by Horner: terms with
// k >= 9 in double (their total is < 2^-56 of the result, so their rounding
// is < 2^-108 of it), then double-double steps.
DoubleDouble HornerDd(const DoubleDouble* c, int first, DoubleDouble z) {
  double tail = c[13].hi;
  for (int k = 12; k >= 9; --k) tail = std::fma(tail, z.hi, c[k].hi);
  DoubleDouble acc{tail, 0.0};
  for (int k = 8; k >= first; --k) acc = DdAdd(DdMul(acc, z), c[k]);
  return acc;
}

}  // namespace

const DoubleDoubleTaylor& DoubleDoubleTaylorTables() { return Taylor(); }

DoubleDoubleSinCos DoubleDoubleSinCosOf(double pos, const FrequencyWords& f) {
  // Angle: x = x0 + (e0 + x1) + (e1 + x2), |each group| ~ 2^24, 2^-29, 2^-82.
  double x0, e0, x1, e1;
  TwoProd(pos, f.w0, x0, e0);
  TwoProd(pos, f.w1, x1, e1);
  const double x2 = pos * f.w2;
  // Reduction by q * pi/2, pi/2 = P1 + P2 + P3 + P4.
  const double q = std::nearbyint(x0 * kTwoOverPi);
  const double t1 = std::fma(-q, kPio2W1, x0);  // exact, as in sincos_fast.h
  double a2, b2, a3, b3;
  TwoProd(q, kPio2W2, a2, b2);
  TwoProd(q, kPio2W3, a3, b3);
  // Middle terms (~2^-29) summed without error, then small terms (~2^-82).
  double m1, m1e, m2, m2e;
  TwoSum(e0, x1, m1, m1e);
  TwoSum(m1, -a2, m2, m2e);
  const double small =
      ((m1e + m2e) + (e1 + x2)) - ((b2 + a3) + (b3 + q * kPio2W4));
  double rh, rl;
  TwoSum(t1, m2, rh, rl);
  FastTwoSum(rh, rl + small, rh, rl);
  const bool risky = q != 0 && std::fabs(rh) < 0x1p-28;

  const TaylorTables& tt = Taylor();
  const DoubleDouble r{rh, rl};
  const DoubleDouble z = DdMul(r, r);
  // sin r = r + r * (z * Ps(z)), Ps = sum_{k>=1} sin_c[k] z^(k-1).
  const DoubleDouble ps = HornerDd(tt.sin_c, 1, z);
  const DoubleDouble s = DdAdd(r, DdMul(r, DdMul(z, ps)));
  // cos r = 1 + z * Pc(z), Pc = sum_{k>=1} cos_c[k] z^(k-1).
  const DoubleDouble pc = HornerDd(tt.cos_c, 1, z);
  const DoubleDouble c = DdAdd(DoubleDouble{1.0, 0.0}, DdMul(z, pc));

  const int64_t qi = static_cast<int64_t>(q);
  DoubleDouble sin_x = (qi & 1) ? c : s;
  DoubleDouble cos_x = (qi & 1) ? s : c;
  if (qi & 2) sin_x = {-sin_x.hi, -sin_x.lo};
  if ((qi + 1) & 2) cos_x = {-cos_x.hi, -cos_x.lo};
  return {sin_x, cos_x, risky};
}

bool RoundDoubleDoubleToDouble(DoubleDouble y, double* out) {
  const double slack = kDoubleDoubleCheckSlack * std::fabs(y.hi);
  // RN(hi + t) is the correctly rounded sum, monotone in t; slack covers the
  // error bound and the rounding of lo +- slack.
  const double lo = y.hi + (y.lo - slack);
  const double hi = y.hi + (y.lo + slack);
  if (lo != hi || std::signbit(lo) != std::signbit(hi)) return false;
  *out = lo;
  return true;
}

}  // namespace posenc
