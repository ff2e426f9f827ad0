// Builders of the RoPE scalings tests ask for, one call per scheme: the
// fields a scheme reads, the rest unset (0, empty). Nothing validated.
#ifndef POSENC_TESTS_COMMON_ROPE_SCALINGS_H_
#define POSENC_TESTS_COMMON_ROPE_SCALINGS_H_

#include <cstdint>

#include "core/spec/rope.h"

namespace posenc::testing {

// `type` with `factor` and original_max_position_embeddings `m` (M).
inline RopeScaling Scaling(RopeType type, double factor = 0, uint32_t m = 0) {
  RopeScaling r;
  r.type = type;
  r.factor = factor;
  r.original_max_position_embeddings = m;
  return r;
}

// Dynamic NTK: L = max(seq_len, M).
inline RopeScaling DynamicScaling(double factor, uint32_t m, uint32_t seq_len) {
  RopeScaling r = Scaling(RopeType::kDynamic, factor, m);
  r.seq_len = seq_len;
  return r;
}

// YaRN; beta_fast and beta_slow 0 are unset (32 and 1).
inline RopeScaling YarnScaling(double factor, uint32_t m, double beta_fast = 0,
                               double beta_slow = 0) {
  RopeScaling r = Scaling(RopeType::kYarn, factor, m);
  r.beta_fast = beta_fast;
  r.beta_slow = beta_slow;
  return r;
}

// Llama 3's three bands.
inline RopeScaling Llama3Scaling(double factor, double low_freq_factor,
                                 double high_freq_factor, uint32_t m) {
  RopeScaling r = Scaling(RopeType::kLlama3, factor, m);
  r.low_freq_factor = low_freq_factor;
  r.high_freq_factor = high_freq_factor;
  return r;
}

// LongRoPE; the lists are filled by the caller.
inline RopeScaling LongRopeScaling(double factor, uint32_t m,
                                   uint32_t seq_len = 0) {
  RopeScaling r = Scaling(RopeType::kLongRope, factor, m);
  r.seq_len = seq_len;
  return r;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_ROPE_SCALINGS_H_
