// make_golden: the exact reference for the interop script.
//
// Computes every table of tests/interop/SCRIPT.md independently of posenc's
// own code: each value is evaluated with MPFR at 256 bits and rounded ONCE,
// round-to-nearest-even, straight from that value to the requested dtype
// (float16 and bfloat16 too, never via float32; subnormals included). Rows
// are serialised little-endian, row-major, and hashed with OpenSSL SHA-256.
//
// RoPE tables (TableSpec.rope, the RoPE layouts) are computed here too, from
// the formulas written in proto/posenc/v1/posenc.proto (RopeType), not from
// core/spec/rope.h nor tests/numerics/rope_reference.cc: the scaled frequency
// f'_i and the attention factor a are evaluated at 384 bits (ln where the proto
// says ln, mpfr_pow for base^(-2i/d)), every decision (YaRN's ramp ends,
// Llama 3's bands, LongRoPE's list) taken on those values, and each value
// a * cos(pos * f'_i), a * sin(pos * f'_i) is rounded once only when
// mpfr_can_round proves the rounding (else the precision doubles).
//
// Encode rows (EncodingSpec, the `Encode` lines) are computed here too, from
// the libraries' formulas as posenc.proto writes them (FrequencyScheme), not
// from core/: f_i = max_period^(-i / (half - shift)) (mpfr_pow) or
// 2 pi 2^(e_k), e_k = min_freq_exp + k (max_freq_exp - min_freq_exp) /
// (num_frequencies - 1) (mpfr_exp2), times scale, times the position, sin and
// cos at 384 bits, each value rounded once only when mpfr_can_round proves
// the rounding (else the precision doubles). Values that are exactly 0 or
// +-1, which no precision can round by proof, are set explicitly: position 0
// (sin +0, cos 1) and whole quarter turns of an octave frequency with an
// integer exponent (x * scale * 2^(e+2) an integer n: sin, cos of n pi / 2,
// zeros as +0).
//
// Grid tables (TableSpec.grid, the grid_ lines) likewise, from the GridSpec
// text of posenc.proto: each block's values sin/cos(x * base^(-2i / c)) of
// the exact rational position x, evaluated at 256+ bits (mpfr_pow) and
// rounded once when mpfr_can_round proves it.
//
// Prints the expected interop transcript (one line per call) to stdout.
// Regenerate the committed goldens with:
//   ninja -C build posenc_make_golden &&
//   build/tests/interop/posenc_make_golden > tests/golden/interop.txt
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/sha256_hex.h"

namespace {

constexpr mpfr_prec_t kPrecision = 256;

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16 };
enum class Layout {
  kInterleaved,
  kConcatSinCos,
  kConcatCosSin,
  kRotateHalf,        // cos at i and d/2+i, sin at d+i and 3d/2+i (HF)
  kInterleavedPairs,  // cos at 2i and 2i+1, sin at d+2i and d+2i+1 (GPT-J)
};
enum class Frequency { kPaper, kT2T };

struct Spec {
  uint32_t d;
  double base;
  uint32_t max_len;
  DType dtype;
  Layout layout;
  Frequency frequency;
};

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

// Significand bits (with the hidden one) and the least normal exponent.
struct Format {
  int precision;
  int min_exponent;
};

Format FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {24, -126};
    case DType::kFloat64:
      return {53, -1022};
    case DType::kFloat16:
      return {11, -14};
    case DType::kBFloat16:
      return {8, -126};
  }
  return {0, 0};
}

// Rounds x once, to nearest with ties to even, onto the grid of `format`
// (subnormals included; |x| <= 1 here, so no overflow). The result is
// exactly representable in double, so it is returned as one.
double RoundToFormat(const mpfr_t x, Format format) {
  if (mpfr_zero_p(x)) return mpfr_signbit(x) ? -0.0 : 0.0;
  // x = m * 2^e with 0.5 <= |m| < 1, so floor(log2|x|) = e - 1.
  const long exponent =
      std::max<long>(mpfr_get_exp(x) - 1, format.min_exponent);
  const long quantum_exp = exponent - (format.precision - 1);
  mpfr_t scaled;
  mpfr_init2(scaled, kPrecision);
  mpfr_mul_2si(scaled, x, -quantum_exp, MPFR_RNDN);      // exact
  mpfr_rint(scaled, scaled, MPFR_RNDN);                  // ties to even
  mpfr_mul_2si(scaled, scaled, quantum_exp, MPFR_RNDN);  // exact
  const double result = mpfr_get_d(scaled, MPFR_RNDN);   // exact
  mpfr_clear(scaled);
  return result;
}

// Exact encodings of a double that is representable in the narrow format.
uint16_t ExactHalfBits(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e;
  const double m = std::frexp(v, &e);  // v = m * 2^e, 0.5 <= m < 1
  if (e - 1 < -14) {                   // subnormal: v = k * 2^-24
    return sign | static_cast<uint16_t>(std::ldexp(v, 24));
  }
  const uint16_t frac = static_cast<uint16_t>(std::ldexp(m, 11)) & 0x3ff;
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | frac;
}

uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

void AppendLittleEndian(uint64_t bits, size_t bytes, std::string* out) {
  for (size_t k = 0; k < bytes; ++k) out->push_back(char(bits >> (8 * k)));
}

void AppendValue(const mpfr_t x, DType dtype, std::string* out) {
  const double v = RoundToFormat(x, FormatOf(dtype));
  switch (dtype) {
    case DType::kFloat64: {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      AppendLittleEndian(bits, 8, out);
      break;
    }
    case DType::kFloat32:
      AppendLittleEndian(FloatBits(static_cast<float>(v)), 4, out);
      break;
    case DType::kBFloat16:  // exact in float32, low half is zero
      AppendLittleEndian(FloatBits(static_cast<float>(v)) >> 16, 2, out);
      break;
    case DType::kFloat16:
      AppendLittleEndian(ExactHalfBits(v), 2, out);
      break;
  }
}

// RoPE scaling (proto RopeScaling): 0 means unset, as in the proto.
enum class RopeType { kDefault, kLinear, kDynamic, kYarn, kLlama3, kLongRope };

struct Rope {
  RopeType type = RopeType::kDefault;
  double factor = 0;
  uint32_t original_max_position_embeddings = 0;  // M
  uint32_t seq_len = 0;
  double beta_fast = 0;
  double beta_slow = 0;
  double mscale = 0;
  double mscale_all_dim = 0;
  int truncate = -1;  // -1 unset (true), 0 false, 1 true
  double attention_factor = 0;
  double low_freq_factor = 0;
  double high_freq_factor = 0;
  std::vector<double> short_factor;
  std::vector<double> long_factor;
};

const char* RopeTypeKeyName(RopeType type) {
  switch (type) {
    case RopeType::kDefault:
      return "default";
    case RopeType::kLinear:
      return "linear";
    case RopeType::kDynamic:
      return "dynamic";
    case RopeType::kYarn:
      return "yarn";
    case RopeType::kLlama3:
      return "llama3";
    case RopeType::kLongRope:
      return "longrope";
  }
  return "?";
}

constexpr mpfr_prec_t kRopePrecision = 384;

