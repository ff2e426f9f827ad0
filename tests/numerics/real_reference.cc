#include "tests/numerics/real_reference.h"

#include <mpfr.h>

#include <cstring>
#include <stdexcept>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

// f_i (scale included) at precision p.
void Frequency(const RealEncodingSpec& spec, uint32_t i, mpfr_ptr f,
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
  mpfr_clears(e, b, static_cast<mpfr_ptr>(nullptr));
}

}  // namespace

uint64_t RealReferenceBits(const RealEncodingSpec& spec, uint32_t i, double x,
                           bool is_sin) {
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
    } else if (mpfr_zero_p(v) || mpfr_get_exp(v) < -280 + mpfr_get_exp(a)) {
      mpfr_set_ui(v, 0, MPFR_RNDN);  // exactly zero: +0
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

size_t RealColumnOf(const RealEncodingSpec& spec, uint32_t c, uint32_t i,
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

uint64_t RealElementBits(const RealEncodingSpec& spec, const std::byte* row,
                         size_t col) {
  const size_t size = DTypeSize(spec.dtype);
  uint64_t bits = 0;
  std::memcpy(&bits, row + col * size, size);  // little-endian host
  return bits;
}

}  // namespace posenc::testing
