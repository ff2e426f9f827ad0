// PlainTablePlan: everything about a plain table family (positions
// 0..max_len-1, no grid) that does not depend on the
// position (exact frequencies split into double words), built once and then
// used to compute any row exactly (correctly rounded, RNE) in any dtype.
//
// Construction costs O(d) MPFR multiplications (~0.1 ms for d = 512; RoPE
// scaling adds its multiplier per frequency: O(d) further MPFR operations,
// no exponential; the scaled frequencies take 0.1-1.3 ms at d = 4096, see
// ScaledFrequencies192).
//
// RoPE: the RoPE layouts (rows holding each value twice) are computed as
// LAYOUT_CONCAT_COS_SIN by an inner plan and expanded. A RoPE attention
// factor a (core/spec/rope.h): single rows take a per-value path that rounds
// a * sin and a * cos once; ranges fold a into the angle-addition anchor
// rows (a * sin(p0 f), a * cos(p0 f)) so the identity yields a * sin and
// a * cos directly, with the absolute slack doubled when a > 1
// (docs/numerics.md, "Attention factors").
// Grid tables are GridPlan's (core/plan/grid_plan.h), which builds its
// axes from plain plans; EncodingPlan (core/plan/encoding_plan.h) picks
// between the two for any TableSpec.
// Immutable after construction: ComputeRow is thread-safe and may be called
// concurrently from many threads on one plan.
#ifndef POSENC_CORE_PLAN_PLAIN_TABLE_PLAN_H_
#define POSENC_CORE_PLAN_PLAIN_TABLE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/numerics/kernel_vector.h"
#include "core/spec/exact_frequency.h"
#include "core/spec/table_spec.h"

namespace posenc {

class PlainTablePlan {
 public:
  // Preconditions: ValidateSpec(spec) is OK (max_len is ignored) and
  // spec.grid == nullptr.
  explicit PlainTablePlan(const TableSpec& spec);

  const TableSpec& spec() const { return spec_; }

  // Writes row `pos` (spec.row_bytes() bytes) to `out`. pos <= 2^24.
  void ComputeRow(uint32_t pos, std::byte* out) const;

  // Writes rows [first, first + count) to `out` (count * row_bytes bytes),
  // first + count <= 2^24 + 1. Same bytes as ComputeRow per row; ranges
  // use angle addition (float64: double-double, ranges of >= 128 rows) from
  // anchor rows (core/numerics/angle_addition.h), whose per-plan table is built
  // on first use (thread-safe).
  void ComputeRows(uint32_t first, uint32_t count, std::byte* out) const;

  // Row step K between anchors of the angle-addition path for this plan
  // (0 if the path is not used: no fast columns).
  // Builds the per-plan table if needed.
  uint32_t AngleAdditionStep() const;

  // Bytes this plan holds: its frequencies and kernel arrays, its inner
  // plan's, and its angle-addition table once built (<= 1 MiB; ComputeRows
  // of >= 16 rows builds it).
  size_t MemoryBytes() const;

  // Writes the two values of pair `column` of row `pos` into `row`, by the
  // scalar rigorous path (fast double or double-double, MPFR fallback).
  void ComputeColumn(uint32_t column, uint32_t pos, std::byte* row) const;

 private:
  void StorePair(uint32_t column, uint64_t sin_bits, uint64_t cos_bits,
                 std::byte* row) const;
  // RoPE layouts: expands `count` rows of the inner plan (concat_cos_sin,
  // d values each) into this layout's 2d-value rows.
  void ExpandRows(const std::byte* inner, uint32_t count, std::byte* out) const;
  // Row `pos` with the attention factor (scaled_): every value by the
  // per-value path, vector sin/cos first where the dtype allows.
  void ComputeRowScaled(uint32_t pos, std::byte* row) const;
  void ComputeRowFloat32(uint32_t pos, std::byte* row) const;
  void ComputeRowFromDoubles(uint32_t pos, std::byte* row) const;
  // sin/cos(pos * f_column) in double within 2^-52.9 relative (double-double
  // path, MPFR if that is risky).
  void AccurateSinCos(uint32_t column, uint32_t pos, double* s,
                      double* c) const;
  // sin/cos(p0 * f_i) of the fast columns into s0/c0 within kFastRelError;
  // false if no SIMD target.
  bool ComputeAnchor(uint32_t p0, double* s0, double* c0, uint8_t* risky) const;
  // Double-double sin/cos(pos * f_i) of the fast columns (NaN hi words
  // where risky), SIMD when available.
  void DdSinCosColumns(uint32_t pos, double* s_hi, double* s_lo, double* c_hi,
                       double* c_lo) const;
  // Float64 rows [first, first + count) by double-double angle addition;
  // returns the first row not written (first if the path is unavailable).
  uint32_t ComputeRowsFloat64(uint32_t first, uint32_t count,
                              std::byte* out) const;
  struct AngleTable;
  const AngleTable& GetAngleTable() const;

  TableSpec spec_;
  uint32_t half_;
  // RoPE layouts: the same table as concat_cos_sin (null otherwise).
  std::shared_ptr<const PlainTablePlan> inner_;
  // RoPE attention factor a != 1: a = attn_hi_ + attn_lo_ within 2^-106.
  bool scaled_ = false;
  double attn_hi_ = 1, attn_lo_ = 0;
  // Columns that take the fast/double-double paths (a prefix: f_i
  // decreases); the rest (frequency below 2^-900, i.e. bases above ~1e270)
  // go straight to MPFR.
  uint32_t fast_columns_;
  // TinyAngleCosBits of spec_ (core/plan/exact_sincos_mpfr.h), when proved:
  // the value of a cos x for every angle below kTinyAngle, which the fast
  // checks cannot decide when a is a tie of the dtype.
  bool has_tiny_angle_cos_ = false;
  uint64_t tiny_angle_cos_bits_ = 0;
  std::vector<FrequencyWords> freq_;
  // w0/w1 of freq_ as arrays, padded to RoundUpToKernelLanes(fast_columns_).
  KernelVector<double> w0_, w1_;
  KernelVector<double> w2_;  // third words, padded likewise (float64 ranges)
  // Lazily built sin/cos(j * f_i) table of the angle-addition path, shared
  // by copies of the plan (immutable once built).
  std::shared_ptr<AngleTable> angle_;
};

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_PLAIN_TABLE_PLAN_H_
