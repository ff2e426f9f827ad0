// The Qwen2-VL batch the multi-axis benchmarks encode (encoding_bench,
// multi_axis_cold), as get_rope_index numbers it: 1024 text tokens
// (p, p, p), a 32 x 32 image (1024, 1024 + h, 1024 + w), then 1024 more text
// tokens from 1056. Three coordinates per point, point after point.
#ifndef POSENC_BENCH_MULTI_AXIS_BATCH_H_
#define POSENC_BENCH_MULTI_AXIS_BATCH_H_

#include <vector>

namespace posenc::bench {

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
