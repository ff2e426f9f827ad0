// The table schemes the benchmarks compare: the plain tables (paper, t2t)
// and every RoPE scheme as a client would send it (LAYOUT_ROTATE_HALF: HF's
// layout, 2d values a row), with the parameters of the models that use
// them. Shared by bench/cold_rows_cpu.cc and bench/scheme_cold_ratio.cc.
#ifndef POSENC_BENCH_ROPE_SCHEMES_H_
#define POSENC_BENCH_ROPE_SCHEMES_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "core/spec/rope.h"
#include "core/spec/table_spec.h"

namespace posenc {
namespace bench_schemes {

struct Scheme {
  const char* name;
  TableSpec (*make)(uint32_t d, uint32_t max_len);
};

inline TableSpec Plain(uint32_t d, uint32_t max_len) {
  TableSpec s;
  s.d = d;
  s.max_len = max_len;
  return s;
}
inline TableSpec T2T(uint32_t d, uint32_t max_len) {
  TableSpec s = Plain(d, max_len);
  s.layout = Layout::kConcatSinCos;
  s.frequency = Frequency::kT2T;
  return s;
}
inline TableSpec Rope(uint32_t d, uint32_t max_len, RopeScaling r) {
  TableSpec s = Plain(d, max_len);
  s.layout = Layout::kRotateHalf;
  s.rope = std::make_shared<const RopeScaling>(std::move(r));
  return s;
}
inline TableSpec RopeDefault(uint32_t d, uint32_t max_len) {
  TableSpec s = Plain(d, max_len);
  s.layout = Layout::kRotateHalf;  // rope null: HF's default scheme
  return s;
}
inline TableSpec RopeLinear(uint32_t d, uint32_t max_len) {
  RopeScaling r;
  r.type = RopeType::kLinear;
  r.factor = 4;
  return Rope(d, max_len, r);
}
inline TableSpec RopeDynamic(uint32_t d, uint32_t max_len) {
  RopeScaling r;
  r.type = RopeType::kDynamic;
  r.factor = 2;
  r.original_max_position_embeddings = 4096;
  r.seq_len = max_len;
  return Rope(d, max_len, r);
}
inline TableSpec RopeYarn(uint32_t d, uint32_t max_len) {  // Qwen2.5-YaRN
  RopeScaling r;
  r.type = RopeType::kYarn;
  r.factor = 4;
  r.original_max_position_embeddings = 32768;
  return Rope(d, max_len, r);  // attention factor 0.1 ln 4 + 1
}
inline TableSpec RopeLlama3(uint32_t d, uint32_t max_len) {  // Llama 3.1
  RopeScaling r;
  r.type = RopeType::kLlama3;
  r.factor = 8;
  r.low_freq_factor = 1;
  r.high_freq_factor = 4;
  r.original_max_position_embeddings = 8192;
  return Rope(d, max_len, r);
}
inline TableSpec RopeLongRope(uint32_t d, uint32_t max_len) {  // Phi-3-like
  RopeScaling r;
  r.type = RopeType::kLongRope;
  r.factor = 32;  // attention factor sqrt(1 + ln 32 / ln 4096)
  r.original_max_position_embeddings = 4096;
  r.seq_len = 131072;  // > M: long_factor
  for (uint32_t i = 0; i < d / 2; ++i) {
    r.short_factor.push_back(1.0 + 0.0009765625 * i);
    r.long_factor.push_back(1.0 + 0.0137 * i);
  }
  return Rope(d, max_len, r);
}

inline const Scheme kSchemes[] = {
    {"paper", Plain},
    {"t2t", T2T},
    {"rope-default", RopeDefault},
    {"rope-linear", RopeLinear},
    {"rope-dynamic", RopeDynamic},
    {"rope-yarn", RopeYarn},
    {"rope-llama3", RopeLlama3},
    {"rope-longrope", RopeLongRope},
};
}  // namespace bench_schemes
}  // namespace posenc

#endif  // POSENC_BENCH_ROPE_SCHEMES_H_
