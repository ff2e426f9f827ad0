#include "tests/numerics/mpfr_reference.h"

#include <mpfr.h>

#include <cstring>

namespace posenc::testing {
namespace {

struct Target {
  mpfr_prec_t prec;
  mpfr_exp_t emin;  // MPFR convention: value = m * 2^e, m in [1/2, 1)
  mpfr_exp_t emax;
};

Target TargetOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {24, -148, 128};
    case DType::kFloat64:
      return {53, -1073, 1024};
    case DType::kFloat16:
      return {11, -23, 16};
    case DType::kBFloat16:
      return {8, -132, 128};
  }
  return {24, -148, 128};
}

// Rounds v to the dtype with IEEE semantics (subnormals included) by MPFR's
// own emin/emax + subnormalize machinery; returns the double value (exact).
double RoundLikeIeee(mpfr_srcptr v, DType dtype) {
  if (dtype == DType::kFloat32) return mpfr_get_flt(v, MPFR_RNDN);
  if (dtype == DType::kFloat64) return mpfr_get_d(v, MPFR_RNDN);
  const Target t = TargetOf(dtype);
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  mpfr_t y;
  mpfr_init2(y, t.prec);
  mpfr_set_emin(t.emin);
  mpfr_set_emax(t.emax);
  int inex = mpfr_set(y, v, MPFR_RNDN);
  inex = mpfr_check_range(y, inex, MPFR_RNDN);
  mpfr_subnormalize(y, inex, MPFR_RNDN);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  const double r = mpfr_get_d(y, MPFR_RNDN);
  mpfr_clear(y);
  return r;
}

uint64_t EncodeBits(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case DType::kFloat32: {
      const float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DType::kFloat16: {
      const _Float16 h = static_cast<_Float16>(v);  // exact: v is a float16
      uint16_t b;
      std::memcpy(&b, &h, 2);
      return b;
    }
    case DType::kBFloat16: {
      const float f = static_cast<float>(v);  // exact: v is a bfloat16
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b >> 16;
    }
  }
  return 0;
}

// x = pos * base^(-num/den) and its sin or cos at `prec` bits.
void Evaluate(double base, uint32_t num, uint32_t den, uint32_t pos,
              bool is_sin, mpfr_ptr out) {
  const mpfr_prec_t prec = mpfr_get_prec(out);
  mpfr_t b, e, x;
  mpfr_inits2(prec + 32, b, e, x, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(b, base, MPFR_RNDN);
  mpfr_set_si(e, -static_cast<long>(num), MPFR_RNDN);
  mpfr_div_ui(e, e, den, MPFR_RNDN);
  mpfr_pow(x, b, e, MPFR_RNDN);
  mpfr_mul_ui(x, x, pos, MPFR_RNDN);
  if (is_sin) {
    mpfr_sin(out, x, MPFR_RNDN);
  } else {
    mpfr_cos(out, x, MPFR_RNDN);
  }
  mpfr_clears(b, e, x, static_cast<mpfr_ptr>(nullptr));
}

}  // namespace

uint64_t RoundMpfrToBits(mpfr_srcptr v, DType dtype) {
  return EncodeBits(RoundLikeIeee(v, dtype), dtype);
}

mpfr_prec_t DTypePrecision(DType dtype) { return TargetOf(dtype).prec; }

uint32_t ReferenceDenominator(const TableSpec& spec) {
  return spec.frequency == Frequency::kPaper ? spec.d / 2 : spec.d / 2 - 1;
}

uint64_t ReferenceBits(const TableSpec& spec, uint32_t i, uint32_t pos,
                       bool is_sin) {
  if (pos == 0) return EncodeBits(is_sin ? 0.0 : 1.0, spec.dtype);
  const uint32_t den = ReferenceDenominator(spec);
  for (mpfr_prec_t prec = 256;; prec *= 4) {
    mpfr_t v;
    mpfr_init2(v, prec);
    Evaluate(spec.base, i, den, pos, is_sin, v);
    // The value is within ~2^(30 - prec) relative (pos * f error); only
    // trust the rounding if MPFR agrees it is decided 64 bits below that.
    const bool ok = mpfr_can_round(v, prec - 64, MPFR_RNDN, MPFR_RNDZ,
                                   TargetOf(spec.dtype).prec + 1) != 0;
    const double r = RoundLikeIeee(v, spec.dtype);
    mpfr_clear(v);
    if (ok) return EncodeBits(r, spec.dtype);
  }
}

