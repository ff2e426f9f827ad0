#include "tests/numerics/real_reference.h"

#include <mpfr.h>

#include <cstring>
#include <stdexcept>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

// f_i (scale included) at precision p.
void Frequency(const EncodingSpec& spec, uint32_t i, mpfr_ptr f,
               mpfr_prec_t p) {
  mpfr_t e, b;
  mpfr_init2(e, p + 1200);  // room for the exact half - shift
  mpfr_init2(b, p);
  if (spec.scheme == FrequencyScheme::kExponential) {
    // diffusers: exponent = -ln(max_period) * i / (half - shift).
    mpfr_set_ui(e, spec.dim / 2, MPFR_RNDN);
    mpfr_sub_d(e, e, spec.shift, MPFR_RNDN);
    mpfr_ui_div(e, i, e, MPFR_RNDN);
    mpfr_neg(e, e, MPFR_RNDN);
    mpfr_set_d(b, spec.max_period, MPFR_RNDN);
    mpfr_pow(f, b, e, MPFR_RNDN);
  } else {
    // nerfstudio: 2 pi x * 2^linspace(min, max, n).
    const uint32_t n = spec.num_frequencies;
    mpfr_set_d(e, spec.max_freq_exp, MPFR_RNDN);
    mpfr_sub_d(e, e, spec.min_freq_exp, MPFR_RNDN);
    if (n > 1) {
      mpfr_mul_ui(e, e, i, MPFR_RNDN);
      mpfr_div_ui(e, e, n - 1, MPFR_RNDN);
    } else {
      mpfr_set_ui(e, 0, MPFR_RNDN);
    }
    mpfr_add_d(e, e, spec.min_freq_exp, MPFR_RNDN);
    mpfr_ui_pow(f, 2, e, MPFR_RNDN);
    mpfr_const_pi(b, MPFR_RNDN);
    mpfr_mul(f, f, b, MPFR_RNDN);
    mpfr_mul_ui(f, f, 2, MPFR_RNDN);
  }
  mpfr_mul_d(f, f, spec.scale, MPFR_RNDN);
  mpfr_div_ui(f, f, spec.scale_divisor, MPFR_RNDN);  // a grid's p / q
  mpfr_clears(e, b, static_cast<mpfr_ptr>(nullptr));
}

// Whether scale * x * f_i is exactly m pi / 2 for an integer m (then
// sin/cos are exactly 0 or +-1), and m mod 4. Decided exactly: the
// exponential frequencies are algebraic (max_period^rational) and pi is
// not, so never; an octave frequency 2 pi 2^e_i only with an integer e_i
// (2^e is irrational for a non-integer rational e: the exponents are
// rationals, doubles and n - 1), when 4 x scale 2^e_i is an integer.
bool WholeQuarterTurns(const EncodingSpec& spec, uint32_t i, double x,
                       int* quadrant) {
  if (spec.scheme != FrequencyScheme::kOctaves) return false;
  // Doubles span 2^-1074..2^1024: 2200 bits hold any sum of two exactly.
  constexpr mpfr_prec_t kExact = 2200;
  mpfr_t e, t;
  mpfr_inits2(kExact, e, t, static_cast<mpfr_ptr>(nullptr));
  bool whole = false;
  int inexact = mpfr_set_d(e, spec.max_freq_exp, MPFR_RNDN);
  inexact |= mpfr_sub_d(e, e, spec.min_freq_exp, MPFR_RNDN);
  const uint32_t n = spec.num_frequencies;
  if (n > 1) {
    inexact |= mpfr_mul_ui(e, e, i, MPFR_RNDN);
    inexact |= mpfr_div_ui(e, e, n - 1, MPFR_RNDN);  // inexact: not whole
  } else {
    mpfr_set_ui(e, 0, MPFR_RNDN);
  }
  inexact |= mpfr_add_d(e, e, spec.min_freq_exp, MPFR_RNDN);
  if (inexact == 0 && mpfr_integer_p(e) && mpfr_fits_slong_p(e, MPFR_RNDN)) {
    const long k = mpfr_get_si(e, MPFR_RNDN);
    if (k > -4000 && k < 4000) {
      // t = x * scale * 2^(k + 2), exact (a product of two doubles), then
      // over scale_divisor: a whole number iff it divides t exactly.
      mpfr_set_d(t, x, MPFR_RNDN);
      mpfr_mul_d(t, t, spec.scale, MPFR_RNDN);
      mpfr_mul_2si(t, t, k + 2, MPFR_RNDN);
      if (mpfr_integer_p(t) && spec.scale_divisor != 1) {
        mpfr_t q;
        mpfr_init2(q, kExact);
        mpfr_fmod_ui(q, t, spec.scale_divisor, MPFR_RNDN);  // exact
        const bool divides = mpfr_zero_p(q);
        mpfr_clear(q);
        if (divides) {
          mpfr_div_ui(t, t, spec.scale_divisor, MPFR_RNDN);  // exact
        } else {
          mpfr_set_d(t, 0.5, MPFR_RNDN);  // not whole
        }
      }
      if (mpfr_integer_p(t)) {
        mpfr_fmod_ui(t, t, 4, MPFR_RNDN);  // sign of t: in (-4, 4)
        *quadrant = (static_cast<int>(mpfr_get_si(t, MPFR_RNDN)) + 4) % 4;
        whole = true;
      }
    }
  }
  mpfr_clears(e, t, static_cast<mpfr_ptr>(nullptr));
  return whole;
}

}  // namespace

