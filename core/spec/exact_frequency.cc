#include "core/spec/exact_frequency.h"

#include <array>
#include <cmath>
#include <cstdint>

#include "core/numerics/mpfr_value.h"

namespace posenc {

// The reference: SplitIntoWordsFast computes the same three doubles.
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

namespace {

// A magnitude of up to 256 bits, least significant limb first.
using Limbs = std::array<uint64_t, 4>;

int BitLength(const Limbs& a) {
  for (int k = 3; k >= 0; --k) {
    if (a[k] != 0) return 64 * k + 64 - __builtin_clzll(a[k]);
  }
  return 0;
}

bool Bit(const Limbs& a, int i) { return (a[i / 64] >> (i % 64)) & 1; }

// Whether any bit below `i` is set.
bool AnyBelow(const Limbs& a, int i) {
  for (int k = 0; k < i / 64; ++k) {
    if (a[k] != 0) return true;
  }
  return i % 64 != 0 && (a[i / 64] & ((uint64_t{1} << (i % 64)) - 1)) != 0;
}

// a >> shift (shift < 256), the low 64 bits of the result.
uint64_t ShiftedLow(const Limbs& a, int shift) {
  const int k = shift / 64, b = shift % 64;
  uint64_t low = k < 4 ? a[k] >> b : 0;
  if (b != 0 && k + 1 < 4) low |= a[k + 1] << (64 - b);
  return low;
}

// top << shift as limbs (top < 2^54, shift + 54 <= 256).
Limbs Shifted(uint64_t top, int shift) {
  Limbs r{};
  const int k = shift / 64, b = shift % 64;
  r[k] = top << b;
  if (b != 0 && k + 1 < 4) r[k + 1] = top >> (64 - b);
  return r;
}

// a - b, for a >= b.
Limbs Minus(const Limbs& a, const Limbs& b) {
  Limbs r{};
  unsigned borrow = 0;
  for (int k = 0; k < 4; ++k) {
    const unsigned __int128 d =
        static_cast<unsigned __int128>(a[k]) - b[k] - borrow;
    r[k] = static_cast<uint64_t>(d);
    borrow = static_cast<unsigned>(d >> 64) & 1;
  }
  return r;
}

bool Less(const Limbs& a, const Limbs& b) {
  for (int k = 3; k >= 0; --k) {
    if (a[k] != b[k]) return a[k] < b[k];
  }
  return false;
}

// The nearest double (ties to even) to a * 2^scale, and that double as
// limbs of the same scale. Precondition: the result is a normal double.
double RoundToDouble(const Limbs& a, int scale, Limbs* as_limbs) {
  const int n = BitLength(a);
  if (n <= 53) {
    *as_limbs = a;
    return std::ldexp(static_cast<double>(a[0]), scale);
  }
  const int shift = n - 53;
  uint64_t top = ShiftedLow(a, shift);  // 53 bits
  if (Bit(a, shift - 1) && (AnyBelow(a, shift - 1) || (top & 1) != 0)) {
    ++top;  // may become 2^53: still exact as a double and as limbs
  }
  *as_limbs = Shifted(top, shift);
  return std::ldexp(static_cast<double>(top), scale + shift);
}

// SplitIntoWords by integer arithmetic on f's 192-bit significand (about a
// fifth of the time: a one-row call on a new family pays for d/2 splits).
// Same three doubles: each word is the nearest double to the exact rest.
// Precondition: prec(f) == 192 and 2^-800 <= f <= 1 (every word normal).
FrequencyWords SplitIntoWordsFast(mpfr_srcptr f) {
  const auto* limbs =
      static_cast<const mp_limb_t*>(mpfr_custom_get_significand(f));
  static_assert(sizeof(mp_limb_t) == 8, "64-bit limbs");
  const Limbs m{limbs[0], limbs[1], limbs[2], 0};
  const int scale = static_cast<int>(mpfr_get_exp(f)) - 192;  // f = m 2^scale
  FrequencyWords w;
  Limbs w0_limbs, w1_limbs, unused;
  w.w0 = RoundToDouble(m, scale, &w0_limbs);
  // rest1 = m - w0 (exact), its sign apart.
  const bool negative1 = Less(m, w0_limbs);
  const Limbs rest1 = negative1 ? Minus(w0_limbs, m) : Minus(m, w0_limbs);
  const double w1 = RoundToDouble(rest1, scale, &w1_limbs);
  w.w1 = negative1 ? -w1 : w1;
  // rest2 = rest1 - w1 (exact); w1 has rest1's sign, so compare magnitudes.
  const bool flips = Less(rest1, w1_limbs);
  const Limbs rest2 = flips ? Minus(w1_limbs, rest1) : Minus(rest1, w1_limbs);
  const double w2 = RoundToDouble(rest2, scale, &unused);
  w.w2 = (negative1 != flips && w2 != 0) ? -w2 : w2;  // +0 as MPFR gives
  return w;
}

}  // namespace

uint32_t FrequencyDenominator(const TableSpec& spec) {
  const uint32_t half = spec.d / 2;
  return spec.frequency == Frequency::kPaper ? half : half - 1;
}

void FrequencyMpfr(const TableSpec& spec, uint32_t i, mpfr_ptr out) {
  if (spec.rope != nullptr) {
    ScaledFrequencyMpfr(*spec.rope, spec.d, spec.base, i, out);
    return;
  }
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
  if (spec.rope != nullptr) {
    // RoPE: f'_i from powers of f_1 (core/spec/rope.h), within 2^-180 each;
    // the split adds 2^-159.
    std::vector<__mpfr_struct> f(half);
    for (auto& v : f) mpfr_init2(&v, 192);
    ScaledFrequencies192(*spec.rope, spec.d, spec.base, f.data());
    MpfrValue rest(192);
    for (uint32_t i = 0; i < half; ++i) {
      words[i] = mpfr_get_exp(&f[i]) >= -800
                     ? SplitIntoWordsFast(&f[i])
                     : SplitIntoWords(&f[i], rest.get());
      mpfr_clear(&f[i]);
    }
    return words;
  }
  words[0] = {1.0, 0.0, 0.0};
  if (half == 1) return words;
  // 192 bits (three limbs) is the least that keeps the words within
  // 2^-158: a one-row call on a new family pays for this loop, d/2 steps.
  constexpr mpfr_prec_t kPrec = 192;
  MpfrValue g(kPrec), f(kPrec), rest(kPrec);
  FrequencyMpfr(spec, 1, g.get());  // relative error <= 2^12 * 2^-192
  mpfr_set(f.get(), g.get(), MPFR_RNDN);
  for (uint32_t i = 1; i < half; ++i) {
    // f_i = g^i: i - 1 further roundings of 2^-192 and the error of g to the
    // power i: relative error <= i * (2^-180 + 2^-192) < 2^-164.9
    // (i < 2^15); with the split's 2^-159, the words are within 2^-158.9.
    if (i > 1) mpfr_mul(f.get(), f.get(), g.get(), MPFR_RNDN);
    // The fast split needs every word normal: f >= 2^-800 leaves 2^-992
    // for the last one. Smaller frequencies (bases above ~1e240) take MPFR.
    words[i] = mpfr_get_exp(f.get()) >= -800
                   ? SplitIntoWordsFast(f.get())
                   : SplitIntoWords(f.get(), rest.get());
  }
  return words;
}

}  // namespace posenc
