#include "tests/numerics/library_reference.h"

#include <mpfr.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

// Computes v = `value(p)` at precision p, with a relative error below
// 2^(16 - p) (each formula below takes a handful of correctly rounded
// steps), and rounds it to dtype once both ends of that error interval
// round alike; else retries at twice the precision. No exact zero arises
// here (the callers send angles that are no nonzero multiples of
// pi / 2) but t = 0, whose sin is exactly +0 in MPFR as well, so a value's
// sign and rounding are decided by enough bits.
uint64_t RoundDecided(const std::function<void(mpfr_ptr, mpfr_prec_t)>& value,
                      DType dtype) {
  for (mpfr_prec_t p = 256; p <= 16384; p *= 2) {
    mpfr_t v, lo, hi;
    mpfr_inits2(p + 8, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    value(v, p);
    if (mpfr_zero_p(v)) {  // sin(0): exactly +0
      const uint64_t zero = RoundMpfrToBits(v, dtype);
      mpfr_clears(v, lo, hi, static_cast<mpfr_ptr>(nullptr));
      return zero;
    }
    mpfr_set(lo, v, MPFR_RNDN);
    mpfr_set(hi, v, MPFR_RNDN);
    mpfr_mul_2si(lo, lo, 16 - p, MPFR_RNDN);  // |v| 2^(16 - p)
    mpfr_abs(lo, lo, MPFR_RNDN);
    mpfr_add(hi, v, lo, MPFR_RNDU);
    mpfr_sub(lo, v, lo, MPFR_RNDD);
    const uint64_t a = RoundMpfrToBits(lo, dtype);
    const uint64_t b = RoundMpfrToBits(hi, dtype);
    mpfr_clears(v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    if (a == b) return a;
  }
  throw std::runtime_error("library reference: value not decided");
}

uint64_t ZeroBits() { return 0; }  // +0 in every dtype

uint64_t DoubleBits(double x, DType dtype) {
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_d(v, x, MPFR_RNDN);
  const uint64_t bits = RoundMpfrToBits(v, dtype);
  mpfr_clear(v);
  return bits;
}

// sin or cos of t * m * exp(-ln(max_period) * i / (half - shift)) at
// precision p (m the multiplier the library applies: scale or time_factor;
// half - shift exact).
void TimestepValue(double t, double m, double max_period, uint32_t i,
                   uint32_t half, double shift, bool is_sin, mpfr_ptr out,
                   mpfr_prec_t p) {
  mpfr_t e, a;
  mpfr_inits2(p + 1200, e, a, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(a, max_period, MPFR_RNDN);
  mpfr_log(e, a, MPFR_RNDN);  // ln(max_period)
  mpfr_mul_ui(e, e, i, MPFR_RNDN);
  mpfr_set_ui(a, half, MPFR_RNDN);
  mpfr_sub_d(a, a, shift, MPFR_RNDN);  // exact at p + 1200 bits
  mpfr_div(e, e, a, MPFR_RNDN);
  mpfr_neg(e, e, MPFR_RNDN);
  mpfr_exp(e, e, MPFR_RNDN);  // the frequency
  mpfr_mul_d(e, e, t, MPFR_RNDN);
  mpfr_mul_d(e, e, m, MPFR_RNDN);
  if (is_sin) {
    mpfr_sin(out, e, MPFR_RNDN);
  } else {
    mpfr_cos(out, e, MPFR_RNDN);
  }
  mpfr_clears(e, a, static_cast<mpfr_ptr>(nullptr));
}

}  // namespace

std::vector<uint64_t> DiffusersTimestepRow(double t, uint32_t embedding_dim,
                                           bool flip_sin_to_cos,
                                           double downscale_freq_shift,
                                           double scale, double max_period,
                                           DType dtype) {
  const uint32_t half = embedding_dim / 2;
  std::vector<uint64_t> sin_part, cos_part;
  for (uint32_t i = 0; i < half; ++i) {
    for (bool is_sin : {true, false}) {
      const uint64_t bits = RoundDecided(
          [&](mpfr_ptr v, mpfr_prec_t p) {
            TimestepValue(t, scale, max_period, i, half, downscale_freq_shift,
                          is_sin, v, p);
          },
          dtype);
      (is_sin ? sin_part : cos_part).push_back(bits);
    }
  }
  std::vector<uint64_t> row = flip_sin_to_cos ? cos_part : sin_part;
  const std::vector<uint64_t>& second = flip_sin_to_cos ? sin_part : cos_part;
  row.insert(row.end(), second.begin(), second.end());
  if (embedding_dim % 2 == 1) row.push_back(ZeroBits());
  return row;
}

std::vector<uint64_t> GuidedDiffusionTimestepRow(double t, uint32_t dim,
                                                 double max_period,
                                                 double time_factor,
                                                 DType dtype) {
  const uint32_t half = dim / 2;
  std::vector<uint64_t> row;
  for (bool is_sin : {false, true}) {  // cat([cos(args), sin(args)])
    for (uint32_t i = 0; i < half; ++i) {
      row.push_back(RoundDecided(
          [&](mpfr_ptr v, mpfr_prec_t p) {
            TimestepValue(t, time_factor, max_period, i, half, 0, is_sin, v, p);
          },
          dtype));
    }
  }
  if (dim % 2 == 1) row.push_back(ZeroBits());
  return row;
}

std::vector<uint64_t> NerfEncodingRow(const std::vector<double>& x,
                                      uint32_t num_frequencies,
                                      double min_freq_exp, double max_freq_exp,
                                      bool include_input, DType dtype) {
  std::vector<uint64_t> row;
  for (bool shifted : {false, true}) {  // sin(scaled), sin(scaled + pi/2)
    for (double xc : x) {
      for (uint32_t k = 0; k < num_frequencies; ++k) {
        row.push_back(RoundDecided(
            [&](mpfr_ptr v, mpfr_prec_t p) {
              mpfr_t e, a, pi;
              mpfr_inits2(p + 1200, e, a, pi, static_cast<mpfr_ptr>(nullptr));
              // linspace(min, max, n)[k] = min + k (max - min) / (n - 1).
              mpfr_set_d(e, max_freq_exp, MPFR_RNDN);
              mpfr_sub_d(e, e, min_freq_exp, MPFR_RNDN);
              if (num_frequencies > 1) {
                mpfr_mul_ui(e, e, k, MPFR_RNDN);
                mpfr_div_ui(e, e, num_frequencies - 1, MPFR_RNDN);
              } else {
                mpfr_set_ui(e, 0, MPFR_RNDN);
              }
              mpfr_add_d(e, e, min_freq_exp, MPFR_RNDN);
              mpfr_ui_pow(e, 2, e, MPFR_RNDN);
              mpfr_const_pi(pi, MPFR_RNDN);
              mpfr_mul_d(a, pi, 2 * xc, MPFR_RNDN);  // 2 pi x (2x exact)
              mpfr_mul(a, a, e, MPFR_RNDN);
              if (shifted) {
                mpfr_div_2ui(pi, pi, 1, MPFR_RNDN);
                mpfr_add(a, a, pi, MPFR_RNDN);
              }
              mpfr_sin(v, a, MPFR_RNDN);
              mpfr_clears(e, a, pi, static_cast<mpfr_ptr>(nullptr));
            },
            dtype));
      }
    }
  }
  if (include_input) {
    for (double xc : x) row.push_back(DoubleBits(xc, dtype));
  }
  return row;
}

}  // namespace posenc::testing
