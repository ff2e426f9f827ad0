// The exact (slow) path: correctly rounded sin/cos(pos * f_i) by MPFR with
// Ziv's strategy (raise the working precision until the rounding is decided).
//
// Used for the rare values that the fast paths cannot decide, and for columns
// whose frequency is below 2^-900 (only for bases above ~1e270). About
// 5-20 microseconds per call. Thread-safe (MPFR is built with thread-local
// caches); no shared state.
#ifndef POSENC_CORE_PLAN_EXACT_SINCOS_MPFR_H_
#define POSENC_CORE_PLAN_EXACT_SINCOS_MPFR_H_

#include <mpfr.h>

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "core/plan/slow_path_budget.h"
#include "core/spec/table_spec.h"

namespace posenc {

// Bits (in spec.dtype) of RNE(sin(pos * f_i)) and RNE(cos(pos * f_i)) where
// f_i is the exact real frequency of pair i of `spec`.
// Preconditions: ValidateSpec(spec) is OK, i < spec.d / 2.
void ExactSinCosBits(const TableSpec& spec, uint32_t i, uint32_t pos,
                     uint64_t* sin_bits, uint64_t* cos_bits);

// Bits (in dtype) of RNE(sin(x * F)) and RNE(cos(x * F)) for a double x and
// a real frequency F that `frequency(out)` evaluates at out's precision w
// (any w >= 64) within 2^(12 - w) * F. Preconditions: x != 0, |x F| <= 2^24,
// and neither sin(x F) nor cos(x F) is zero (an exact zero is never decided
// by an interval: the caller handles whole quarter turns itself).
// Each precision tried is charged to `budget` (unless null) first: false,
// the bits not yet decided set to 0, when it refuses one (budget->status() says
// why).
bool ExactSinCosBitsOfReal(absl::FunctionRef<void(mpfr_ptr)> frequency,
                           double x, DType dtype, SlowPathBudget* budget,
                           uint64_t* sin_bits, uint64_t* cos_bits);

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_EXACT_SINCOS_MPFR_H_