// g(m) = 0.1 m ln(factor) + 1, or 1 when factor <= 1.
void YarnMscale(double factor, double m, mpfr_ptr out) {
  if (factor <= 1) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  mpfr_set_d(out, factor, MPFR_RNDN);
  mpfr_log(out, out, MPFR_RNDN);
  mpfr_mul_d(out, out, m, MPFR_RNDN);
  mpfr_div_ui(out, out, 10, MPFR_RNDN);
  mpfr_add_ui(out, out, 1, MPFR_RNDN);
}

// The attention factor a of `rope` (proto: yarn and longrope defaults).
// Returns whether `a` is exact (a set attention_factor, or 1).
bool RopeAttention(const Rope& rope, mpfr_ptr a) {
  const mpfr_prec_t prec = mpfr_get_prec(a);
  if (rope.attention_factor != 0) {
    mpfr_set_d(a, rope.attention_factor, MPFR_RNDN);
  } else if (rope.type == RopeType::kYarn) {
    if (rope.mscale != 0 && rope.mscale_all_dim != 0) {
      mpfr_t g;
      mpfr_init2(g, prec);
      YarnMscale(rope.factor, rope.mscale, a);
      YarnMscale(rope.factor, rope.mscale_all_dim, g);
      mpfr_div(a, a, g, MPFR_RNDN);
      mpfr_clear(g);
    } else {
      YarnMscale(rope.factor, 1, a);
    }
  } else if (rope.type == RopeType::kLongRope && rope.factor > 1) {
    // sqrt(1 + ln(factor) / ln(M)).
    mpfr_t lm;
    mpfr_init2(lm, prec);
    mpfr_set_d(a, rope.factor, MPFR_RNDN);
    mpfr_log(a, a, MPFR_RNDN);
    mpfr_set_ui(lm, rope.original_max_position_embeddings, MPFR_RNDN);
    mpfr_log(lm, lm, MPFR_RNDN);
    mpfr_div(a, a, lm, MPFR_RNDN);
    mpfr_add_ui(a, a, 1, MPFR_RNDN);
    mpfr_sqrt(a, a, MPFR_RNDN);
    mpfr_clear(lm);
  } else {
    mpfr_set_ui(a, 1, MPFR_RNDN);
  }
  return rope.attention_factor != 0 || mpfr_cmp_ui(a, 1) == 0;
}

// The scaled frequencies f'_0 .. f'_{d/2-1} of `rope` for rotary dimension
// d, each to `prec` bits (with ~40 bits lost at worst to the operations).
std::vector<mpfr_ptr> RopeFrequencies(const Rope& rope, uint32_t d, double base,
                                      mpfr_prec_t prec) {
  const uint32_t half = d / 2;
  const uint32_t m = rope.original_max_position_embeddings;
  mpfr_t b, e, t, u, low, high;
  for (mpfr_ptr v : {b, e, t, u, low, high}) mpfr_init2(v, prec);
  mpfr_set_d(b, base, MPFR_RNDN);
  if (rope.type == RopeType::kDynamic) {
    // base' = base * (factor * L / M - (factor - 1))^(d / (d - 2)),
    // L = max(seq_len, M), seq_len 0 meaning M.
    const uint32_t l = std::max(rope.seq_len, m);
    mpfr_set_ui(t, l, MPFR_RNDN);
    mpfr_mul_d(t, t, rope.factor, MPFR_RNDN);
    mpfr_div_ui(t, t, m, MPFR_RNDN);
    mpfr_set_d(u, rope.factor, MPFR_RNDN);
    mpfr_sub_ui(u, u, 1, MPFR_RNDN);
    mpfr_sub(t, t, u, MPFR_RNDN);
    mpfr_set_ui(e, d, MPFR_RNDN);
    mpfr_div_ui(e, e, d - 2, MPFR_RNDN);
    mpfr_pow(t, t, e, MPFR_RNDN);
    mpfr_mul(b, b, t, MPFR_RNDN);
  }
  if (rope.type == RopeType::kYarn) {
    // c(beta) = d * ln(M / (2 pi beta)) / (2 ln base).
    const double betas[2] = {rope.beta_fast != 0 ? rope.beta_fast : 32,
                             rope.beta_slow != 0 ? rope.beta_slow : 1};
    mpfr_ptr ends[2] = {low, high};
    for (int k = 0; k < 2; ++k) {
      mpfr_const_pi(t, MPFR_RNDN);
      mpfr_mul_ui(t, t, 2, MPFR_RNDN);
      mpfr_mul_d(t, t, betas[k], MPFR_RNDN);
      mpfr_set_ui(u, m, MPFR_RNDN);
      mpfr_div(t, u, t, MPFR_RNDN);
      mpfr_log(t, t, MPFR_RNDN);
      mpfr_mul_ui(t, t, d, MPFR_RNDN);
      mpfr_set_d(u, base, MPFR_RNDN);
      mpfr_log(u, u, MPFR_RNDN);
      mpfr_mul_ui(u, u, 2, MPFR_RNDN);
      mpfr_div(ends[k], t, u, MPFR_RNDN);
    }
    if (rope.truncate != 0) {  // unset means true
      mpfr_floor(low, low);
      mpfr_ceil(high, high);
    }
    if (mpfr_sgn(low) < 0) mpfr_set_ui(low, 0, MPFR_RNDN);
    if (mpfr_cmp_ui(high, d - 1) > 0) mpfr_set_ui(high, d - 1, MPFR_RNDN);
    if (mpfr_equal_p(low, high)) {
      mpfr_set_ui(t, 1, MPFR_RNDN);
      mpfr_div_ui(t, t, 1000, MPFR_RNDN);
      mpfr_add(high, high, t, MPFR_RNDN);
    }
  }
  std::vector<mpfr_ptr> freqs;
  for (uint32_t i = 0; i < half; ++i) {
    mpfr_ptr f = new __mpfr_struct;
    mpfr_init2(f, prec);
    mpfr_set_si(e, -2 * static_cast<long>(i), MPFR_RNDN);
    mpfr_div_ui(e, e, d, MPFR_RNDN);
    mpfr_pow(f, b, e, MPFR_RNDN);  // f_i = b^(-2i/d)
    switch (rope.type) {
      case RopeType::kDefault:
      case RopeType::kDynamic:
        break;
      case RopeType::kLinear:
        mpfr_div_d(f, f, rope.factor, MPFR_RNDN);
        break;
      case RopeType::kYarn:
        // r = clamp((i - low) / (high - low), 0, 1);
        // f' = f (1 - r) + (f / factor) r = f (1 - r (1 - 1/factor)).
        mpfr_ui_sub(t, i, low, MPFR_RNDN);
        mpfr_sub(u, high, low, MPFR_RNDN);
        mpfr_div(t, t, u, MPFR_RNDN);
        if (mpfr_sgn(t) < 0) mpfr_set_ui(t, 0, MPFR_RNDN);
        if (mpfr_cmp_ui(t, 1) > 0) mpfr_set_ui(t, 1, MPFR_RNDN);
        mpfr_set_ui(u, 1, MPFR_RNDN);
        mpfr_div_d(u, u, rope.factor, MPFR_RNDN);
        mpfr_ui_sub(u, 1, u, MPFR_RNDN);
        mpfr_mul(t, t, u, MPFR_RNDN);
        mpfr_ui_sub(t, 1, t, MPFR_RNDN);
        mpfr_mul(f, f, t, MPFR_RNDN);
        break;
      case RopeType::kLlama3: {
        // w = 2 pi / f against M / high_freq_factor and M / low_freq_factor.
        mpfr_const_pi(t, MPFR_RNDN);
        mpfr_mul_ui(t, t, 2, MPFR_RNDN);
        mpfr_div(t, t, f, MPFR_RNDN);  // w
        mpfr_set_ui(u, m, MPFR_RNDN);
        mpfr_div_d(u, u, rope.high_freq_factor, MPFR_RNDN);
        if (mpfr_less_p(t, u)) break;
        mpfr_set_ui(u, m, MPFR_RNDN);
        mpfr_div_d(u, u, rope.low_freq_factor, MPFR_RNDN);
        if (mpfr_greater_p(t, u)) {
          mpfr_div_d(f, f, rope.factor, MPFR_RNDN);
          break;
        }
        // s = (M / w - low) / (high - low); f' = f ((1 - s) / factor + s).
        mpfr_ui_div(t, m, t, MPFR_RNDN);
        mpfr_sub_d(t, t, rope.low_freq_factor, MPFR_RNDN);
        mpfr_set_d(u, rope.high_freq_factor, MPFR_RNDN);
        mpfr_sub_d(u, u, rope.low_freq_factor, MPFR_RNDN);
        mpfr_div(t, t, u, MPFR_RNDN);  // s
        mpfr_ui_sub(u, 1, t, MPFR_RNDN);
        mpfr_div_d(u, u, rope.factor, MPFR_RNDN);
        mpfr_add(t, t, u, MPFR_RNDN);
        mpfr_mul(f, f, t, MPFR_RNDN);
        break;
      }
      case RopeType::kLongRope: {
        const std::vector<double>& list =
            rope.seq_len > m ? rope.long_factor : rope.short_factor;
        mpfr_div_d(f, f, list[i], MPFR_RNDN);
        break;
      }
    }
    freqs.push_back(f);
  }
  for (mpfr_ptr v : {b, e, t, u, low, high}) mpfr_clear(v);
  return freqs;
}

