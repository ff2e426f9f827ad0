// RoPE (rotary position embedding) frequency scaling: the schemes of Hugging
// Face transformers' `rope_scaling` (src/transformers/modeling_rope_utils.py)
// as exact real-number definitions, evaluated with MPFR.
//
// A scheme turns the paper's frequencies f_i = base^(-2i/d) into scaled
// frequencies f'_i = f_i * m_i (every m_i in [1/65536, 1]) and may multiply
// every value by an attention factor a. The formulas are written out in
// proto/posenc/v1/posenc.proto (RopeType); every parameter is the exact real
// value of its double, and every decision (ramp ends, wavelength bands) is
// taken on the real values, at whatever precision decides it.
//
// Pure functions of their arguments; thread-safe.
#ifndef POSENC_CORE_SPEC_ROPE_H_
#define POSENC_CORE_SPEC_ROPE_H_

#include <mpfr.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"

namespace posenc {

enum class RopeType : uint8_t {
  kDefault,
  kLinear,
  kDynamic,
  kYarn,
  kLlama3,
  kLongRope,
};

const char* RopeTypeName(RopeType type);  // HF's rope_type: "yarn", ...

// Bounds of the scheme parameters (INVALID_ARGUMENT outside them).
inline constexpr double kMaxRopeFactor = 65536;  // factor, long/short_factor
inline constexpr uint32_t kMaxRopeLength = 1u << 24;  // M, seq_len

// A scheme and its parameters as the request gave them: 0 means unset
// wherever the proto says so (beta_fast 0 is 32, beta_slow 0 is 1,
// truncate unset is true).
struct RopeScaling {
  RopeType type = RopeType::kDefault;
  double factor = 0;
  uint32_t original_max_position_embeddings = 0;  // M
  uint32_t seq_len = 0;
  double beta_fast = 0;
  double beta_slow = 0;
  double mscale = 0;
  double mscale_all_dim = 0;
  std::optional<bool> truncate;
  double attention_factor = 0;
  double low_freq_factor = 0;
  double high_freq_factor = 0;
  std::vector<double> short_factor;
  std::vector<double> long_factor;

  bool operator==(const RopeScaling& o) const {
    return type == o.type && factor == o.factor &&
           original_max_position_embeddings ==
               o.original_max_position_embeddings &&
           seq_len == o.seq_len && beta_fast == o.beta_fast &&
           beta_slow == o.beta_slow && mscale == o.mscale &&
           mscale_all_dim == o.mscale_all_dim && truncate == o.truncate &&
           attention_factor == o.attention_factor &&
           low_freq_factor == o.low_freq_factor &&
           high_freq_factor == o.high_freq_factor &&
           short_factor == o.short_factor && long_factor == o.long_factor;
  }
  template <typename H>
  friend H AbslHashValue(H h, const RopeScaling& r) {
    return H::combine(std::move(h), r.type, r.factor,
                      r.original_max_position_embeddings, r.seq_len,
                      r.beta_fast, r.beta_slow, r.mscale, r.mscale_all_dim,
                      r.truncate, r.attention_factor, r.low_freq_factor,
                      r.high_freq_factor, r.short_factor, r.long_factor);
  }
};

// OK, or INVALID_ARGUMENT naming the field ("spec.rope.factor", ...), the
// value and the rule, for a scheme used with rotary dimension `d`.
absl::Status ValidateRope(const RopeScaling& rope, uint32_t d);

// Whether every value is multiplied by an attention factor other than
// exactly 1.
bool HasAttentionFactor(const RopeScaling& rope);

// The real attention factor a, to `out`'s precision w (>= 64) with
// |out - a| <= 2^(8 - w) * a. Precondition: ValidateRope is OK.
void AttentionFactorMpfr(const RopeScaling& rope, mpfr_ptr out);

// f'_i of pair i of the table with rotary dimension d and `base`, to `out`'s
// precision w (>= 64) with |out - f'_i| <= 2^(12 - w) * f'_i, as
// FrequencyMpfr (core/spec/exact_frequency.h) for the plain table.
// Precondition: ValidateRope(rope, d) is OK, i < d / 2.
void ScaledFrequencyMpfr(const RopeScaling& rope, uint32_t d, double base,
                         uint32_t i, mpfr_ptr out);

// All d/2 scaled frequencies at 192 bits (relative error <= 2^-180 each),
// for ExactFrequencies: f_i as powers of f_1 (one MPFR product each, not an
// exponential), then the scheme's multiplier. Precondition: as
// ScaledFrequencyMpfr.
// `out` holds d/2 MPFR numbers initialised by the caller with precision 192.
void ScaledFrequencies192(const RopeScaling& rope, uint32_t d, double base,
                          mpfr_ptr out);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_ROPE_H_
