// Independent MPFR reference for the numerics tests: the exact table value
// rounded to a dtype, computed differently from core/ (mpfr_pow instead of
// exp/log, emin/emax + mpfr_subnormalize instead of our own rounding code,
// the compiler's _Float16 for the float16 encoding).
//
// Not thread-safe: temporarily changes MPFR's exponent range of the calling
// thread. Use from one thread.
#ifndef POSENC_TESTS_NUMERICS_MPFR_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_MPFR_REFERENCE_H_

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/spec/table_spec.h"

namespace posenc::testing {

// Exact frequency exponent: f_i = base^(-i / den).
uint32_t ReferenceDenominator(const TableSpec& spec);

// Bits of RNE_dtype(sin or cos of pos * base^(-i/den)), computed at >= 256
// bits (more if the 256-bit value cannot be rounded safely).
uint64_t ReferenceBits(const TableSpec& spec, uint32_t i, uint32_t pos,
                       bool is_sin);

// The same with the frequencies of one table family computed once (by
// mpfr_pow at 320 bits) and reused; falls back to ReferenceBits when the
// 256-bit value is too close to a rounding boundary.
class ReferenceFamily {
 public:
  explicit ReferenceFamily(const TableSpec& spec);
  ~ReferenceFamily();
  ReferenceFamily(const ReferenceFamily&) = delete;
  ReferenceFamily& operator=(const ReferenceFamily&) = delete;

  // `dtype` may differ from spec.dtype (the frequencies do not depend on it).
  uint64_t Bits(uint32_t i, uint32_t pos, bool is_sin, DType dtype);

 private:
  TableSpec spec_;
  std::vector<void*> freq_;  // mpfr_ptr per column, computed on first use
};

// Reads element `col` of a row of `spec` as raw bits.
uint64_t ElementBits(const TableSpec& spec, const std::byte* row, size_t col);

// Column of the sin (or cos) value of pair i in the spec's layout.
size_t ColumnOf(const TableSpec& spec, uint32_t i, bool is_sin);

// Exact value as a double (for error statistics), computed at 256 bits.
double ReferenceValue(double base, uint32_t num, uint32_t den, uint32_t pos,
                      bool is_sin);

// Bits of v rounded once (RNE, IEEE subnormals) to `dtype`, by the same
// MPFR machinery as ReferenceBits.
uint64_t RoundMpfrToBits(mpfr_srcptr v, DType dtype);

// Significand bits of `dtype` (24, 53, 11, 8).
mpfr_prec_t DTypePrecision(DType dtype);

// The value of an element, decoded to double.
double DecodeBits(uint64_t bits, DType dtype);

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_MPFR_REFERENCE_H_
