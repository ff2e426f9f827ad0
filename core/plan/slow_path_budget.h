// SlowPathBudget: the MPFR work one computation may spend on the values its
// fast paths leave undecided (RealEncodingPlan's last path: Ziv's loop,
// core/plan/exact_sincos_mpfr.h), and the deadline after which it stops.
//
// Why a bound: a value whose angle lies within 2^-k of a multiple of pi/2
// needs about k + 64 bits of MPFR to round, and a request can put every one
// of its angles there. The fuzz campaign's finding
// (encode_octaves_near_quarter_turns, fuzz/README.md#campaigns): an Encode
// of 58 bytes, an octave spec whose 32,768 exponents lie within 1.3e-192 of
// 0, at a point 1.5, has every angle within ~1e-192 of 3 pi / 2, and cost
// 5.9 s of a core (each value a Ziv loop up to 1,024 bits). An ordinary
// request sends a handful of values to MPFR, if any (docs/numerics.md).
//
// Work is counted in units: one Ziv iteration at w bits costs (w / 128)^2
// units, MPFR's sin/cos and exp growing about quadratically at these
// precisions; the 128-bit first try is 1 unit (~10 us on this project's
// machines). Once the units or the deadline run out, Charge refuses every
// further iteration and status() says why; the computation then stops
// early and its output is garbage, to be dropped.
//
//   SlowPathBudget budget(SlowPathBudget::kEncodeUnits, deadline);
//   plan.ComputeRows(points, out, &budget);
//   if (!budget.status().ok()) return budget.status();
//
// Not thread-safe: one budget per computation on one thread.
#ifndef POSENC_CORE_PLAN_SLOW_PATH_BUDGET_H_
#define POSENC_CORE_PLAN_SLOW_PATH_BUDGET_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc {

class SlowPathBudget {
 public:
  // The units of one Encode call: 4,096 first tries, or 64 values that
  // each need 1,024 bits; ~40 ms of a core.
  static constexpr uint64_t kEncodeUnits = 4096;

  explicit SlowPathBudget(uint64_t units,
                          absl::Time deadline = absl::InfiniteFuture())
      : units_(units), deadline_(deadline) {}

  // Takes the units of one Ziv iteration at `bits` (>= 1) of precision.
  // False, now and for every later call, when they do not fit in what is
  // left or the deadline has passed.
  bool Charge(int64_t bits) {
    if (!status_.ok()) return false;
    const uint64_t blocks = static_cast<uint64_t>((bits + 127) / 128);
    const uint64_t cost = blocks * blocks;
    if (cost > units_ - spent_) {
      status_ = absl::ResourceExhaustedError(absl::StrCat(
          "the request's values need more than ", units_,
          " units of exact (MPFR) evaluation: its angles lie too close to "
          "multiples of pi/2 for the fast paths to round (a unit is one "
          "128-bit evaluation); spread the frequencies or the positions"));
      return false;
    }
    if (absl::Now() > deadline_) {
      status_ = absl::DeadlineExceededError(
          "the call's deadline passed during exact (MPFR) evaluation");
      return false;
    }
    spent_ += cost;
    return true;
  }

  // OK, or why Charge refused: RESOURCE_EXHAUSTED (the units) or
  // DEADLINE_EXCEEDED.
  const absl::Status& status() const { return status_; }

  uint64_t spent() const { return spent_; }

 private:
  uint64_t units_;
  uint64_t spent_ = 0;
  absl::Time deadline_;
  absl::Status status_;
};

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_SLOW_PATH_BUDGET_H_