// a * cos(pos * f'_i) and a * sin(pos * f'_i) of every pair, rounded to
// `dtype` and serialised, decided at a precision that proves each rounding.
void RopeValues(const Rope& rope, const Spec& spec, uint32_t pos,
                std::vector<std::string>* sin_bytes,
                std::vector<std::string>* cos_bytes) {
  const uint32_t half = spec.d / 2;
  const int target = FormatOf(spec.dtype).precision;
  for (mpfr_prec_t prec = kRopePrecision;; prec *= 2) {
    if (prec > 8192) {
      std::fprintf(stderr, "make_golden: cannot round a RoPE value\n");
      std::exit(1);
    }
    std::vector<mpfr_ptr> freqs =
        RopeFrequencies(rope, spec.d, spec.base, prec);
    mpfr_t a, angle, s, c;
    for (mpfr_ptr v : {a, angle, s, c}) mpfr_init2(v, prec);
    const bool a_exact = RopeAttention(rope, a);
    bool ok = true;
    for (uint32_t i = 0; i < half && ok; ++i) {
      if (pos == 0) {  // sin 0 = +0, cos 0 = 1: the values are +0 and a
        mpfr_set_zero(s, 1);
        mpfr_set(c, a, MPFR_RNDN);
        if (a_exact) {
          (*sin_bytes)[i].clear();
          (*cos_bytes)[i].clear();
          AppendValue(s, spec.dtype, &(*sin_bytes)[i]);
          AppendValue(c, spec.dtype, &(*cos_bytes)[i]);
          continue;
        }
      }
      mpfr_mul_ui(angle, freqs[i], pos, MPFR_RNDN);
      mpfr_sin_cos(s, c, angle, MPFR_RNDN);
      mpfr_mul(s, s, a, MPFR_RNDN);
      mpfr_mul(c, c, a, MPFR_RNDN);
      // f' and a are within 2^(10 - prec) relative and pos < 2^6, so the
      // values are within 2^(20 - prec) absolutely; allow 2^(144 - prec).
      for (mpfr_ptr v : {s, c}) {
        if (mpfr_zero_p(v)) continue;  // sin(+0) = +0 exactly
        const mpfr_exp_t below = std::max<mpfr_exp_t>(0, -mpfr_get_exp(v));
        ok = ok && mpfr_can_round(v, prec - 144 - below, MPFR_RNDN, MPFR_RNDZ,
                                  target + 1) != 0;
      }
      if (ok) {
        (*sin_bytes)[i].clear();
        (*cos_bytes)[i].clear();
        AppendValue(s, spec.dtype, &(*sin_bytes)[i]);
        AppendValue(c, spec.dtype, &(*cos_bytes)[i]);
      }
    }
    for (mpfr_ptr v : {a, angle, s, c}) mpfr_clear(v);
    for (mpfr_ptr f : freqs) {
      mpfr_clear(f);
      delete f;
    }
    if (ok) return;
  }
}

// A row from the serialised sin and cos of each pair, in pair order, placed
// by `layout` (the RoPE layouts hold each value twice).
std::string LaidOut(Layout layout, const std::vector<std::string>& sin_bytes,
                    const std::vector<std::string>& cos_bytes) {
  std::string row;
  switch (layout) {
    case Layout::kInterleaved:
      for (size_t i = 0; i < sin_bytes.size(); ++i) {
        row += sin_bytes[i] + cos_bytes[i];
      }
      break;
    case Layout::kConcatSinCos:
      for (const auto& b : sin_bytes) row += b;
      for (const auto& b : cos_bytes) row += b;
      break;
    case Layout::kConcatCosSin:
      for (const auto& b : cos_bytes) row += b;
      for (const auto& b : sin_bytes) row += b;
      break;
    case Layout::kRotateHalf:  // [cos | cos | sin | sin], d/2 each
      for (int k = 0; k < 2; ++k) {
        for (const auto& b : cos_bytes) row += b;
      }
      for (int k = 0; k < 2; ++k) {
        for (const auto& b : sin_bytes) row += b;
      }
      break;
    case Layout::kInterleavedPairs:  // cos0 cos0 cos1 cos1 ... sin0 sin0 ...
      for (const auto& b : cos_bytes) row += b + b;
      for (const auto& b : sin_bytes) row += b + b;
      break;
  }
  return row;
}

// Row `pos` of `spec` (with RoPE scaling `rope`, or none), serialised.
std::string Row(const Spec& spec, uint32_t pos, const Rope* rope = nullptr) {
  const uint32_t half = spec.d / 2;
  std::vector<std::string> sin_bytes(half), cos_bytes(half);
  mpfr_t base, exponent, freq, angle, s, c;
  for (mpfr_ptr v : {base, exponent, freq, angle, s, c}) {
    mpfr_init2(v, kPrecision);
  }
  mpfr_set_d(base, spec.base, MPFR_RNDN);  // exact
  for (uint32_t i = 0; i < half && rope == nullptr; ++i) {
    // PAPER: f_i = base^(-2i/d); T2T: f_i = base^(-i/(d/2-1)).
    if (spec.frequency == Frequency::kPaper) {
      mpfr_set_si(exponent, -2 * static_cast<long>(i), MPFR_RNDN);
      mpfr_div_ui(exponent, exponent, spec.d, MPFR_RNDN);
    } else {
      mpfr_set_si(exponent, -static_cast<long>(i), MPFR_RNDN);
      mpfr_div_ui(exponent, exponent, half - 1, MPFR_RNDN);
    }
    mpfr_pow(freq, base, exponent, MPFR_RNDN);
    mpfr_mul_ui(angle, freq, pos, MPFR_RNDN);
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    AppendValue(s, spec.dtype, &sin_bytes[i]);
    AppendValue(c, spec.dtype, &cos_bytes[i]);
  }
  for (mpfr_ptr v : {base, exponent, freq, angle, s, c}) mpfr_clear(v);
  if (rope != nullptr) RopeValues(*rope, spec, pos, &sin_bytes, &cos_bytes);

  return LaidOut(spec.layout, sin_bytes, cos_bytes);
}

