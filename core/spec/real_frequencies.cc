#include "core/spec/real_frequencies.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/numerics/mpfr_value.h"

namespace posenc {
namespace {

// Exact differences of doubles within the validated ranges need at most
// ~1100 bits (magnitudes < 2^16 down to 2^-1074).
constexpr mpfr_prec_t kExactPrec = 1300;

// half - shift, exactly.
void ExponentDenominator(const EncodingSpec& spec, mpfr_ptr den) {
  mpfr_set_ui(den, spec.dim / 2, MPFR_RNDN);
  mpfr_sub_d(den, den, spec.shift, MPFR_RNDN);  // exact at kExactPrec
}

// max_period^(-i / (half - shift)) to within 2^(12 - w) relative, w the
// precision of `out`: three roundings of y = i ln(max_period) / den
// (3.01 u relative, u = 2^-(w + 40)); the range check bounds |y| < 2^10,
// so exp(-y) is within 2^11.7 u + u; then out's own rounding 2^-w.
void ExponentialPower(const EncodingSpec& spec, uint32_t i, mpfr_ptr out) {
  const mpfr_prec_t w = mpfr_get_prec(out) + 40;
  MpfrValue den(kExactPrec), y(w);
  ExponentDenominator(spec, den);
  mpfr_set_d(y, spec.max_period, MPFR_RNDN);
  mpfr_log(y, y, MPFR_RNDN);
  mpfr_mul_ui(y, y, i, MPFR_RNDN);
  mpfr_div(y, y, den, MPFR_RNDN);
  mpfr_neg(y, y, MPFR_RNDN);
  mpfr_exp(out, y, MPFR_RNDN);
}

// e_k = min + k (max - min) / (n - 1) at `out`'s precision w: absolute
// error <= 2^(12 - w) (terms below 2^11).
void OctaveExponent(const EncodingSpec& spec, uint32_t k, mpfr_ptr out) {
  if (spec.num_frequencies == 1 || k == 0) {
    mpfr_set_d(out, spec.min_freq_exp, MPFR_RNDN);
    return;
  }
  MpfrValue diff(kExactPrec);
  mpfr_set_d(diff, spec.max_freq_exp, MPFR_RNDN);
  mpfr_sub_d(diff, diff, spec.min_freq_exp, MPFR_RNDN);  // exact
  mpfr_mul_ui(out, diff, k, MPFR_RNDN);
  mpfr_div_ui(out, out, spec.num_frequencies - 1, MPFR_RNDN);
  mpfr_add_d(out, out, spec.min_freq_exp, MPFR_RNDN);
}

// 2 pi scale 2^(e_k) / scale_divisor within 2^(13 - w') relative,
// w' = prec(out) + 40, before out's own rounding.
void OctaveFrequency(const EncodingSpec& spec, uint32_t k, mpfr_ptr out) {
  const mpfr_prec_t w = mpfr_get_prec(out) + 40;
  MpfrValue e(w), pi(w);
  OctaveExponent(spec, k, e);
  mpfr_exp2(e, e, MPFR_RNDN);
  mpfr_const_pi(pi, MPFR_RNDN);
  mpfr_mul_2ui(pi, pi, 1, MPFR_RNDN);  // exact
  mpfr_mul(e, e, pi, MPFR_RNDN);
  if (spec.scale_divisor == 1) {
    mpfr_mul_d(out, e, spec.scale, MPFR_RNDN);
    return;
  }
  mpfr_mul_d(e, e, spec.scale, MPFR_RNDN);
  mpfr_div_ui(out, e, spec.scale_divisor, MPFR_RNDN);
}

// log2 of F_i estimated in double (error far below the 1-unit margins the
// range check leaves before deciding with MPFR).
double Log2FrequencyEstimate(const EncodingSpec& spec, uint32_t i) {
  const double scale = std::log2(spec.scale) -
                       std::log2(static_cast<double>(spec.scale_divisor));
  if (spec.scheme == FrequencyScheme::kExponential) {
    const double den = spec.dim / 2 - spec.shift;
    return scale - i * std::log2(spec.max_period) / den;
  }
  const double n1 = spec.num_frequencies > 1 ? spec.num_frequencies - 1 : 1;
  const double e =
      spec.min_freq_exp + i * (spec.max_freq_exp - spec.min_freq_exp) / n1;
  return scale + std::log2(2 * M_PI) + e;
}

// Compares F_i with 2^bound: -1, 0 (never in practice) or 1. A double
// estimate decides unless it lies within 1 of the bound; then MPFR at 128
// bits (relative error 2^-116).
int CompareFrequencyLog2(const EncodingSpec& spec, uint32_t i, int bound) {
  const double est = Log2FrequencyEstimate(spec, i);
  if (!(est > bound - 1)) return -1;  // NaN / -inf: far below
  if (est > bound + 1) return 1;
  MpfrValue f(128);
  RealFrequencyMpfr(spec, i, f);
  return mpfr_cmp_si_2exp(f, 1, bound);
}

}  // namespace

absl::Status RealFrequencyRangeError(const EncodingSpec& spec) {
  const uint32_t half = spec.half();
  if (half == 0) return absl::OkStatus();
  const bool octaves = spec.scheme == FrequencyScheme::kOctaves;
  // Exponential: F_0 = scale / scale_divisor is the largest (exponents
  // <= 0) and within 2^24 by the scale's own bound; octaves grow with k.
  const uint32_t smallest = octaves ? 0 : half - 1;
  const uint32_t largest = octaves ? half - 1 : 0;
  if (CompareFrequencyLog2(spec, smallest, -800) < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the smallest frequency %s is about 2^%.1f, below 2^-800",
        octaves ? "spec.min_freq_exp" : "spec.shift, spec.max_period",
        octaves ? "scale * 2 pi * 2^min_freq_exp"
                : "scale * max_period^(-(dim/2 - 1) / (dim/2 - shift))",
        Log2FrequencyEstimate(spec, smallest)));
  }
  if (CompareFrequencyLog2(spec, largest, 24) > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "spec.max_freq_exp: the largest frequency scale * 2 pi * "
        "2^max_freq_exp is about 2^%.1f, above 2^24",
        Log2FrequencyEstimate(spec, largest)));
  }
  return absl::OkStatus();
}

