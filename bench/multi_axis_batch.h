// The Qwen2-VL batch the multi-axis benchmarks encode (encoding_bench,
// multi_axis_cold), as get_rope_index numbers it: 1024 text tokens
// (p, p, p), a 32 x 32 image (1024, 1024 + h, 1024 + w), then 1024 more text
// tokens from 1056. Three coordinates per point, point after point. And the
// spec they encode it with.
#ifndef POSENC_BENCH_MULTI_AXIS_BATCH_H_
#define POSENC_BENCH_MULTI_AXIS_BATCH_H_

#include <vector>

#include "core/spec/encoding_spec.h"

namespace posenc::bench {

// Qwen2-VL's M-RoPE: head_dim 128, theta 1e6, mrope_section [16, 24, 24],
// rotate_half.
inline EncodingSpec Qwen2VlSpec(DType dtype = DType::kFloat32) {
  EncodingSpec spec;
  spec.dim = 128;
  spec.max_period = 1000000;
  spec.mrope_section = {16, 24, 24};
  spec.coordinates = 3;
  spec.layout = Layout::kRotateHalf;
  spec.dtype = dtype;
  return spec;
}

inline std::vector<double> Qwen2VlBatchIds() {
  std::vector<double> ids;
  for (int p = 0; p < 1024; ++p)
    ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  for (int h = 0; h < 32; ++h) {
    for (int w = 0; w < 32; ++w) {
      ids.insert(ids.end(), {1024.0, 1024.0 + h, 1024.0 + w});
    }
  }
  for (int p = 1056; p < 2080; ++p) {
    ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  }
  return ids;
}

}  // namespace posenc::bench

#endif  // POSENC_BENCH_MULTI_AXIS_BATCH_H_