// An EncodingSpec (proto EncodingSpec) with the proto's defaults applied.
struct Encoding {
  bool octaves = false;
  uint32_t dim = 0;  // exponential: 2 half (+1 with pad_odd_dim)
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kInterleaved;
  double max_period = 10000;
  double shift = 0;
  double scale = 1;
  bool pad_odd_dim = false;
  uint32_t num_frequencies = 0;
  double min_freq_exp = 0;
  double max_freq_exp = 0;
  uint32_t coordinates = 1;
  bool include_input = false;

  uint32_t half() const { return octaves ? num_frequencies : dim / 2; }
  uint32_t width() const {
    return 2 * coordinates * half() + (pad_odd_dim ? 1 : 0) +
           (include_input ? coordinates : 0);
  }
};

constexpr mpfr_prec_t kEncodePrecision = 384;

// Octaves: whether e_k is an integer, and then which, decided exactly (the
// doubles and k, n are exact at 2048 bits; the quotient is exact or not).
bool IntegerExponent(const Encoding& spec, uint32_t k, long* exponent) {
  mpfr_t e, span;
  mpfr_init2(e, 2048);
  mpfr_init2(span, 2048);
  bool integer = false;
  mpfr_set_d(e, spec.min_freq_exp, MPFR_RNDN);
  if (spec.num_frequencies > 1) {
    mpfr_set_d(span, spec.max_freq_exp, MPFR_RNDN);
    mpfr_sub_d(span, span, spec.min_freq_exp, MPFR_RNDN);  // exact
    mpfr_mul_ui(span, span, k, MPFR_RNDN);                 // exact
    const int inexact =
        mpfr_div_ui(span, span, spec.num_frequencies - 1, MPFR_RNDN);
    if (inexact == 0) mpfr_add(e, e, span, MPFR_RNDN);  // exact
    integer = inexact == 0 && mpfr_integer_p(e);
  } else {
    integer = mpfr_integer_p(e);
  }
  if (integer) *exponent = mpfr_get_si(e, MPFR_RNDN);
  mpfr_clear(e);
  mpfr_clear(span);
  return integer;
}

// Whether x * F is a whole number n of quarter turns, exactly; then n mod 4.
// Only an octave frequency with an integer exponent e has such points
// (F = scale 2 pi 2^e: x F = n pi / 2 when x scale 2^(e+2) = n); an
// exponential F / scale is algebraic, so x F / pi is never rational.
bool QuarterTurns(const Encoding& spec, uint32_t k, double x, int* n_mod_4) {
  long e;
  if (!spec.octaves || !IntegerExponent(spec, k, &e)) return false;
  mpfr_t t;
  mpfr_init2(t, 2048);
  mpfr_set_d(t, x, MPFR_RNDN);
  mpfr_mul_d(t, t, spec.scale, MPFR_RNDN);  // exact: 106 bits
  mpfr_mul_2si(t, t, e + 2, MPFR_RNDN);     // exact
  const bool whole = mpfr_integer_p(t) != 0;
  if (whole) {
    mpfr_fmod_ui(t, t, 4, MPFR_RNDN);  // in (-4, 4), exact
    *n_mod_4 = static_cast<int>((mpfr_get_si(t, MPFR_RNDN) + 4) % 4);
  }
  mpfr_clear(t);
  return whole;
}

// F_i = scale * f_i of every frequency of `spec`, to `prec` bits.
std::vector<mpfr_ptr> EncodingFrequencies(const Encoding& spec,
                                          mpfr_prec_t prec) {
  mpfr_t e, t;
  mpfr_init2(e, prec);
  mpfr_init2(t, prec);
  std::vector<mpfr_ptr> freqs;
  for (uint32_t i = 0; i < spec.half(); ++i) {
    mpfr_ptr f = new __mpfr_struct;
    mpfr_init2(f, prec);
    if (!spec.octaves) {
      // f_i = max_period^(-i / (half - shift)).
      mpfr_set_ui(t, spec.half(), MPFR_RNDN);
      mpfr_sub_d(t, t, spec.shift, MPFR_RNDN);
      mpfr_set_si(e, -static_cast<long>(i), MPFR_RNDN);
      mpfr_div(e, e, t, MPFR_RNDN);
      mpfr_set_d(t, spec.max_period, MPFR_RNDN);
      mpfr_pow(f, t, e, MPFR_RNDN);
    } else {
      // f_k = 2 pi 2^(e_k), e_k = min + k (max - min) / (n - 1).
      mpfr_set_d(e, spec.max_freq_exp, MPFR_RNDN);
      mpfr_sub_d(e, e, spec.min_freq_exp, MPFR_RNDN);
      mpfr_mul_ui(e, e, i, MPFR_RNDN);
      if (spec.num_frequencies > 1) {
        mpfr_div_ui(e, e, spec.num_frequencies - 1, MPFR_RNDN);
      }
      mpfr_add_d(e, e, spec.min_freq_exp, MPFR_RNDN);
      mpfr_exp2(f, e, MPFR_RNDN);
      mpfr_const_pi(t, MPFR_RNDN);
      mpfr_mul(f, f, t, MPFR_RNDN);
      mpfr_mul_2si(f, f, 1, MPFR_RNDN);
    }
    mpfr_mul_d(f, f, spec.scale, MPFR_RNDN);
    freqs.push_back(f);
  }
  mpfr_clear(e);
  mpfr_clear(t);
  return freqs;
}

