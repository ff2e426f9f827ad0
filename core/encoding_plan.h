// EncodingPlan: everything about a table family that does not depend on the
// position (exact frequencies split into double words), built once and then
// used to compute any row exactly (correctly rounded, RNE) in any dtype.
//
// Construction costs O(d) MPFR multiplications (~0.1 ms for d = 512).
// Immutable after construction: ComputeRow is thread-safe and may be called
// concurrently from many threads on one plan.
#ifndef POSENC_CORE_ENCODING_PLAN_H_
#define POSENC_CORE_ENCODING_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/exact_frequency.h"
#include "core/table_spec.h"

namespace posenc {

class EncodingPlan {
 public:
  // Precondition: ValidateSpec(spec) is OK (max_len is ignored).
  explicit EncodingPlan(const TableSpec& spec);

  const TableSpec& spec() const { return spec_; }

  // Writes row `pos` (spec.row_bytes() bytes) to `out`. pos <= 2^24.
  void ComputeRow(uint32_t pos, std::byte* out) const;

  // Columns that take the fast/double-double paths; the rest (frequency
  // below 2^-900, i.e. bases above ~1e270) go straight to MPFR.
  uint32_t fast_columns() const { return fast_columns_; }

  // Writes the two values of pair `column` of row `pos` into `row`, by the
  // scalar rigorous path (fast double or double-double, MPFR fallback).
  void ComputeColumn(uint32_t column, uint32_t pos, std::byte* row) const;

 private:
  void StorePair(uint32_t column, uint64_t sin_bits, uint64_t cos_bits,
                 std::byte* row) const;
  void ComputeRowFloat32(uint32_t pos, std::byte* row) const;
  void ComputeRowFromDoubles(uint32_t pos, std::byte* row) const;

  TableSpec spec_;
  uint32_t half_;
  uint32_t fast_columns_;
  std::vector<FrequencyWords> freq_;
  // w0/w1 of freq_ as arrays, padded to RoundUpToKernelLanes(fast_columns_).
  std::vector<double> w0_, w1_;
};

}  // namespace posenc

#endif  // POSENC_CORE_ENCODING_PLAN_H_
