// RealEncodingPlan: an encoding of real-valued points
// (core/real_encoding_spec.h) with its exact frequencies split into double
// words, built once per call and then used to compute any point's row exactly:
// every value is the exact sin/cos(x * F_i), correctly rounded once (RNE) to
// the dtype.
//
// Each value takes the first path that decides it: the SIMD fast path
// (relative error 2^-47), the double-double path (absolute error 2^-125
// plus 2^-96 relative, so it also decides values near a zero crossing),
// whole quarter turns (octave frequencies with an integer exponent, where
// the exact value is 0 or +-1), then MPFR (Ziv's loop).
//
// Construction costs O(half) MPFR products at 256 bits (~20 us for 160
// frequencies). Immutable after construction: ComputeRows is thread-safe.
#ifndef POSENC_CORE_REAL_ENCODING_PLAN_H_
#define POSENC_CORE_REAL_ENCODING_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/exact_frequency.h"
#include "core/real_encoding_spec.h"

namespace posenc {

class RealEncodingPlan {
 public:
  // INVALID_ARGUMENT as ValidateRealEncodingSpec, or when a frequency
  // (scale included) lies outside [2^-800, 2^24] (naming the fields).
  static absl::StatusOr<RealEncodingPlan> Create(const RealEncodingSpec& spec,
                                                 const SpecLimits& limits);

  const RealEncodingSpec& spec() const { return spec_; }

  // The largest |x| a coordinate may have: 2^24 / F_max, rounded down.
  double max_abs_position() const { return max_abs_position_; }

  // Checks the points of a request: INVALID_ARGUMENT when there are none,
  // more than max_points, or a count that is not a multiple of
  // coordinates; OUT_OF_RANGE naming the first positions[k] that is not
  // finite, or nonzero below 2^-64 in magnitude, or above
  // max_abs_position().
  absl::Status ValidatePositions(absl::Span<const double> positions,
                                 uint32_t max_points) const;

  // Writes the rows of positions.size() / coordinates points to `out`
  // (that many times spec().row_bytes() bytes). Precondition:
  // ValidatePositions is OK.
  void ComputeRows(absl::Span<const double> positions, std::byte* out) const;

  // One point's row (coordinates values at `point`).
  void ComputeRow(const double* point, std::byte* row) const;

 private:
  explicit RealEncodingPlan(const RealEncodingSpec& spec);
  void ComputeCoordinate(uint32_t c, double x, std::byte* row) const;
  // The rigorous per-value paths for pair i of coordinate c.
  void ComputeValue(uint32_t c, uint32_t i, double x, std::byte* row) const;
  void StorePair(uint32_t c, uint32_t i, uint64_t sin_bits, uint64_t cos_bits,
                 std::byte* row) const;
  friend struct RealSlowColumn;

  RealEncodingSpec spec_;
  uint32_t half_ = 0;
  uint32_t pairs_ = 0;  // coordinates * half
  double max_abs_position_ = 0;
  std::vector<FrequencyWords> freq_;
  // Words as arrays, padded to RoundUpToKernelLanes(half_) with copies of
  // the last frequency (so every lane's angle stays within 2^24).
  std::vector<double> w0_, w1_, w2_;
};

}  // namespace posenc

#endif  // POSENC_CORE_REAL_ENCODING_PLAN_H_