// sin(x F_i) and cos(x F_i) of every frequency, rounded to `dtype` and
// serialised, each decided at a precision that proves its rounding.
void EncodingValues(const Encoding& spec, double x,
                    std::vector<std::string>* sin_bytes,
                    std::vector<std::string>* cos_bytes) {
  const uint32_t half = spec.half();
  const int target = FormatOf(spec.dtype).precision;
  std::vector<bool> done(half, false);
  mpfr_t s, c;
  mpfr_init2(s, 64);
  mpfr_init2(c, 64);
  for (uint32_t i = 0; i < half; ++i) {  // exact values first
    int n = 0;  // quarter turns mod 4: angle 0 at x = 0
    if (x != 0 && !QuarterTurns(spec, i, x, &n)) continue;
    static const int kSin[4] = {0, 1, 0, -1}, kCos[4] = {1, 0, -1, 0};
    mpfr_set_si(s, kSin[n], MPFR_RNDN);  // 0 is +0
    mpfr_set_si(c, kCos[n], MPFR_RNDN);
    AppendValue(s, spec.dtype, &(*sin_bytes)[i]);
    AppendValue(c, spec.dtype, &(*cos_bytes)[i]);
    done[i] = true;
  }
  mpfr_clear(s);
  mpfr_clear(c);
  for (mpfr_prec_t prec = kEncodePrecision;; prec *= 2) {
    if (prec > 8192) {
      std::fprintf(stderr, "make_golden: cannot round an Encode value\n");
      std::exit(1);
    }
    std::vector<mpfr_ptr> freqs = EncodingFrequencies(spec, prec);
    mpfr_t angle, sv, cv;
    for (mpfr_ptr v : {angle, sv, cv}) mpfr_init2(v, prec);
    bool all = true;
    for (uint32_t i = 0; i < half; ++i) {
      if (done[i]) continue;
      mpfr_mul_d(angle, freqs[i], x, MPFR_RNDN);
      mpfr_sin_cos(sv, cv, angle, MPFR_RNDN);
      // F_i is within 2^(8 - prec) relative (at most ~10 roundings, each
      // amplified at most ln(max_period) |exponent| or |e_k| ln 2 < 2^6
      // times), |angle| <= 2^24 (the server's limit), so sin and cos are
      // within 2^(33 - prec) absolutely; allow 2^(64 - prec).
      bool ok = true;
      for (mpfr_ptr v : {sv, cv}) {
        ok = ok && !mpfr_zero_p(v) &&
             mpfr_can_round(v, mpfr_get_exp(v) - (64 - prec), MPFR_RNDN,
                            MPFR_RNDZ, target + 1) != 0;
      }
      if (!ok) {
        all = false;
        continue;
      }
      AppendValue(sv, spec.dtype, &(*sin_bytes)[i]);
      AppendValue(cv, spec.dtype, &(*cos_bytes)[i]);
      done[i] = true;
    }
    for (mpfr_ptr v : {angle, sv, cv}) mpfr_clear(v);
    for (mpfr_ptr f : freqs) {
      mpfr_clear(f);
      delete f;
    }
    if (all) return;
  }
}

// One row of `spec` for the point `x` (spec.coordinates values), serialised:
// the K = coordinates * half pairs (pair j = c * half + i) placed by layout,
// the pad column, the inputs.
std::string EncodingRow(const Encoding& spec, const double* x) {
  const uint32_t half = spec.half();
  const uint32_t pairs = spec.coordinates * half;
  std::vector<std::string> sin_bytes(pairs), cos_bytes(pairs);
  for (uint32_t c = 0; c < spec.coordinates; ++c) {
    std::vector<std::string> s(half), co(half);
    EncodingValues(spec, x[c], &s, &co);
    for (uint32_t i = 0; i < half; ++i) {
      sin_bytes[c * half + i] = s[i];
      cos_bytes[c * half + i] = co[i];
    }
  }
  // Interleaved or concatenated (Encode refuses the RoPE layouts).
  std::string row = LaidOut(spec.layout, sin_bytes, cos_bytes);
  mpfr_t v;
  mpfr_init2(v, 64);
  if (spec.pad_odd_dim) {
    mpfr_set_zero(v, 1);
    AppendValue(v, spec.dtype, &row);
  }
  for (uint32_t c = 0; c < spec.coordinates && spec.include_input; ++c) {
    mpfr_set_d(v, x[c], MPFR_RNDN);  // exact
    AppendValue(v, spec.dtype, &row);
  }
  mpfr_clear(v);
  return row;
}

// sin and cos of the angle x (exactly 0 when `zero`: sin +0, cos 1),
// appended to *sin_out / *cos_out each rounded once to dtype, when
// mpfr_can_round proves it: a few roundings of 2^-prec on |angle| < 2^24
// stay within 2^(32 - prec) absolutely; 2^(64 - prec) is allowed. False
// (nothing appended): retry at a higher precision. sv and cv are scratch
// of precision prec.
bool SinCosRounded(mpfr_srcptr x, bool zero, mpfr_prec_t prec, DType dtype,
                   mpfr_ptr sv, mpfr_ptr cv, std::string* sin_out,
                   std::string* cos_out) {
  if (zero) {
    mpfr_set_zero(sv, 1);
    mpfr_set_ui(cv, 1, MPFR_RNDN);
  } else {
    mpfr_sin_cos(sv, cv, x, MPFR_RNDN);
    const int target = FormatOf(dtype).precision;
    for (mpfr_ptr v : {sv, cv}) {
      if (mpfr_zero_p(v) ||
          mpfr_can_round(v, mpfr_get_exp(v) - (64 - prec), MPFR_RNDN, MPFR_RNDZ,
                         target + 1) == 0) {
        return false;
      }
    }
  }
  AppendValue(sv, dtype, sin_out);
  AppendValue(cv, dtype, cos_out);
  return true;
}

// A grid table (TableSpec.grid), from posenc.proto's GridSpec text: axis a
// has points k at x_k = (first_index + k) * p / q and a block of `channels`
// channels, f_i = base^(-2i / channels), [sin | cos] (LAYOUT_CONCAT_SIN_COS,
// GRID_SIN_COS_PER_AXIS); extra_zero_rows zero rows, then the points
// row-major (the last axis fastest); the blocks in channel_order.
struct GridAxisSpec {
  uint32_t size, channels, first_index, p, q;
};
struct Grid {
  double base = 10000;
  DType dtype = DType::kFloat32;
  std::vector<GridAxisSpec> axes;
  std::vector<uint32_t> channel_order;
  uint32_t extra_zero_rows = 0;
  uint32_t rows() const {
    uint32_t n = 1;
    for (const GridAxisSpec& a : axes) n *= a.size;
    return n + extra_zero_rows;
  }
  uint32_t d() const {
    uint32_t d = 0;
    for (const GridAxisSpec& a : axes) d += a.channels;
    return d;
  }
};

// The block [sin(x f_0) .. | cos(x f_0) ..] of x = num / den, each value
// rounded once when mpfr_can_round proves it (else the precision doubles).
std::string GridBlock(const Grid& grid, uint32_t channels, uint64_t num,
                      uint64_t den) {
  const uint32_t half = channels / 2;
  std::vector<std::string> sin_bytes(half), cos_bytes(half);
  for (uint32_t i = 0; i < half; ++i) {
    for (mpfr_prec_t prec = kPrecision;; prec *= 2) {
      if (prec > 8192) {
        std::fprintf(stderr, "make_golden: cannot round a grid value\n");
        std::exit(1);
      }
      mpfr_t e, f, x, sv, cv;
      for (mpfr_ptr v : {e, f, x, sv, cv}) mpfr_init2(v, prec);
      mpfr_set_si(e, -static_cast<long>(2 * i), MPFR_RNDN);
      mpfr_div_ui(e, e, channels, MPFR_RNDN);
      mpfr_set_d(f, grid.base, MPFR_RNDN);
      mpfr_pow(f, f, e, MPFR_RNDN);  // base^(-2i / channels)
      mpfr_set_ui(x, static_cast<unsigned long>(num), MPFR_RNDN);
      mpfr_div_ui(x, x, static_cast<unsigned long>(den), MPFR_RNDN);
      mpfr_mul(x, x, f, MPFR_RNDN);
      const bool ok = SinCosRounded(x, num == 0, prec, grid.dtype, sv, cv,
                                    &sin_bytes[i], &cos_bytes[i]);
      for (mpfr_ptr v : {e, f, x, sv, cv}) mpfr_clear(v);
      if (ok) break;
    }
  }
  std::string block;
  for (const auto& b : sin_bytes) block += b;
  for (const auto& b : cos_bytes) block += b;
  return block;
}

