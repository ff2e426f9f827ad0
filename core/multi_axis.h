// Multi-axis RoPE encodings (FLUX EmbedND, Qwen2-VL / Qwen2.5-VL M-RoPE,
// Qwen3-VL interleaved M-RoPE, 2D axial RoPE of ViTs): which coordinate
// and which exact frequency each pair of a row has (see
// core/real_encoding_spec.h), and where a pair's sin and cos go in every
// layout (the one definition of the layouts of real-valued encodings).
//
// Pure functions of the spec; thread-safe.
#ifndef POSENC_CORE_MULTI_AXIS_H_
#define POSENC_CORE_MULTI_AXIS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/real_encoding_spec.h"
#include "core/rounding.h"

namespace posenc {

// Pair j of a multi-axis row: it rotates by `coordinate` at frequency
// `index` of the frequency set `set` (MultiAxisFrequencySets).
struct AxisPair {
  uint32_t coordinate = 0;
  uint32_t set = 0;
  uint32_t index = 0;
};

// OK, or INVALID_ARGUMENT naming the field, its value and the rule: one of
// axes_dim / mrope_section; exponential frequencies with shift,
// pad_odd_dim, include_input and the octave fields unset; max_period finite
// > 1; scale in [2^-24, 2^24]; scale_divisor >= 1; axes_dim: each even and >= 2, summing to at
// most max_d, dim unset or that sum; mrope_section: dim even in
// 2..max_d, each section >= 1, summing to dim / 2, exactly 3 sections when
// interleaved; coordinates equal to the number of axes (sections). Every
// layout is valid. Precondition: spec.multi_axis().
absl::Status ValidateMultiAxisSpec(const RealEncodingSpec& spec,
                                   const SpecLimits& limits);

// The one-coordinate exponential specs whose frequencies the pairs take:
// one per axis of axes_dim (dim = axes_dim[a]: frequency i is
// scale * max_period^(-2i / axes_dim[a])), or the one of dim for
// mrope_section (scale * max_period^(-2i / dim)). Precondition:
// ValidateMultiAxisSpec is OK.
std::vector<RealEncodingSpec> MultiAxisFrequencySets(
    const RealEncodingSpec& spec);

// The spec.pairs() pairs of a row, in row order. Precondition:
// ValidateMultiAxisSpec is OK.
std::vector<AxisPair> MultiAxisPairs(const RealEncodingSpec& spec);

// Writes pair j's values (RNE bits of sin and cos in `dtype`) at the
// places `layout` gives them in a row of `pairs` pairs:
//   kInterleaved       sin at 2j, cos at 2j+1
//   kConcatSinCos      sin at j, cos at K+j
//   kConcatCosSin      cos at j, sin at K+j
//   kRotateHalf        cos at j and K+j, sin at 2K+j and 3K+j
//   kInterleavedPairs  cos at 2j and 2j+1, sin at 2K+2j and 2K+2j+1
//   kRotationMatrix    cos, -sin, sin, cos at 4j..4j+3
// -sin is the sign-flipped sin (RNE is symmetric, so it is the exact
// -sin(angle) rounded once; sin +0 gives -0, as FLUX's -torch.sin(0)).
inline void PlacePair(Layout layout, DType dtype, size_t pairs, size_t j,
                      uint64_t sin_bits, uint64_t cos_bits, std::byte* row) {
  const size_t size = DTypeSize(dtype);
  const auto put = [&](size_t col, uint64_t bits) {
    StoreBits(bits, dtype, row + col * size);
  };
  switch (layout) {
    case Layout::kInterleaved:
      put(2 * j, sin_bits);
      put(2 * j + 1, cos_bits);
      return;
    case Layout::kConcatSinCos:
      put(j, sin_bits);
      put(pairs + j, cos_bits);
      return;
    case Layout::kConcatCosSin:
      put(j, cos_bits);
      put(pairs + j, sin_bits);
      return;
    case Layout::kRotateHalf:
      put(j, cos_bits);
      put(pairs + j, cos_bits);
      put(2 * pairs + j, sin_bits);
      put(3 * pairs + j, sin_bits);
      return;
    case Layout::kInterleavedPairs:
      put(2 * j, cos_bits);
      put(2 * j + 1, cos_bits);
      put(2 * pairs + 2 * j, sin_bits);
      put(2 * pairs + 2 * j + 1, sin_bits);
      return;
    case Layout::kRotationMatrix: {
      const uint64_t sign = uint64_t{1} << (8 * size - 1);
      put(4 * j, cos_bits);
      put(4 * j + 1, sin_bits ^ sign);
      put(4 * j + 2, sin_bits);
      put(4 * j + 3, cos_bits);
      return;
    }
  }
}

}  // namespace posenc

#endif  // POSENC_CORE_MULTI_AXIS_H_
