#include "core/exact_frequency.h"

namespace posenc {
namespace {

// RAII holder for an mpfr_t.
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

// Splits f into w0 + w1 + w2 (each the nearest double to what is left), so
// |f - (w0 + w1 + w2)| <= 2^-159 |f|. `rest` is scratch of f's precision.
FrequencyWords SplitIntoWords(mpfr_srcptr f, mpfr_ptr rest) {
  // The remainders are exact: each subtraction cancels the leading bits.
  FrequencyWords w;
  w.w0 = mpfr_get_d(f, MPFR_RNDN);
  mpfr_sub_d(rest, f, w.w0, MPFR_RNDN);
  w.w1 = mpfr_get_d(rest, MPFR_RNDN);
  mpfr_sub_d(rest, rest, w.w1, MPFR_RNDN);
  w.w2 = mpfr_get_d(rest, MPFR_RNDN);
  return w;
}

}  // namespace

uint32_t FrequencyDenominator(const TableSpec& spec) {
  const uint32_t half = spec.d / 2;
  return spec.frequency == Frequency::kPaper ? half : half - 1;
}

void FrequencyMpfr(const TableSpec& spec, uint32_t i, mpfr_ptr out) {
  if (i == 0) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  // y = ln(base) * i / den with three roundings: relative error <= 3.01u,
  // u = 2^-w; |y| <= ln(DBL_MAX) < 710, so the absolute error of y is
  // < 2^11.1 u, and exp(-y) then has relative error < 2^11.2 u plus its own
  // rounding u: total < 2^12 u.
  mpfr_set_d(out, spec.base, MPFR_RNDN);  // exact: w >= 53
  mpfr_log(out, out, MPFR_RNDN);
  mpfr_mul_ui(out, out, i, MPFR_RNDN);
  mpfr_div_ui(out, out, FrequencyDenominator(spec), MPFR_RNDN);
  mpfr_neg(out, out, MPFR_RNDN);
  mpfr_exp(out, out, MPFR_RNDN);
}

std::vector<FrequencyWords> ExactFrequencies(const TableSpec& spec) {
  const uint32_t half = spec.d / 2;
  std::vector<FrequencyWords> words(half);
  if (half == 0) return words;
  words[0] = {1.0, 0.0, 0.0};
  if (half == 1) return words;
  // 192 bits (three limbs) is the least that keeps the words within
  // 2^-158: a one-row call on a new family pays for this loop, d/2 steps.
  constexpr mpfr_prec_t kPrec = 192;
  Mpfr g(kPrec), f(kPrec), rest(kPrec);
  FrequencyMpfr(spec, 1, g.get());  // relative error <= 2^12 * 2^-192
  mpfr_set(f.get(), g.get(), MPFR_RNDN);
  for (uint32_t i = 1; i < half; ++i) {
    // f_i = g^i: i - 1 further roundings of 2^-192 and the error of g to the
    // power i: relative error <= i * (2^-180 + 2^-192) < 2^-164.9
    // (i < 2^15); with the split's 2^-159, the words are within 2^-158.9.
    if (i > 1) mpfr_mul(f.get(), f.get(), g.get(), MPFR_RNDN);
    words[i] = SplitIntoWords(f.get(), rest.get());
  }
  return words;
}

}  // namespace posenc