std::string GridRow(const Grid& grid, uint32_t row) {
  const size_t size = grid.dtype == DType::kFloat64   ? 8
                      : grid.dtype == DType::kFloat32 ? 4
                                                      : 2;
  if (row < grid.extra_zero_rows) return std::string(grid.d() * size, '\0');
  uint32_t g = row - grid.extra_zero_rows;
  std::vector<uint32_t> index(grid.axes.size());
  for (size_t a = grid.axes.size(); a-- > 0;) {
    index[a] = g % grid.axes[a].size;
    g /= grid.axes[a].size;
  }
  std::string out;
  for (uint32_t a : grid.channel_order) {
    const GridAxisSpec& axis = grid.axes[a];
    out += GridBlock(grid, axis.channels,
                     uint64_t{axis.first_index + index[a]} * axis.p, axis.q);
  }
  return out;
}

using ::posenc::testing::Sha256Hex;

// "GetTable <name> <dtype> <rows>x<d> sha256=<hex>" of a whole grid table.
void PrintGrid(const char* name, const Grid& grid) {
  std::string bytes;
  for (uint32_t r = 0; r < grid.rows(); ++r) bytes += GridRow(grid, r);
  std::printf("GetTable %s %s %ux%u sha256=%s\n", name, DTypeName(grid.dtype),
              grid.rows(), grid.d(), Sha256Hex(bytes).c_str());
}

// Multi-axis RoPE (EncodingSpec.axes_dim / mrope_section), from the
// libraries' code rather than posenc's: pair j rotates by id[axis(j)] at
// f_j = theta^(-2 i / n). FLUX / diffusers FluxPosEmbed (axes_dim): the
// axes' pairs in turn, axis a's i < axes_dim[a] / 2 with n = axes_dim[a].
// HF Qwen2-VL (mrope_section, head_dim = dim): pair j < dim / 2 with n =
// dim, the temporal id for the first section, the height id for the
// second, the width id for the third. Written in the two-table RoPE
// layouts: rotate_half [cos .. cos | cos .. cos][sin ..| sin ..] and
// interleaved_pairs [cos_0 cos_0 cos_1 ..][sin_0 sin_0 ..].
struct MultiAxis {
  double theta = 10000;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kRotateHalf;
  std::vector<uint32_t> axes_dim;       // FLUX
  uint32_t dim = 0;                     // Qwen2-VL head_dim
  std::vector<uint32_t> mrope_section;  // Qwen2-VL
  uint32_t coordinates() const {
    return static_cast<uint32_t>(axes_dim.empty() ? mrope_section.size()
                                                  : axes_dim.size());
  }
  uint32_t pairs() const {
    uint32_t k = 0;
    for (uint32_t n : axes_dim) k += n / 2;
    return axes_dim.empty() ? dim / 2 : k;
  }
};

std::string MultiAxisRow(const MultiAxis& spec, const double* id) {
  // (axis, i, n) of each pair, in row order.
  struct Pair {
    uint32_t axis, i, n;
  };
  std::vector<Pair> pairs;
  if (!spec.axes_dim.empty()) {
    for (uint32_t a = 0; a < spec.axes_dim.size(); ++a) {
      for (uint32_t i = 0; i < spec.axes_dim[a] / 2; ++i) {
        pairs.push_back({a, i, spec.axes_dim[a]});
      }
    }
  } else {
    uint32_t j = 0;
    for (uint32_t a = 0; a < spec.mrope_section.size(); ++a) {
      for (uint32_t s = 0; s < spec.mrope_section[a]; ++s, ++j) {
        pairs.push_back({a, j, spec.dim});
      }
    }
  }
  std::vector<std::string> cos_bytes, sin_bytes;
  for (const Pair& pair : pairs) {
    for (mpfr_prec_t prec = kEncodePrecision;; prec *= 2) {
      if (prec > 8192) {
        std::fprintf(stderr, "make_golden: cannot round a RoPE value\n");
        std::exit(1);
      }
      mpfr_t e, f, x, sv, cv;
      for (mpfr_ptr v : {e, f, x, sv, cv}) mpfr_init2(v, prec);
      mpfr_set_si(e, -static_cast<long>(2 * pair.i), MPFR_RNDN);
      mpfr_div_ui(e, e, pair.n, MPFR_RNDN);
      mpfr_set_d(f, spec.theta, MPFR_RNDN);
      mpfr_pow(f, f, e, MPFR_RNDN);  // theta^(-2i / n)
      mpfr_set_d(x, id[pair.axis], MPFR_RNDN);
      mpfr_mul(x, x, f, MPFR_RNDN);
      std::string sin_value, cos_value;
      const bool ok = SinCosRounded(x, id[pair.axis] == 0, prec, spec.dtype, sv,
                                    cv, &sin_value, &cos_value);
      if (ok) {
        sin_bytes.push_back(sin_value);
        cos_bytes.push_back(cos_value);
      }
      for (mpfr_ptr v : {e, f, x, sv, cv}) mpfr_clear(v);
      if (ok) break;
    }
  }
  std::string row;
  for (const std::vector<std::string>* half : {&cos_bytes, &sin_bytes}) {
    if (spec.layout == Layout::kRotateHalf) {
      for (int twice = 0; twice < 2; ++twice) {
        for (const std::string& b : *half) row += b;
      }
    } else {  // kInterleavedPairs
      for (const std::string& b : *half) row += b + b;
    }
  }
  return row;
}

// "Encode <name> <dtype> <points>x<width> sha256=<hex>" of multi-axis ids.
void PrintMultiAxis(const char* name, const MultiAxis& spec,
                    const std::vector<double>& ids) {
  std::string bytes;
  const size_t points = ids.size() / spec.coordinates();
  for (size_t p = 0; p < points; ++p) {
    bytes += MultiAxisRow(spec, &ids[p * spec.coordinates()]);
  }
  std::printf("Encode %s %s %zux%u sha256=%s\n", name, DTypeName(spec.dtype),
              points, 4 * spec.pairs(), Sha256Hex(bytes).c_str());
}

// "Encode <name> <dtype> <points>x<width> sha256=<hex>".
void PrintEncode(const char* name, const Encoding& spec,
                 const std::vector<double>& positions) {
  std::string bytes;
  const size_t points = positions.size() / spec.coordinates;
  for (size_t p = 0; p < points; ++p) {
    bytes += EncodingRow(spec, &positions[p * spec.coordinates]);
  }
  std::printf("Encode %s %s %zux%u sha256=%s\n", name, DTypeName(spec.dtype),
              points, spec.width(), Sha256Hex(bytes).c_str());
}

// One transcript line: "<rpc> <name> <dtype> <rows>x<width> sha256=<hex>"
// (width: d, or 2d for the RoPE layouts).
void PrintRows(const char* rpc, const char* name, const Spec& spec,
               const std::vector<uint32_t>& positions,
               const Rope* rope = nullptr) {
  std::string bytes;
  for (uint32_t pos : positions) bytes += Row(spec, pos, rope);
  const bool doubled = spec.layout == Layout::kRotateHalf ||
                       spec.layout == Layout::kInterleavedPairs;
  std::printf("%s %s %s %zux%u sha256=%s\n", rpc, name, DTypeName(spec.dtype),
              positions.size(), doubled ? 2 * spec.d : spec.d,
              Sha256Hex(bytes).c_str());
}

std::vector<uint32_t> Range(uint32_t start, uint32_t end) {
  std::vector<uint32_t> positions;
  for (uint32_t p = start; p < end; ++p) positions.push_back(p);
  return positions;
}

