// The exact (slow) path: correctly rounded sin/cos(pos * f_i) by MPFR with
// Ziv's strategy (raise the working precision until the rounding is decided).
//
// Used for the rare values that the fast paths cannot decide, and for columns
// whose frequency is below 2^-900 (only for bases above ~1e270). About
// 5-20 microseconds per call. Thread-safe (MPFR is built with thread-local
// caches); no shared state.
#ifndef POSENC_CORE_EXACT_SINCOS_MPFR_H_
#define POSENC_CORE_EXACT_SINCOS_MPFR_H_

#include <cstdint>

#include "core/table_spec.h"

namespace posenc {

// Bits (in spec.dtype) of RNE(sin(pos * f_i)) and RNE(cos(pos * f_i)) where
// f_i is the exact real frequency of pair i of `spec`.
// Preconditions: ValidateSpec(spec) is OK, i < spec.d / 2.
void ExactSinCosBits(const TableSpec& spec, uint32_t i, uint32_t pos,
                     uint64_t* sin_bits, uint64_t* cos_bits);

}  // namespace posenc

#endif  // POSENC_CORE_EXACT_SINCOS_MPFR_H_
