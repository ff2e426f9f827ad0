// Correct rounding (round-to-nearest, ties-to-even) into the table dtypes,
// including subnormals, and little-endian byte stores.
//
// Pure functions, thread-safe. The double-input functions assume the default
// floating-point environment (round-to-nearest, no flush-to-zero).
#ifndef POSENC_CORE_NUMERICS_ROUNDING_H_
#define POSENC_CORE_NUMERICS_ROUNDING_H_

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/numerics/dtype.h"

namespace posenc {

// Parameters of a binary floating-point dtype.
struct FloatFormat {
  int precision;     // significand bits, including the implicit one
  int min_exponent;  // the smallest normal number is 2^min_exponent
  int exponent_bits;
};

FloatFormat FormatOf(DType dtype);

// Bits of `v` in `dtype`. Precondition: v is exactly representable there.
uint64_t EncodeExact(double v, DType dtype);

// Bits of RNE_dtype(y) for a double y with |y| <= 2.
uint64_t RoundDoubleToBits(double y, DType dtype);

// The interval test of every fast path: given y with |y - t| <= e for the
// exact real t, writes the bits of RNE_dtype(t) and returns true when y - e
// and y + e round (RN, a rounding the callers' margins cover) to the same
// value, or returns false (undecided: the interval may hold a rounding
// boundary, or both signs) and leaves `bits` alone. |y| <= 2, e >= 0.
inline bool RoundWithin(double y, double e, DType dtype, uint64_t* bits) {
  const uint64_t lo = RoundDoubleToBits(y - e, dtype);
  const uint64_t hi = RoundDoubleToBits(y + e, dtype);
  if (lo != hi) return false;
  *bits = lo;
  return true;
}

// The interval test into float16 / bfloat16 without arithmetic on the grid:
// whether every real in [fl(|y| - e), fl(|y| + e)] rounds (RNE) to one
// value, which is then written to `bits` with y's sign. Normal values of
// both formats are the doubles whose low 42 (float16) or 45 (bfloat16)
// bits are zero, their midpoints those whose low bits are the top one of
// that field; positive doubles order as their bits, so the interval holds
// no midpoint (ends included) iff the two keys below agree. Below
// float16's smallest normal the quantum is 2^-24 (its subnormals, and its
// first binade), so both ends are rounded to it by x + 2^28 - 2^28 (exact:
// RNE to a multiple of 2^-24); the bits are then the multiple. False
// (undecided) when the low end is not positive (zero, or a sign change),
// or below bfloat16's smallest normal. |y| <= 2, e >= 0.
inline bool RoundHalf16IfDecided(double y, double e, DType dtype,
                                 uint64_t* bits) {
  const bool bf16 = dtype == DType::kBFloat16;
  const int shift = bf16 ? 45 : 42;
  const double min_normal = bf16 ? 0x1p-126 : 0x1p-14;
  const double ay = y < 0 ? -y : y;
  const double a = ay - e, b = ay + e;
  uint64_t ab, bb, yb;
  if (!(a >= min_normal)) {
    if (bf16 || !(a > 0)) return false;
    const double ra = (a + 0x1p28) - 0x1p28, rb = (b + 0x1p28) - 0x1p28;
    if (ra != rb) return false;
    std::memcpy(&yb, &y, 8);
    *bits = static_cast<uint64_t>(ra * 0x1p24) | ((yb >> 48) & 0x8000);
    return true;
  }
  std::memcpy(&ab, &a, 8);
  std::memcpy(&bb, &b, 8);
  std::memcpy(&yb, &y, 8);
  const uint64_t half = uint64_t{1} << (shift - 1);
  const uint64_t lo = (ab + half - 1) >> shift;
  if (lo != (bb + half) >> shift) return false;
  // Rebias the exponent field from double's 1023 to 127 or 15.
  const uint64_t rebias =
      bf16 ? uint64_t{1023 - 127} << 7 : uint64_t{1023 - 15} << 10;
  *bits = (lo - rebias) | ((yb >> 48) & 0x8000);
  return true;
}

// Bits of RNE_dtype(x) for an MPFR number x with |x| <= 2 (any precision).
uint64_t RoundMpfrToBits(mpfr_srcptr x, DType dtype);

// Writes the low DTypeSize(dtype) bytes of `bits` to `out` little-endian.
inline void StoreBits(uint64_t bits, DType dtype, std::byte* out) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "posenc writes little-endian tables by memcpy");
  switch (dtype) {
    case DType::kFloat64:
      std::memcpy(out, &bits, 8);
      return;
    case DType::kFloat32: {
      const uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(out, &b, 4);
      return;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const uint16_t b = static_cast<uint16_t>(bits);
      std::memcpy(out, &b, 2);
      return;
    }
  }
}

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_ROUNDING_H_