// RoPE scaling `type` with `factor`, M and seq_len, every other parameter
// unset.
Rope MakeRope(RopeType type, double factor, uint32_t m, uint32_t seq_len = 0) {
  Rope rope;
  rope.type = type;
  rope.factor = factor;
  rope.original_max_position_embeddings = m;
  rope.seq_len = seq_len;
  return rope;
}

// Every row of `spec`'s table with RoPE scaling `rope`.
void PrintRopeTable(const char* rpc, const char* name, const Spec& spec,
                    const Rope& rope) {
  PrintRows(rpc, name, spec, Range(0, spec.max_len), &rope);
}

// The routing key's base, written independently of posenc's code: the
// fewest significant digits that read back as `x` (printf %.*e, tried from 1
// to 17 digits), laid out as JavaScript's String(x) (ECMAScript
// Number::toString). Only finite x > 0 occur here.
std::string KeyBase(double x) {
  char text[64];
  for (int precision = 0; precision < 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*e", precision, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  std::string digits;
  const char* e = std::strchr(text, 'e');
  for (const char* c = text; c < e; ++c) {
    if (*c != '.') digits += *c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = static_cast<int>(digits.size());
  const int n = std::atoi(e + 1) + 1;  // x = 0.digits * 10^n
  if (k <= n && n <= 21) return digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return "0." + std::string(-n, '0') + digits;
  const std::string mantissa =
      k == 1 ? digits : digits.substr(0, 1) + "." + digits.substr(1);
  return mantissa + "e" + (n - 1 >= 0 ? "+" : "-") +
         std::to_string(std::abs(n - 1));
}

struct KeyCase {
  const char* name;
  uint32_t d;
  double base;  // 0: unset
  const char* dtype;
  const char* layout;
  const char* frequency;  // "": unset
  const Rope* rope = nullptr;
  double partial_rotary_factor = 0;
};

// 16 lowercase hex digits of FNV-1a 64 over the values' little-endian
// float64 bytes.
std::string ListKey(const std::vector<double>& values) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (double v : values) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int k = 0; k < 8; ++k) {
      h ^= (bits >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(h));
  return text;
}

// ";rope=<type>" and each set field in field-number order (posenc.proto).
std::string RopeKey(const Rope& r) {
  std::string key = std::string(";rope=") + RopeTypeKeyName(r.type);
  auto real = [&key](const char* name, double v) {
    if (v != 0) key += std::string(";") + name + "=" + KeyBase(v);
  };
  auto integer = [&key](const char* name, uint32_t v) {
    if (v != 0) key += std::string(";") + name + "=" + std::to_string(v);
  };
  auto list = [&key](const char* name, const std::vector<double>& v) {
    if (!v.empty()) key += std::string(";") + name + "=" + ListKey(v);
  };
  real("factor", r.factor);
  integer("original_max_position_embeddings",
          r.original_max_position_embeddings);
  integer("seq_len", r.seq_len);
  real("beta_fast", r.beta_fast);
  real("beta_slow", r.beta_slow);
  real("mscale", r.mscale);
  real("mscale_all_dim", r.mscale_all_dim);
  if (r.truncate >= 0) key += r.truncate ? ";truncate=true" : ";truncate=false";
  real("attention_factor", r.attention_factor);
  real("low_freq_factor", r.low_freq_factor);
  real("high_freq_factor", r.high_freq_factor);
  list("short_factor", r.short_factor);
  list("long_factor", r.long_factor);
  return key;
}

// "Key <name> d=..;base=..;dtype=..;layout=..;freq=..[;prf=..][;rope=..]"
// (SCRIPT.md).
void PrintKey(const KeyCase& c) {
  auto or_default = [](const char* value, const char* fallback) {
    return *value != '\0' ? value : fallback;
  };
  // A partial rotary factor in (0, 1] names the table of the rotary
  // dimension int(d * factor): the key carries that d and no factor.
  const double prf = c.partial_rotary_factor;
  const bool fold = prf > 0 && prf <= 1;
  const unsigned d = fold ? static_cast<unsigned>(c.d * prf) : c.d;
  std::string suffix;
  if (prf != 0 && !fold) suffix += ";prf=" + KeyBase(prf);
  if (c.rope != nullptr) suffix += RopeKey(*c.rope);
  std::printf("Key %s d=%u;base=%s;dtype=%s;layout=%s;freq=%s%s\n", c.name, d,
              KeyBase(c.base != 0 ? c.base : 10000).c_str(),
              or_default(c.dtype, "float32"),
              or_default(c.layout, "interleaved"),
              or_default(c.frequency, "paper"), suffix.c_str());
}

}  // namespace

