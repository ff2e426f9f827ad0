// EncodingSpec: the value that names an encoding of real-valued points
// (diffusion timesteps, flow-matching times, NeRF coordinates), as the proto's
// EncodingSpec with defaults applied, and its structural checks.
//
// A point has `coordinates` real values x_c. Its row holds, for each pair
// j = c * half + i (c-major), sin(x_c * F_i) and cos(x_c * F_i), placed by
// `layout` over K = coordinates * half pairs; then one zero column when
// pad_odd_dim; then the coordinates rounded to dtype when include_input.
// F_i = scale * f_i / scale_divisor, f_i the scheme's exact real frequency:
//   kExponential  f_i = max_period^(-i / (half - shift)), half = dim / 2
//   kOctaves      f_k = 2 pi 2^(min + k (max - min) / (n - 1))
// Nothing is rounded before the one final rounding to dtype.
//
// Multi-axis RoPE (axes_dim or mrope_section set; core/spec/multi_axis.h): the
// row has K pairs, pair j rotating by coordinate c_j at its own frequency
// F_j = scale * max_period^(-2 i_j / n_j):
//   axes_dim (FLUX EmbedND, axial 2D RoPE): axis a owns axes_dim[a] / 2
//     consecutive pairs, i < axes_dim[a] / 2, n = axes_dim[a];
//   mrope_section (Qwen2-VL M-RoPE): K = dim / 2 pairs, i_j = j, n = dim;
//     sections of consecutive pairs per coordinate, or, with
//     mrope_interleaved (Qwen3-VL), pair j takes coordinate 1 when
//     j % 3 == 1 and j < 3 s_1, coordinate 2 when j % 3 == 2 and j < 3 s_2,
//     else coordinate 0.
// The layouts place the K pairs (the RoPE layouts and kRotationMatrix hold
// 4K values); no pad column, no included input.
//
//   posenc::EncodingSpec flux;  // FLUX.1: EmbedND(128, 10000, [16, 56, 56])
//   flux.axes_dim = {16, 56, 56};
//   flux.coordinates = 3;
//   flux.layout = posenc::Layout::kRotationMatrix;
//   absl::Status ok = posenc::ValidateEncodingSpec(flux, posenc::SpecLimits{});
//   // then RealEncodingPlan::Create(flux, limits) (core/plan/) computes it
//
// Pure value type; no gRPC. Thread-compatible.
#ifndef POSENC_CORE_SPEC_ENCODING_SPEC_H_
#define POSENC_CORE_SPEC_ENCODING_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/spec/table_spec.h"

namespace posenc {

enum class FrequencyScheme : uint8_t {
  kExponential,  // max_period^(-i / (half - shift)): paper, t2t, diffusers
  kOctaves,      // 2 pi 2^(e_k), e_k = linspace(min, max, n): nerfstudio
};

const char* FrequencySchemeName(FrequencyScheme scheme);

// Bounds that keep every angle within 2^24 and every frequency's words
// normal (the kernels' preconditions; docs/numerics.md).
inline constexpr double kMinRealFrequency = 0x1p-800;
inline constexpr double kMaxRealFrequency = 0x1p24;
inline constexpr double kMinRealScale = 0x1p-24;
inline constexpr double kMaxRealScale = 0x1p24;
inline constexpr double kMinNonzeroPosition = 0x1p-64;
inline constexpr double kMaxAngle = 0x1p24;

struct EncodingSpec {
  // kExponential: channels per coordinate, 2 * half (+1 with pad_odd_dim).
  // kOctaves: 0, or the row width (checked against the derived one).
  uint32_t dim = 0;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kInterleaved;
  FrequencyScheme scheme = FrequencyScheme::kExponential;
  double max_period = kDefaultBase;  // kExponential
  double shift = 0;                  // kExponential
  double scale = 1;
  // Divides every frequency exactly (F_i = scale * f_i / scale_divisor), so
  // a rational position p / q is encoded exactly as the integer x = p with
  // scale_divisor = q (grid tables, core/plan/grid_plan.h). 1..2^32-1; 1 is
  // none. Core only: Encode's proto has no such field and always gets 1.
  uint32_t scale_divisor = 1;
  bool pad_odd_dim = false;
  uint32_t num_frequencies = 0;  // kOctaves
  double min_freq_exp = 0;       // kOctaves
  double max_freq_exp = 0;       // kOctaves
  uint32_t coordinates = 1;
  bool include_input = false;
  // Multi-axis RoPE (at most one of the two lists non-empty): each axis's
  // rotary channels (FLUX `axes_dim`), or Qwen2-VL's `mrope_section`
  // (pairs per coordinate, summing to dim / 2), interleaved as Qwen3-VL.
  std::vector<uint32_t> axes_dim;
  std::vector<uint32_t> mrope_section;
  bool mrope_interleaved = false;

