#include "core/plan/exact_sincos_mpfr.h"

#include <mpfr.h>

#include "absl/functional/function_ref.h"
#include "core/numerics/rounding.h"
#include "core/spec/exact_frequency.h"
#include "core/spec/rope.h"

namespace posenc {
namespace {

thread_local uint64_t ziv_iterations = 0;

// Rounds s (an approximation with |s - exact| <= err) to the dtype, or returns
// false if [s - err, s + err] straddles a rounding boundary.
bool RoundIfDecided(mpfr_srcptr s, mpfr_srcptr err, DType dtype,
                    uint64_t* bits) {
  const mpfr_prec_t prec = mpfr_get_prec(s) + 64;
  mpfr_t lo, hi;
  mpfr_inits2(prec, lo, hi, static_cast<mpfr_ptr>(nullptr));
  mpfr_sub(lo, s, err, MPFR_RNDD);  // lo <= s - err
  mpfr_add(hi, s, err, MPFR_RNDU);  // hi >= s + err
  // Rounding is monotone, so equal results at both ends decide every value
  // in between, including the exact one.
  const uint64_t a = RoundMpfrToBits(lo, dtype);
  const uint64_t b = RoundMpfrToBits(hi, dtype);
  mpfr_clears(lo, hi, static_cast<mpfr_ptr>(nullptr));
  if (a != b) return false;
  *bits = a;
  return true;
}

// The Ziv loop of both public functions: sin/cos(position * F), times the
// attention factor a when `scaled`. `frequency` sets its argument (any
// precision w) within 2^(12 - w) relative of F, `attention` within
// 2^(8 - w) of a; `tiny_angle_cos` is TinyAngleCosBits of the spec (false
// when unknown). Each iteration is charged to `budget` (unless null) first;
// false when it refuses one.
bool ZivSinCosBits(absl::FunctionRef<void(mpfr_ptr)> frequency,
                   absl::FunctionRef<void(mpfr_ptr)> attention, bool scaled,
                   absl::FunctionRef<bool(uint64_t*)> tiny_angle_cos,
                   double position, DType dtype, SlowPathBudget* budget,
                   uint64_t* sin_bits, uint64_t* cos_bits) {
  bool have_sin = false, have_cos = false;
  for (mpfr_prec_t w = 128;; w *= 2) {
    if (budget != nullptr && !budget->Charge(w)) {
      if (!have_sin) *sin_bits = 0;
      if (!have_cos) *cos_bits = 0;
      return false;
    }
    ++ziv_iterations;
    mpfr_t f, x, s, c, err, term, a, sa;
    mpfr_inits2(w, f, x, s, c, a, sa, static_cast<mpfr_ptr>(nullptr));
    if (scaled) attention(a);
    mpfr_inits2(64, err, term, static_cast<mpfr_ptr>(nullptr));
    // |f - F| <= 2^(12-w) F; x = RN(f * position) adds 2^-w relative:
    // |x - position * F| <= 2^(12.01-w) |x| < 2^(13 - w + EXP(x)).
    frequency(f);
    mpfr_mul_d(x, f, position, MPFR_RNDN);
    mpfr_sin_cos(s, c, x, MPFR_RNDN);  // each correctly rounded at w bits
    // |x| < 2^-28 here, so the exact angle is below 2^-27: tiny.
    if (!have_cos && mpfr_get_exp(x) <= -28 && tiny_angle_cos(cos_bits)) {
      have_cos = true;
    }
    // sin and cos are 1-Lipschitz, so each result is off by at most
    // |x error| + its own half-ulp (< 2^(EXP(result) - w)).
    for (int k = 0; k < 2; ++k) {
      const bool is_sin = k == 0;
      if (is_sin ? have_sin : have_cos) continue;
      mpfr_srcptr v = is_sin ? s : c;
      if (mpfr_zero_p(v)) continue;  // excluded by the preconditions; retry
      mpfr_set_ui_2exp(err, 1, 13 - w + mpfr_get_exp(x), MPFR_RNDU);
      mpfr_set_ui_2exp(term, 1, mpfr_get_exp(v) - w, MPFR_RNDU);
      mpfr_add(err, err, term, MPFR_RNDU);
      if (scaled) {
        // v * a with a within 2^(8-w): error <= err * a' + |v a| 2^(10-w),
        // a' = a (1 + 2^-60) covering a's own error.
        mpfr_mul(sa, v, a, MPFR_RNDN);
        mpfr_mul(err, err, a, MPFR_RNDU);
        mpfr_mul_d(err, err, 1 + 0x1p-60, MPFR_RNDU);
        mpfr_abs(term, sa, MPFR_RNDU);
        mpfr_mul_2si(term, term, 10 - w, MPFR_RNDU);
        mpfr_add(err, err, term, MPFR_RNDU);
        v = sa;
      }
      if (RoundIfDecided(v, err, dtype, is_sin ? sin_bits : cos_bits)) {
        (is_sin ? have_sin : have_cos) = true;
      }
    }
    mpfr_clears(f, x, s, c, err, term, a, sa, static_cast<mpfr_ptr>(nullptr));
    if (have_sin && have_cos) return true;
  }
}

}  // namespace

uint64_t ZivIterationsOnThisThread() { return ziv_iterations; }

bool TinyAngleCosBits(const TableSpec& spec, uint64_t* bits) {
  const bool scaled = spec.rope != nullptr && HasAttentionFactor(*spec.rope);
  mpfr_t a, lo, hi;
  mpfr_inits2(192, a, lo, hi, static_cast<mpfr_ptr>(nullptr));
  bool decided;
  if (!scaled || spec.rope->attention_factor != 0) {
    // a is a double (or 1), known exactly. The doubles nearest below a are
    // >= a 2^-53 away, so (a - a 2^-54, a) holds no double and no float64
    // midpoint: no rounding boundary of any dtype. a cos x lies in
    // (a - a 2^-55, a), and so does m = a (1 - 2^-56), exact at 192 bits.
    mpfr_set_d(a, scaled ? spec.rope->attention_factor : 1.0, MPFR_RNDN);
    mpfr_mul_2si(lo, a, -56, MPFR_RNDN);
    mpfr_sub(lo, a, lo, MPFR_RNDN);
    *bits = RoundMpfrToBits(lo, spec.dtype);
    decided = true;
  } else {
    // a from the formulas, within 2^-184 a: a cos x lies in
    // [a' (1 - 2^-54), a' (1 + 2^-183)], a' the approximation.
    AttentionFactorMpfr(*spec.rope, a);
    mpfr_mul_2si(lo, a, -54, MPFR_RNDU);
    mpfr_sub(lo, a, lo, MPFR_RNDD);
    mpfr_mul_2si(hi, a, -183, MPFR_RNDU);
    mpfr_add(hi, a, hi, MPFR_RNDU);
    const uint64_t b = RoundMpfrToBits(lo, spec.dtype);
    decided = b == RoundMpfrToBits(hi, spec.dtype);
    if (decided) *bits = b;
  }
  mpfr_clears(a, lo, hi, static_cast<mpfr_ptr>(nullptr));
  return decided;
}

void ExactSinCosBits(const TableSpec& spec, uint32_t i, uint32_t pos,
                     uint64_t* sin_bits, uint64_t* cos_bits) {
  const bool scaled = spec.rope != nullptr && HasAttentionFactor(*spec.rope);
  if (pos == 0 && !scaled) {  // sin(0) = +0 and cos(0) = 1 exactly
    *sin_bits = EncodeExact(0.0, spec.dtype);
    *cos_bits = EncodeExact(1.0, spec.dtype);
    return;
  }
  if (pos == 0) {  // a * sin(0) = +0, a * cos(0) = a
    *sin_bits = EncodeExact(0.0, spec.dtype);
    if (spec.rope->attention_factor != 0) {
      // An explicit factor is a double, so a is known exactly: round it
      // directly. An interval around it would never be decided when a is a
      // tie of the dtype (1 + 2^-11 in float16): the loop below would double
      // its precision until memory ran out.
      mpfr_t a;
      mpfr_init2(a, 64);
      mpfr_set_d(a, spec.rope->attention_factor, MPFR_RNDN);  // exact
      *cos_bits = RoundMpfrToBits(a, spec.dtype);
      mpfr_clear(a);
      return;
    }
    // A factor from the formulas (YaRN's ratio of logarithms, LongRoPE's
    // square root) is irrational or a short rational such as 1 or 3/2,
    // never a tie of a dtype: the loop ends.
    for (mpfr_prec_t w = 128;; w *= 2) {
      mpfr_t a, err;
      mpfr_init2(a, w);
      mpfr_init2(err, 64);
      AttentionFactorMpfr(*spec.rope, a);  // within 2^(8-w) relative
      mpfr_mul_2si(err, a, 9 - w, MPFR_RNDU);
      const bool done = RoundIfDecided(a, err, spec.dtype, cos_bits);
      mpfr_clears(a, err, static_cast<mpfr_ptr>(nullptr));
      if (done) return;
    }
  }
  ZivSinCosBits([&](mpfr_ptr f) { FrequencyMpfr(spec, i, f); },
                [&](mpfr_ptr a) { AttentionFactorMpfr(*spec.rope, a); }, scaled,
                [&](uint64_t* bits) { return TinyAngleCosBits(spec, bits); },
                static_cast<double>(pos), spec.dtype, /*budget=*/nullptr,
                sin_bits, cos_bits);
}

bool ExactSinCosBitsOfReal(absl::FunctionRef<void(mpfr_ptr)> frequency,
                           double x, DType dtype, SlowPathBudget* budget,
                           uint64_t* sin_bits, uint64_t* cos_bits) {
  // cos x for a tiny x rounds as 1 - 2^-56 does (TinyAngleCosBits, a = 1).
  const auto tiny_angle_cos = [dtype](uint64_t* bits) {
    mpfr_t m;
    mpfr_init2(m, 64);
    mpfr_set_ui_2exp(m, 1, -56, MPFR_RNDN);
    mpfr_ui_sub(m, 1, m, MPFR_RNDN);  // exact
    *bits = RoundMpfrToBits(m, dtype);
    mpfr_clear(m);
    return true;
  };
  return ZivSinCosBits(
      frequency, [](mpfr_ptr) {}, false, tiny_angle_cos, x, dtype, budget,
      sin_bits, cos_bits);
}

}  // namespace posenc