int main() {
  // The script of tests/interop/SCRIPT.md, in order.
  const Spec d4 = {
      4, 10000, 16, DType::kFloat32, Layout::kInterleaved, Frequency::kPaper};
  const Spec d512 = {512,
                     500.5,
                     40,
                     DType::kFloat64,
                     Layout::kConcatSinCos,
                     Frequency::kPaper};
  const Spec d1024 = {
      1024, 1e6, 24, DType::kFloat16, Layout::kInterleaved, Frequency::kT2T};
  const Spec d64 = {64,
                    10000,
                    100,
                    DType::kBFloat16,
                    Layout::kConcatCosSin,
                    Frequency::kPaper};
  PrintRows("GetTable", "d4_f32", d4, Range(0, d4.max_len));
  PrintRows("GetTable", "d512_f64_concat", d512, Range(0, d512.max_len));
  PrintRows("GetTable", "d1024_f16_t2t", d1024, Range(0, d1024.max_len));
  PrintRows("GetTable", "d64_bf16_cossin", d64, Range(0, d64.max_len));

  const Spec rows = {
      512, 10000, 64, DType::kFloat32, Layout::kInterleaved, Frequency::kPaper};
  PrintRows("StreamRows", "d512_f32_5_37", rows, Range(5, 37));
  const Spec batches = {
      256, 10000, 128, DType::kBFloat16, Layout::kInterleaved, Frequency::kT2T};
  PrintRows("StreamBatches", "d256_bf16_t2t_3_100_by7", batches, Range(3, 100));
  const Spec gather = {128,
                       1234.5,
                       64,
                       DType::kFloat16,
                       Layout::kConcatSinCos,
                       Frequency::kPaper};
  PrintRows("GetRows", "d128_f16_concat", gather, {9, 0, 9, 63, 1, 2, 2, 40});

  std::printf("GetTable odd_d INVALID_ARGUMENT\n");
  std::printf("GetRows past_max_len OUT_OF_RANGE\n");
  std::printf("GetTable over_max_message RESOURCE_EXHAUSTED\n");
  std::printf("GetStats max_message_bytes 1048576\n");

  // RoPE (SCRIPT.md, the rope_ lines).
  Rope llama3 = MakeRope(RopeType::kLlama3, 8, 8192);  // Llama 3.1
  llama3.low_freq_factor = 1;
  llama3.high_freq_factor = 4;
  PrintRopeTable("GetTable", "rope_llama3_bf16",
                 {128, 500000, 32, DType::kBFloat16, Layout::kRotateHalf,
                  Frequency::kPaper},
                 llama3);

  Rope yarn = MakeRope(RopeType::kYarn, 32, 4096);  // gpt-oss-like
  yarn.beta_fast = 32;
  yarn.beta_slow = 1;
  yarn.truncate = 0;
  PrintRopeTable("GetTable", "rope_yarn_pairs_f32",
                 {64, 150000, 16, DType::kFloat32, Layout::kInterleavedPairs,
                  Frequency::kPaper},
                 yarn);

  // Phi-3-like, long list (seq_len > M).
  Rope longrope = MakeRope(RopeType::kLongRope, 32, 4096, 8192);
  longrope.short_factor = {1, 1.05, 1.1, 1.25, 1.5, 2, 3, 4.5};
  longrope.long_factor = {1, 1.5, 2.5, 4, 7, 12, 20, 32.5};
  PrintRopeTable("GetTable", "rope_longrope_f64",
                 {16, 10000, 16, DType::kFloat64, Layout::kConcatCosSin,
                  Frequency::kPaper},
                 longrope);

  Rope dynamic = MakeRope(RopeType::kDynamic, 2, 16, 40);
  PrintRopeTable(
      "StreamBatches", "rope_dynamic_f16_by5",
      {32, 10000, 40, DType::kFloat16, Layout::kRotateHalf, Frequency::kPaper},
      dynamic);

  Rope bad_list = longrope;  // 7 short factors for d/2 = 8
  bad_list.short_factor.pop_back();
  std::printf("GetTable rope_bad_list INVALID_ARGUMENT\n");

  // Encode (SCRIPT.md, the Encode lines).
  Encoding flux;  // FLUX timestep_embedding: t in [0, 1], time_factor 1000
  flux.dim = 256;
  flux.layout = Layout::kConcatCosSin;
  flux.scale = 1000;
  PrintEncode("flux_t_f32", flux, {0, 0.25, 0.5, 0.999, 1.0 / 3});
  Encoding sd;  // SD UNet, odd embedding_dim padded
  sd.dim = 321;
  sd.pad_odd_dim = true;
  sd.layout = Layout::kConcatCosSin;
  sd.dtype = DType::kFloat16;
  PrintEncode("sd_pad_f16", sd, {999.5, 0, 1, 500.25, -3.75});
  Encoding diffusers;  // get_timestep_embedding, downscale_freq_shift=1
  diffusers.dim = 64;
  diffusers.layout = Layout::kConcatSinCos;
  diffusers.shift = 1;
  diffusers.dtype = DType::kFloat64;
  PrintEncode("diffusers_shift1_f64", diffusers, {0.001, 999, 123.456});
  Encoding nerf;  // nerfstudio NeRFEncoding(3, 10, 0, 8, include_input)
  nerf.octaves = true;
  nerf.layout = Layout::kConcatSinCos;
  nerf.num_frequencies = 10;
  nerf.min_freq_exp = 0;
  nerf.max_freq_exp = 8;
  nerf.coordinates = 3;
  nerf.include_input = true;
  nerf.dtype = DType::kBFloat16;
  PrintEncode("nerf_bf16", nerf, {0.5, -0.25, 0.1, 0.3, 1, -0.75});
  // Multi-axis RoPE (SCRIPT.md): diffusers' FluxPosEmbed (axes_dim 4, 6, 6,
  // interleaved pairs) on three FLUX ids, and Qwen2-VL's sections (head_dim
  // 16, sections 2, 3, 3, theta 1e6, rotate_half) on a text id and two
  // image ids.
  MultiAxis flux_rope;
  flux_rope.layout = Layout::kInterleavedPairs;
  flux_rope.axes_dim = {4, 6, 6};
  PrintMultiAxis("flux_rope_pairs_f32", flux_rope,
                 {0, 0, 0, 0, 1, 2, 0, 31, 17});
  MultiAxis qwen;
  qwen.theta = 1000000;
  qwen.dtype = DType::kBFloat16;
  qwen.dim = 16;
  qwen.mrope_section = {2, 3, 3};
  PrintMultiAxis("qwen2_mrope_bf16", qwen, {7, 7, 7, 10, 11, 12, 10, 11, 13});
  std::printf("Encode odd_dim INVALID_ARGUMENT\n");
  std::printf("Encode past_limit OUT_OF_RANGE\n");

  // A grid table (SCRIPT.md, grid_crop_f16): SD3-style centre crop of a
  // base_size 8 grid of 24 (positions (first + k) / 3), the column block
  // first, one cls row.
  Grid crop;
  crop.dtype = DType::kFloat16;
  crop.axes = {{3, 16, 10, 1, 3}, {5, 16, 9, 1, 3}};
  crop.channel_order = {1, 0};
  crop.extra_zero_rows = 1;
  PrintGrid("grid_crop_f16", crop);

  // Partial rotary: d=64, prf 0.5 (rotary dimension 32), DeepSeek-style
  // YaRN. Key only.
  Rope yarn_prf = MakeRope(RopeType::kYarn, 40, 4096);
  yarn_prf.beta_fast = 32;
  yarn_prf.beta_slow = 1;
  yarn_prf.mscale = 1;
  yarn_prf.mscale_all_dim = 0.707;
  const KeyCase keys[] = {
      {"d4_f32", 4, 0, "", "", ""},
      {"d512_f64_concat", 512, 500.5, "float64", "concat_sin_cos", ""},
      {"d1024_f16_t2t", 1024, 1e6, "float16", "", "t2t"},
      {"d64_bf16_cossin", 64, 0, "bfloat16", "concat_cos_sin", ""},
      {"d256_bf16_t2t", 256, 0, "bfloat16", "", "t2t"},
      {"d128_f16_concat", 128, 1234.5, "float16", "concat_sin_cos", ""},
      {"base_1e21", 8, 1e21, "", "", ""},
      {"base_5e-324", 8, 5e-324, "", "", ""},
      {"base_0.1", 8, 0.1, "", "", ""},
      {"base_123456789012345680000", 8, 123456789012345680000.0, "", "", ""},
      {"base_1e-7", 8, 1e-7, "", "", ""},
      {"base_1.7976931348623157e308", 8, 1.7976931348623157e308, "", "", ""},
      {"base_0.30000000000000004", 8, 0.30000000000000004, "", "", ""},
      {"base_1e16", 8, 1e16, "", "", ""},
      {"rope_llama3_bf16", 128, 500000, "bfloat16", "rotate_half", "", &llama3},
      {"rope_yarn_pairs_f32", 64, 150000, "float32", "interleaved_pairs", "",
       &yarn},
      {"rope_longrope_f64", 16, 0, "float64", "concat_cos_sin", "", &longrope},
      {"rope_dynamic_f16", 32, 0, "float16", "rotate_half", "", &dynamic},
      {"rope_bad_list", 16, 0, "float64", "concat_cos_sin", "", &bad_list},
      {"rope_yarn_prf", 64, 0, "bfloat16", "rotate_half", "", &yarn_prf, 0.5},
  };
  for (const KeyCase& key : keys) PrintKey(key);
  std::printf(
      "Key grid_crop_f16 d=32;base=10000;dtype=float16;layout=concat_sin_cos;"
      "freq=paper;grid=3:16:10:1/3,5:16:9:1/3;order=1,0;sin_cos=per_axis;"
      "extra=1\n");
  // The worked example, from the reference float32 row, as clients print it.
  const std::string example = Row(d4, 2);
  std::printf("Example d4_pos2");
  for (size_t k = 0; k < 4; ++k) {
    float v;
    std::memcpy(&v, example.data() + 4 * k, 4);
    std::printf(" %.4f", v);
  }
  std::printf("\n");
  return 0;
}