  bool multi_axis() const {
    return !axes_dim.empty() || !mrope_section.empty();
  }
  // Frequencies per coordinate: dim / 2 (kExponential) or num_frequencies.
  // Multi-axis: the row's pairs K (no per-coordinate count).
  uint32_t half() const {
    if (multi_axis()) return MultiAxisPairs();
    return scheme == FrequencyScheme::kExponential ? dim / 2 : num_frequencies;
  }
  // sin/cos pairs per row: coordinates * half(); K when multi-axis.
  uint64_t pairs() const {
    return multi_axis() ? uint64_t{half()} : uint64_t{coordinates} * half();
  }
  // Channels per row (see the file comment).
  uint64_t width() const {
    if (multi_axis())
      return RowWidth(static_cast<uint32_t>(2 * pairs()), layout);
    return 2 * pairs() + (pad_odd_dim ? 1 : 0) +
           (include_input ? coordinates : 0);
  }
  uint64_t row_bytes() const { return width() * DTypeSize(dtype); }

  std::string DebugString() const;

  // Every field equal (doubles by value).
  bool operator==(const EncodingSpec& o) const {
    return dim == o.dim && dtype == o.dtype && layout == o.layout &&
           scheme == o.scheme && max_period == o.max_period &&
           shift == o.shift && scale == o.scale &&
           scale_divisor == o.scale_divisor && pad_odd_dim == o.pad_odd_dim &&
           num_frequencies == o.num_frequencies &&
           min_freq_exp == o.min_freq_exp && max_freq_exp == o.max_freq_exp &&
           coordinates == o.coordinates && include_input == o.include_input &&
           axes_dim == o.axes_dim && mrope_section == o.mrope_section &&
           mrope_interleaved == o.mrope_interleaved;
  }
  bool operator!=(const EncodingSpec& o) const { return !(*this == o); }

 private:
  // sum(axes_dim) / 2, or dim / 2 with mrope_section.
  uint32_t MultiAxisPairs() const;
};

// OK, or INVALID_ARGUMENT naming the field ("spec.dim", ...), its value and
// the rule: the scheme's own fields only (the other scheme's unset), dim
// even in 2..max_d (odd only with pad_odd_dim and one coordinate),
// max_period finite > 1, shift finite < half, scale finite in
// [2^-24, 2^24], scale_divisor >= 1, num_frequencies >= 1, exponents finite
// with min <= max, coordinates in 1..max_d, a width of at most max_d +
// coordinates, no RoPE layout (unless multi-axis), no rotation_matrix layout
// (unless multi-axis); multi-axis specs as ValidateMultiAxisSpec
// (core/spec/multi_axis.h). The frequencies' range is checked where they are
// computed (RealEncodingPlan::Create).
absl::Status ValidateEncodingSpec(const EncodingSpec& spec,
                                  const SpecLimits& limits);

// The number of points in `values` positions of `coordinates` values each:
// INVALID_ARGUMENT (naming `positions`) when there are none, when values is
// not a multiple of coordinates, or for more than max_points points.
absl::StatusOr<uint32_t> CountPoints(size_t values, uint32_t coordinates,
                                     uint32_t max_points);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_ENCODING_SPEC_H_
