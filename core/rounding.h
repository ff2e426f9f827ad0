// Correct rounding (round-to-nearest, ties-to-even) into the table dtypes,
// including subnormals, and little-endian byte stores.
//
// Pure functions, thread-safe. The double-input functions assume the default
// floating-point environment (round-to-nearest, no flush-to-zero).
#ifndef POSENC_CORE_ROUNDING_H_
#define POSENC_CORE_ROUNDING_H_

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/table_spec.h"

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

#endif  // POSENC_CORE_ROUNDING_H_