ReferenceFamily::ReferenceFamily(const TableSpec& spec)
    : spec_(spec), freq_(spec.d / 2, nullptr) {}

ReferenceFamily::~ReferenceFamily() {
  for (void* p : freq_) {
    if (p == nullptr) continue;
    mpfr_clear(static_cast<mpfr_ptr>(p));
    delete static_cast<mpfr_ptr>(p);
  }
}

uint64_t ReferenceFamily::Bits(uint32_t i, uint32_t pos, bool is_sin,
                               DType dtype) {
  if (pos == 0) return EncodeBits(is_sin ? 0.0 : 1.0, dtype);
  if (freq_[i] == nullptr) {
    mpfr_ptr f = new __mpfr_struct;
    mpfr_init2(f, 320);
    mpfr_t b, e;
    mpfr_inits2(320, b, e, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_d(b, spec_.base, MPFR_RNDN);
    mpfr_set_si(e, -static_cast<long>(i), MPFR_RNDN);
    mpfr_div_ui(e, e, ReferenceDenominator(spec_), MPFR_RNDN);
    mpfr_pow(f, b, e, MPFR_RNDN);
    mpfr_clears(b, e, static_cast<mpfr_ptr>(nullptr));
    freq_[i] = f;
  }
  mpfr_t x, v;
  mpfr_inits2(288, x, v, static_cast<mpfr_ptr>(nullptr));
  mpfr_mul_ui(x, static_cast<mpfr_ptr>(freq_[i]), pos, MPFR_RNDN);
  if (is_sin) {
    mpfr_sin(v, x, MPFR_RNDN);
  } else {
    mpfr_cos(v, x, MPFR_RNDN);
  }
  const bool ok = mpfr_can_round(v, 288 - 64, MPFR_RNDN, MPFR_RNDZ,
                                 TargetOf(dtype).prec + 1) != 0;
  const double r = RoundLikeIeee(v, dtype);
  mpfr_clears(x, v, static_cast<mpfr_ptr>(nullptr));
  if (ok) return EncodeBits(r, dtype);
  TableSpec s = spec_;
  s.dtype = dtype;
  return ReferenceBits(s, i, pos, is_sin);
}

double ReferenceValue(double base, uint32_t num, uint32_t den, uint32_t pos,
                      bool is_sin) {
  if (pos == 0) return is_sin ? 0.0 : 1.0;
  mpfr_t v;
  mpfr_init2(v, 256);
  Evaluate(base, num, den, pos, is_sin, v);
  const double r = mpfr_get_d(v, MPFR_RNDN);
  mpfr_clear(v);
  return r;
}

uint64_t ElementBits(const TableSpec& spec, const std::byte* row, size_t col) {
  const size_t size = DTypeSize(spec.dtype);
  uint64_t bits = 0;
  std::memcpy(&bits, row + col * size, size);  // little-endian host
  return bits;
}

size_t ColumnOf(const TableSpec& spec, uint32_t i, bool is_sin) {
  const size_t half = spec.d / 2;
  switch (spec.layout) {
    case Layout::kInterleaved:
      return 2 * size_t{i} + (is_sin ? 0 : 1);
    case Layout::kConcatSinCos:
      return is_sin ? i : half + i;
    case Layout::kConcatCosSin:
      return is_sin ? half + i : i;
    case Layout::kRotateHalf:  // the first of its two places
      return is_sin ? spec.d + size_t{i} : i;
    case Layout::kInterleavedPairs:
      return is_sin ? spec.d + 2 * size_t{i} : 2 * size_t{i};
    case Layout::kRotationMatrix:  // never a table's
      break;
  }
  return 0;
}

double DecodeBits(uint64_t bits, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, &bits, 8);
      return v;
    }
    case DType::kFloat32: {
      const uint32_t b = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case DType::kFloat16: {
      const uint16_t b = static_cast<uint16_t>(bits);
      _Float16 h;
      std::memcpy(&h, &b, 2);
      return static_cast<double>(h);
    }
    case DType::kBFloat16: {
      const uint32_t b = static_cast<uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
  }
  return 0;
}

}  // namespace posenc::testing
