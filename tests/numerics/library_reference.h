// MPFR references of the libraries' own calls, written from each library's
// code with its own arguments (not from a posenc spec, and not from core/):
// the exact row that call's formula gives over the real numbers, each value
// rounded once to the dtype. They prove that a preset (presets/presets.h)
// maps a library's arguments to the spec of the same function.
//
// Not thread-safe (the rounding changes the thread's MPFR exponent range).
#ifndef POSENC_TESTS_NUMERICS_LIBRARY_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_LIBRARY_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "core/spec/table_spec.h"

namespace posenc::testing {

// diffusers get_timestep_embedding(t, embedding_dim, flip_sin_to_cos,
// downscale_freq_shift, scale, max_period), one timestep:
//   half = embedding_dim // 2
//   exponent = -ln(max_period) * arange(half) / (half - downscale_freq_shift)
//   emb = scale * t * exp(exponent); emb = cat([sin(emb), cos(emb)])
//   flip_sin_to_cos: cat([emb[half:], emb[:half]]); odd dim: a zero column.
std::vector<uint64_t> DiffusersTimestepRow(double t, uint32_t embedding_dim,
                                           bool flip_sin_to_cos,
                                           double downscale_freq_shift,
                                           double scale, double max_period,
                                           DType dtype);

// guided-diffusion timestep_embedding(t, dim, max_period), and FLUX's
// timestep_embedding(t, dim, max_period, time_factor), which is the same
// of time_factor * t:
//   freqs = exp(-ln(max_period) * arange(half) / half); args = t * freqs
//   cat([cos(args), sin(args)]); odd dim: a zero column.
std::vector<uint64_t> GuidedDiffusionTimestepRow(double t, uint32_t dim,
                                                 double max_period,
                                                 double time_factor,
                                                 DType dtype);

// nerfstudio NeRFEncoding(in_dim, num_frequencies, min_freq_exp,
// max_freq_exp, include_input) of one point x (in_dim values):
//   scaled_in = 2 pi x; freqs = 2^linspace(min, max, n)
//   scaled = (scaled_in[:, None] * freqs).view(in_dim * n)
//   sin(cat([scaled, scaled + pi / 2])); include_input: cat([.., x]).
std::vector<uint64_t> NerfEncodingRow(const std::vector<double>& x,
                                      uint32_t num_frequencies,
                                      double min_freq_exp, double max_freq_exp,
                                      bool include_input, DType dtype);

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_LIBRARY_REFERENCE_H_
