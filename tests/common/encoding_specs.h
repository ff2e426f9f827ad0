// Builders of the EncodingSpecs tests ask for: timestep embeddings, the
// octave scheme, nerfstudio's NeRFEncoding and multi-axis RoPE. Plain field
// assignment, nothing validated.
#ifndef POSENC_TESTS_COMMON_ENCODING_SPECS_H_
#define POSENC_TESTS_COMMON_ENCODING_SPECS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/spec/encoding_spec.h"

namespace posenc::testing {

// The exponential scheme of sinusoidal timestep embeddings: `dim` channels
// in `layout`, max_period 10000, scale 1, float32.
inline EncodingSpec TimestepSpec(uint32_t dim, Layout layout) {
  EncodingSpec spec;
  spec.dim = dim;
  spec.layout = layout;
  return spec;
}

// FLUX timestep_embedding(t, 256) with time_factor 1000: [cos | sin] of
// t * 1000.
inline EncodingSpec FluxTimestepSpec() {
  EncodingSpec spec = TimestepSpec(256, Layout::kConcatCosSin);
  spec.scale = 1000;
  return spec;
}

// Octaves: num_frequencies frequencies 2 pi 2^e, e from min_freq_exp to
// max_freq_exp in equal steps.
inline EncodingSpec OctavesSpec(uint32_t num_frequencies, double min_freq_exp,
                                double max_freq_exp) {
  EncodingSpec spec;
  spec.scheme = FrequencyScheme::kOctaves;
  spec.num_frequencies = num_frequencies;
  spec.min_freq_exp = min_freq_exp;
  spec.max_freq_exp = max_freq_exp;
  return spec;
}

// nerfstudio NeRFEncoding(in_dim, num_frequencies, min_freq_exp,
// max_freq_exp, include_input): octaves, [sin | cos], `in_dim` coordinates.
inline EncodingSpec NerfSpec(uint32_t in_dim, uint32_t num_frequencies,
                             double min_freq_exp, double max_freq_exp,
                             bool include_input) {
  EncodingSpec spec = OctavesSpec(num_frequencies, min_freq_exp, max_freq_exp);
  spec.layout = Layout::kConcatSinCos;
  spec.coordinates = in_dim;
  spec.include_input = include_input;
  return spec;
}

// Multi-axis RoPE by axes (FLUX's EmbedND, timm's axial RoPE): one
// coordinate per entry of axes_dim, each its own block of channels.
inline EncodingSpec AxesSpec(std::vector<uint32_t> axes_dim,
                             Layout layout = Layout::kInterleaved) {
  EncodingSpec spec;
  spec.coordinates = static_cast<uint32_t>(axes_dim.size());
  spec.axes_dim = std::move(axes_dim);
  spec.layout = layout;
  return spec;
}

// Multi-axis RoPE by sections (Qwen2-VL's M-RoPE): `dim` channels at theta
// `max_period`, one coordinate per section.
inline EncodingSpec MRopeSpec(uint32_t dim, double max_period,
                              std::vector<uint32_t> sections,
                              Layout layout = Layout::kInterleaved) {
  EncodingSpec spec = TimestepSpec(dim, layout);
  spec.max_period = max_period;
  spec.coordinates = static_cast<uint32_t>(sections.size());
  spec.mrope_section = std::move(sections);
  return spec;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_ENCODING_SPECS_H_