uint64_t RealReferenceBits(const EncodingSpec& spec, uint32_t i, double x,
                           bool is_sin) {
  int quadrant = 0;
  if (x != 0 && WholeQuarterTurns(spec, i, x, &quadrant)) {
    static constexpr int kSin[4] = {0, 1, 0, -1};
    static constexpr int kCos[4] = {1, 0, -1, 0};
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_si(v, is_sin ? kSin[quadrant] : kCos[quadrant], MPFR_RNDN);
    const uint64_t bits = RoundMpfrToBits(v, spec.dtype);  // zeros are +0
    mpfr_clear(v);
    return bits;
  }
  for (mpfr_prec_t p = 320; p <= 20000; p *= 2) {
    mpfr_t f, a, v, lo, hi;
    mpfr_inits2(p + 64, f, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    Frequency(spec, i, f, p + 64);
    mpfr_mul_d(a, f, x, MPFR_RNDN);
    if (is_sin) {
      mpfr_sin(v, a, MPFR_RNDN);
    } else {
      mpfr_cos(v, a, MPFR_RNDN);
    }
    uint64_t bits;
    bool done = false;
    if (mpfr_zero_p(a)) {  // x = 0: sin 0 = +0, cos 0 = 1 exactly
      mpfr_set_ui(v, is_sin ? 0 : 1, MPFR_RNDN);
      bits = RoundMpfrToBits(v, spec.dtype);
      done = true;
    } else {
      // The p-bit inputs leave v within ~2^(EXP(a) - p + 8): round both ends.
      mpfr_set_ui_2exp(lo, 1, mpfr_get_exp(a) - p + 16, MPFR_RNDN);
      mpfr_add(hi, v, lo, MPFR_RNDN);
      mpfr_sub(lo, v, lo, MPFR_RNDN);
      const uint64_t b0 = RoundMpfrToBits(lo, spec.dtype);
      const uint64_t b1 = RoundMpfrToBits(hi, spec.dtype);
      if (b0 == b1) {
        bits = b0;
        done = true;
      }
    }
    mpfr_clears(f, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    if (done) return bits;
  }
  throw std::runtime_error("RealReferenceBits: undecided at 20000 bits");
}

size_t RealColumnOf(const EncodingSpec& spec, uint32_t c, uint32_t i,
                    bool is_sin) {
  const size_t half = spec.scheme == FrequencyScheme::kExponential
                          ? spec.dim / 2
                          : spec.num_frequencies;
  const size_t pairs = half * spec.coordinates;
  const size_t j = c * half + i;
  switch (spec.layout) {
    case Layout::kConcatSinCos:
      return is_sin ? j : pairs + j;
    case Layout::kConcatCosSin:
      return is_sin ? pairs + j : j;
    default:
      return is_sin ? 2 * j : 2 * j + 1;
  }
}

uint64_t RealElementBits(const EncodingSpec& spec, const std::byte* row,
                         size_t col) {
  const size_t size = DTypeSize(spec.dtype);
  uint64_t bits = 0;
  std::memcpy(&bits, row + col * size, size);  // little-endian host
  return bits;
}

}  // namespace posenc::testing
