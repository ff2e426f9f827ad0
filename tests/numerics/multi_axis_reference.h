// Independent MPFR reference for multi-axis RoPE encodings, written from
// the libraries' code rather than from core/:
//   FLUX EmbedND / math.rope: omega = 1 / theta^(arange(0, d, 2) / d) per
//     axis, the axes concatenated, out = [[cos, -sin], [sin, cos]];
//   HF Qwen2-VL: inv_freq = theta^(-arange(0, dim, 2) / dim), emb =
//     cat(freqs, freqs) per coordinate, then apply_multimodal_rotary_pos_emb
//     splits emb by mrope_section * 2 and chunk m takes coordinate m % n;
//   HF Qwen3-VL: apply_interleaved_mrope on freqs (slices offset:3 s:3);
//   timm RotaryEmbeddingCat: FLUX's bands, repeat_interleave(2).
// Each value is sin/cos(scale * x * f / scale_divisor) at 320+ bits, rounded by
// the tests' own IEEE rounding (tests/numerics/mpfr_reference.h).
//
// Not thread-safe (that rounding changes the thread's MPFR exponent range).
#ifndef POSENC_TESTS_NUMERICS_MULTI_AXIS_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_MULTI_AXIS_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "core/spec/encoding_spec.h"

namespace posenc::testing {

// The whole row of the point (spec.coordinates values) as element bits, in
// spec.layout, by the libraries' definitions above.
std::vector<uint64_t> MultiAxisReferenceRow(const EncodingSpec& spec,
                                            const double* point);

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_MULTI_AXIS_REFERENCE_H_