void RealFrequencyMpfr(const EncodingSpec& spec, uint32_t i, mpfr_ptr out) {
  if (spec.scheme == FrequencyScheme::kOctaves) {
    OctaveFrequency(spec, i, out);
    return;
  }
  if (i == 0) {
    mpfr_set_d(out, spec.scale, MPFR_RNDN);  // exact: w >= 64
    if (spec.scale_divisor != 1) {
      mpfr_div_ui(out, out, spec.scale_divisor, MPFR_RNDN);  // 2^-w
    }
    return;
  }
  MpfrValue p(mpfr_get_prec(out) + 40);
  ExponentialPower(spec, i, p);
  if (spec.scale_divisor == 1) {
    mpfr_mul_d(out, p, spec.scale, MPFR_RNDN);
    return;
  }
  mpfr_mul_d(p, p, spec.scale, MPFR_RNDN);
  mpfr_div_ui(out, p, spec.scale_divisor, MPFR_RNDN);
}

std::vector<FrequencyWords> RealFrequencies(const EncodingSpec& spec) {
  const uint32_t half = spec.half();
  std::vector<FrequencyWords> words(half);
  if (half == 0) return words;
  // F_i = a * r^i: a = F_0, r = F_1 / F_0 (each within 2^(13-256)); i - 1
  // further roundings of 2^-256: relative error <= i * 2^-242 < 2^-226
  // (i < 2^16), with the split's 2^-159 the words are within 2^-158.9.
  constexpr mpfr_prec_t kPrec = 256;
  MpfrValue a(kPrec), r(kPrec), f(kPrec), rest(kPrec);
  if (spec.scheme == FrequencyScheme::kOctaves) {
    OctaveFrequency(spec, 0, a);
    if (half > 1) {
      MpfrValue step(kPrec + 40);
      mpfr_set_d(step, spec.max_freq_exp, MPFR_RNDN);
      mpfr_sub_d(step, step, spec.min_freq_exp, MPFR_RNDN);
      mpfr_div_ui(step, step, half - 1, MPFR_RNDN);
      mpfr_exp2(r, step, MPFR_RNDN);
    }
  } else {
    mpfr_set_d(a, spec.scale, MPFR_RNDN);
    // One more rounding of 2^-256 when divided: within the bound below.
    mpfr_div_ui(a, a, spec.scale_divisor, MPFR_RNDN);
    if (half > 1) ExponentialPower(spec, 1, r);
  }
  mpfr_set(f, a, MPFR_RNDN);
  for (uint32_t i = 0; i < half; ++i) {
    if (i > 0) mpfr_mul(f, f, r, MPFR_RNDN);
    words[i] = SplitIntoWords(f, rest);
  }
  return words;
}

std::optional<int32_t> IntegerOctaveExponent(const EncodingSpec& spec,
                                             uint32_t k) {
  // e_k = (min (n - 1) + k (max - min)) / (n - 1): an integer iff the
  // (exact) numerator is an integer multiple of n - 1.
  const uint32_t n1 = spec.num_frequencies > 1 ? spec.num_frequencies - 1 : 1;
  MpfrValue num(kExactPrec), t(kExactPrec);
  mpfr_set_d(num, spec.min_freq_exp, MPFR_RNDN);
  mpfr_mul_ui(num, num, n1, MPFR_RNDN);  // exact: < 2^26 down to 2^-1074
  mpfr_set_d(t, spec.max_freq_exp, MPFR_RNDN);
  mpfr_sub_d(t, t, spec.min_freq_exp, MPFR_RNDN);
  mpfr_mul_ui(t, t, k, MPFR_RNDN);
  mpfr_add(num, num, t, MPFR_RNDN);
  if (!mpfr_integer_p(num) || mpfr_cmpabs_ui(num, 1u << 30) > 0) {
    return std::nullopt;
  }
  const long v = mpfr_get_si(num, MPFR_RNDN);
  if (v % static_cast<long>(n1) != 0) return std::nullopt;
  return static_cast<int32_t>(v / static_cast<long>(n1));
}

bool WholeQuarterTurns(double x, double scale, uint32_t divisor, int32_t e,
                       int64_t* m) {
  MpfrValue v(128);
  mpfr_set_d(v, x, MPFR_RNDN);
  mpfr_mul_d(v, v, scale, MPFR_RNDN);  // exact: 106 bits
  mpfr_mul_2si(v, v, e + 2, MPFR_RNDN);
  if (!mpfr_integer_p(v)) return false;
  if (divisor != 1) {
    // v is an integer below 2^26 * divisor < 2^58 in magnitude; v / divisor
    // is an integer or at least 1 / divisor > 2^-32 from one, which 128
    // bits resolve.
    mpfr_div_ui(v, v, divisor, MPFR_RNDN);
    if (!mpfr_integer_p(v)) return false;
  }
  *m = mpfr_get_si(v, MPFR_RNDN);  // |m| <= 2^26 / pi
  return true;
}

}  // namespace posenc
