// Error-free transformations and double-double helpers used by the exact
// encoding paths.
//
// Every function is pure (no state) and therefore thread-safe. The exactness
// claims below hold only with IEEE-754 binary64 arithmetic in round-to-nearest
// mode, no flush-to-zero, no overflow/underflow, and no compiler contraction of
// a*b+c into an FMA (core/ is built with -ffp-contract=off).
#ifndef POSENC_CORE_NUMERICS_DOUBLE_DOUBLE_H_
#define POSENC_CORE_NUMERICS_DOUBLE_DOUBLE_H_

#include <cmath>

namespace posenc {

// An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2 (when normalised).
struct DoubleDouble {
  double hi = 0;
  double lo = 0;
};

// s + e == a + b exactly, s = RN(a + b) (Knuth's TwoSum, any magnitudes).
inline void TwoSum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// s + e == a + b exactly, s = RN(a + b). Precondition: a == 0 or
// |a| >= |b| (Dekker's FastTwoSum).
inline void FastTwoSum(double a, double b, double& s, double& e) {
  s = a + b;
  e = b - (s - a);
}

// p + e == a * b exactly, p = RN(a * b) (needs a correctly rounded fma).
inline void TwoProd(double a, double b, double& p, double& e) {
  p = a * b;
  e = std::fma(a, b, -p);
}

// Double-double sum, relative error <= 3 * 2^-106 (Joldes, Muller, Popescu
// 2017, "AccurateDWPlusDW").
inline DoubleDouble DdAdd(DoubleDouble x, DoubleDouble y) {
  double sh, sl, th, tl;
  TwoSum(x.hi, y.hi, sh, sl);
  TwoSum(x.lo, y.lo, th, tl);
  double c = sl + th;
  double vh, vl;
  FastTwoSum(sh, c, vh, vl);
  double w = tl + vl;
  DoubleDouble r;
  FastTwoSum(vh, w, r.hi, r.lo);
  return r;
}

// Double-double product, relative error <= 5 * 2^-106 (JMP 2017,
// "DWTimesDW3" with fma: bound 4u^2; we use 5u^2 for margin).
inline DoubleDouble DdMul(DoubleDouble x, DoubleDouble y) {
  double ch, cl;
  TwoProd(x.hi, y.hi, ch, cl);
  double tl0 = x.lo * y.lo;
  double tl1 = std::fma(x.hi, y.lo, tl0);
  double cl2 = std::fma(x.lo, y.hi, tl1);
  double cl3 = cl + cl2;
  DoubleDouble r;
  FastTwoSum(ch, cl3, r.hi, r.lo);
  return r;
}

// Double-double times double, relative error <= 2 * 2^-106 (JMP 2017,
// "DWTimesFP3").
inline DoubleDouble DdMulD(DoubleDouble x, double y) {
  double ch, cl1;
  TwoProd(x.hi, y, ch, cl1);
  double cl3 = std::fma(x.lo, y, cl1);
  DoubleDouble r;
  FastTwoSum(ch, cl3, r.hi, r.lo);
  return r;
}

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_DOUBLE_DOUBLE_H_
