// Independent MPFR reference for RoPE tables: the scaled frequencies f'_i
// and the attention factor a of every scheme, written from the formulas in
// proto/posenc/v1/posenc.proto (RopeType) and HF transformers'
// modeling_rope_utils.py, without calling core/spec/rope.h's functions.
// It differs from core/ on purpose: f_i by mpfr_pow (core: exp/log), the
// YaRN correction dimensions by log2, 512-bit working precision, and every
// decision (ramp ends, Llama 3 bands, the LongRoPE list) taken at that
// precision.
//
// Value = RNE_dtype(a * cos(pos * f'_i)) and RNE_dtype(a * sin(pos * f'_i)).
//
// Not thread-safe (RoundMpfrToBits changes MPFR's exponent range).
#ifndef POSENC_TESTS_NUMERICS_ROPE_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_ROPE_REFERENCE_H_

#include <mpfr.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/spec/rope.h"
#include "core/spec/table_spec.h"

namespace posenc::testing {

class RopeReference {
 public:
  // `rope` null means none (the plain frequencies). d is the rotary
  // dimension. Precondition: the spec is valid (ValidateSpec OK).
  RopeReference(const RopeScaling* rope, uint32_t d, double base);
  ~RopeReference();
  RopeReference(const RopeReference&) = delete;
  RopeReference& operator=(const RopeReference&) = delete;

  // Bits of the value in each dtype, indexed by static_cast<int>(DType).
  std::array<uint64_t, 4> Bits(uint32_t i, uint32_t pos, bool is_sin);

  // f'_i and a as doubles (for messages).
  double Frequency(uint32_t i);
  // f'_i at the first working precision (576 bits; every intermediate
  // carries 64 guard bits over 512), rounded to `out`'s precision.
  void FrequencyMpfr(uint32_t i, mpfr_ptr out);
  double AttentionFactor();

  // How many values needed more than the first working precision.
  uint64_t precision_retries() const { return retries_; }

 private:
  struct Set;  // f'_0 .. f'_{d/2-1} and a at one precision
  Set& SetAt(mpfr_prec_t prec);
  // f'_i of `set`, computed on first use.
  mpfr_ptr FreqAt(Set& set, uint32_t i);

  RopeScaling rope_;  // type kDefault and nothing set when none
  uint32_t d_;
  double base_;
  std::map<mpfr_prec_t, std::unique_ptr<Set>> sets_;
  uint64_t retries_ = 0;
};

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_ROPE_REFERENCE_H_
