// Multi-axis RoPE encodings (FLUX EmbedND, Qwen2-VL / Qwen2.5-VL M-RoPE,
// Qwen3-VL interleaved M-RoPE, 2D axial RoPE of ViTs): which coordinate
// and which exact frequency each pair of a row has (see
// core/spec/encoding_spec.h), and where a pair's sin and cos go in every
// layout (the one definition of the layouts of real-valued encodings).
//
// Pure functions of the spec; thread-safe.
#ifndef POSENC_CORE_SPEC_MULTI_AXIS_H_
#define POSENC_CORE_SPEC_MULTI_AXIS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/spec/encoding_spec.h"

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
// > 1; scale in [2^-24, 2^24]; scale_divisor >= 1; axes_dim: each even and >=
// 2, summing to at most max_d, dim unset or that sum; mrope_section: dim even
// in 2..max_d, each section >= 1, summing to dim / 2, exactly 3 sections when
// interleaved; coordinates equal to the number of axes (sections). Every
// layout is valid. Precondition: spec.multi_axis().
absl::Status ValidateMultiAxisSpec(const EncodingSpec& spec,
                                   const SpecLimits& limits);

// The one-coordinate exponential specs whose frequencies the pairs take:
// one per axis of axes_dim (dim = axes_dim[a]: frequency i is
// scale * max_period^(-2i / axes_dim[a])), or the one of dim for
// mrope_section (scale * max_period^(-2i / dim)). Precondition:
// ValidateMultiAxisSpec is OK.
std::vector<EncodingSpec> MultiAxisFrequencySets(const EncodingSpec& spec);

// The spec.pairs() pairs of a row, in row order. Precondition:
// ValidateMultiAxisSpec is OK.
std::vector<AxisPair> MultiAxisPairs(const EncodingSpec& spec);

// Where pair j's values go in a row of `pairs` pairs (the one definition
// of the layouts of real-valued encodings), for elements of type T (the
// dtype's bits: uint16_t, uint32_t or uint64_t):
//   kInterleaved       sin at 2j, cos at 2j+1
//   kConcatSinCos      sin at j, cos at K+j
//   kConcatCosSin      cos at j, sin at K+j
//   kRotateHalf        cos at j and K+j, sin at 2K+j and 3K+j
//   kInterleavedPairs  cos at 2j and 2j+1, sin at 2K+2j and 2K+2j+1
//   kRotationMatrix    cos, -sin, sin, cos at 4j..4j+3
// -sin is the sign-flipped sin (RNE is symmetric, so it is the exact
// -sin(angle) rounded once; sin +0 gives -0, as FLUX's -torch.sin(0)).
// `row` is aligned to T (as the kernels' rows are).
template <typename T>
inline void PlaceBits(Layout layout, size_t pairs, size_t j, T sin_bits,
                      T cos_bits, T* row) {
  switch (layout) {
    case Layout::kInterleaved:
      row[2 * j] = sin_bits;
      row[2 * j + 1] = cos_bits;
      return;
    case Layout::kConcatSinCos:
      row[j] = sin_bits;
      row[pairs + j] = cos_bits;
      return;
    case Layout::kConcatCosSin:
      row[j] = cos_bits;
      row[pairs + j] = sin_bits;
      return;
    case Layout::kRotateHalf:
      row[j] = cos_bits;
      row[pairs + j] = cos_bits;
      row[2 * pairs + j] = sin_bits;
      row[3 * pairs + j] = sin_bits;
      return;
    case Layout::kInterleavedPairs:
      row[2 * j] = cos_bits;
      row[2 * j + 1] = cos_bits;
      row[2 * pairs + 2 * j] = sin_bits;
      row[2 * pairs + 2 * j + 1] = sin_bits;
      return;
    case Layout::kRotationMatrix: {
      constexpr T kSign = static_cast<T>(T{1} << (8 * sizeof(T) - 1));
      row[4 * j] = cos_bits;
      row[4 * j + 1] = static_cast<T>(sin_bits ^ kSign);
      row[4 * j + 2] = sin_bits;
      row[4 * j + 3] = cos_bits;
      return;
    }
  }
}

// PlaceBits for one pair given as 64-bit words of `dtype`.
inline void PlacePair(Layout layout, DType dtype, size_t pairs, size_t j,
                      uint64_t sin_bits, uint64_t cos_bits, std::byte* row) {
  switch (dtype) {
    case DType::kFloat64:
      PlaceBits<uint64_t>(layout, pairs, j, sin_bits, cos_bits,
                          reinterpret_cast<uint64_t*>(row));
      return;
    case DType::kFloat32:
      PlaceBits<uint32_t>(layout, pairs, j, static_cast<uint32_t>(sin_bits),
                          static_cast<uint32_t>(cos_bits),
                          reinterpret_cast<uint32_t*>(row));
      return;
    case DType::kFloat16:
    case DType::kBFloat16:
      PlaceBits<uint16_t>(layout, pairs, j, static_cast<uint16_t>(sin_bits),
                          static_cast<uint16_t>(cos_bits),
                          reinterpret_cast<uint16_t*>(row));
      return;
  }
}

// Pairs src, src + 1, ... of a computed row that go to pairs dst,
// dst + stride, dst + 2 stride, ... of the output row (stride 3: a
// coordinate of Qwen3-VL's interleaved sections).
struct PairRun {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t count = 0;
  uint32_t stride = 1;
};

// The runs of the mapping pair dst[m] <- pair src[m], m < n: consecutive m
// with src stepping by one and dst by a constant step > 0 (the second pair
// of a run sets it) merged into one run.
std::vector<PairRun> PairRuns(const uint32_t* src, const uint32_t* dst,
                              size_t n);

// Places the runs: pair r.dst + m * r.stride of the row (of `pairs` pairs)
// takes sin sin[r.src + m] and cos cos[r.src + m] (arrays of `dtype` bits),
// m < r.count. One dispatch on layout and dtype for the whole row; each
// run is a loop with no calls (a copy of each half for the contiguous
// layouts at stride 1). `sin`, `cos` and `row` do not overlap.
void PlaceRuns(Layout layout, DType dtype, size_t pairs, const PairRun* runs,
               size_t n, const std::byte* sin, const std::byte* cos,
               std::byte* row);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_MULTI_AXIS_H_
