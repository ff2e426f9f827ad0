// Independent MPFR reference for the encodings of real-valued points
// (core/spec/encoding_spec.h), written from the libraries' formulas rather
// than from core/: diffusers' and GLIDE's exp(-ln(max_period) i /
// (half - shift)) as mpfr_pow(max_period, -i / (half - shift)), nerfstudio's
// 2 pi 2^linspace(min, max, n) as mpfr_ui_pow(2, e) at each exponent, then
// sin/cos of scale * x * f / scale_divisor at 320+ bits, rounded by the tests'
// own IEEE rounding (tests/numerics/mpfr_reference.h).
//
// Not thread-safe (that rounding changes the thread's MPFR exponent range).
#ifndef POSENC_TESTS_NUMERICS_REAL_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_REAL_REFERENCE_H_

#include <cstddef>
#include <cstdint>

#include "core/spec/encoding_spec.h"

namespace posenc::testing {

// Bits of RNE_dtype(sin or cos(scale * x * f_i / scale_divisor)). An exact
// zero (and one) is decided exactly, not by a threshold: whole quarter
// turns, x scale 2^(e_i + 2) / scale_divisor an integer for an octave frequency
// with an integer exponent e_i (zeros are +0); every other value is nonzero and
// rounded from MPFR at a precision that decides it, however tiny (a tiny
// negative value is -0, e.g. sin(pi (1 + 2^-600))).
uint64_t RealReferenceBits(const EncodingSpec& spec, uint32_t i, double x,
                           bool is_sin);

// Column of the sin (or cos) value of pair i of coordinate c, by the
// layout's definition in proto/posenc/v1/posenc.proto.
size_t RealColumnOf(const EncodingSpec& spec, uint32_t c, uint32_t i,
                    bool is_sin);

// Element `col` of a row as raw bits.
uint64_t RealElementBits(const EncodingSpec& spec, const std::byte* row,
                         size_t col);

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_REAL_REFERENCE_H_
