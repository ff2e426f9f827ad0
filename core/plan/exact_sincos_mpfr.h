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

// An angle x is tiny when 0 < |x| < 2^-27: cos x lies in (1 - 2^-55, 1).
// Callers test an approximation against kTinyAngle = 2^-28, leaving margin.
inline constexpr double kTinyAngle = 0x1p-28;

// Bits (in spec.dtype) of RNE(a cos x), one value for every tiny x, where a
// is the spec's attention factor (1 without one). False when they cannot be
// proved one value (a factor from the formulas within ~2^-57 of a rounding
// boundary); then each value takes the Ziv loop.
//
// Why: a cos x lies just below a, and an explicit factor is a double that
// may be a tie of a narrower dtype (1 + 2^-11 in float16). An interval
// around an approximation then straddles the tie until the precision
// exceeds -2 log2(x) bits: a GetTable of 24 rows at base 1e300 cost 9 s of
// a core (the fuzz campaign's finding get_table_yarn_tie_factor). The open
// interval (a - a 2^-54, a) holds no rounding boundary of any dtype, so
// RNE is constant on it and one point of it decides every tiny angle.
bool TinyAngleCosBits(const TableSpec& spec, uint64_t* bits);

// Ziv iterations (MPFR evaluations of sin/cos) run on the calling thread
// since it started: how a test sees the slow path's work without a clock.
uint64_t ZivIterationsOnThisThread();

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
