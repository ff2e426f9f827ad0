// GridPlan: computes any rows of a grid table (core/spec/grid_spec.h) exactly:
// every value the exact sin/cos(x_k * f_i) of its axis's rational position,
// rounded once (RNE) to the dtype.
//
// Each axis's block depends on that axis's point only, so a range of rows
// computes each distinct point of each axis it touches once (a 64x64 grid
// has 64 per axis) and copies the blocks into the rows. An axis's blocks
// come from a RealEncodingPlan with x = (first_index + k) * numerator and
// scale_divisor = denominator, so the rational position is never rounded;
// an axis of 1024 or more integer positions (numerator / denominator
// reduces to 1) from a PlainTablePlan instead (angle addition, faster per
// row, but its per-plan tables cost more than a few dozen points: 5x in
// float64). The
// work of a range is at most that of computing its rows directly, and its
// scratch memory is bounded (kScratchBytes per block of rows).
//
// Construction builds one plan per axis (O(channels) MPFR products).
// Immutable after construction: ComputeRow/ComputeRows are thread-safe.
#ifndef POSENC_CORE_PLAN_GRID_PLAN_H_
#define POSENC_CORE_PLAN_GRID_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/plan/plain_table_plan.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/table_spec.h"

namespace posenc {

class GridPlan {
 public:
  // Precondition: spec.grid != nullptr and ValidateSpec(spec) is OK.
  explicit GridPlan(const TableSpec& spec);

  const TableSpec& spec() const { return spec_; }

  // Writes row `row` (< spec.max_len) to `out` (spec.row_bytes() bytes).
  void ComputeRow(uint32_t row, std::byte* out) const;

  // Writes rows [first, first + count) to `out` (count * spec.row_bytes()
  // bytes); first + count <= spec.max_len. Same bytes as ComputeRow.
  void ComputeRows(uint32_t first, uint32_t count, std::byte* out) const;

  // Bytes this plan holds: its axes' plans (PlainTablePlan::MemoryBytes,
  // RealEncodingPlan::MemoryBytes).
  size_t MemoryBytes() const;

 private:
  struct Axis {
    uint32_t size = 0;
    uint32_t channels = 0;
    uint32_t first_index = 0;
    uint32_t numerator = 1;  // reduced
    uint64_t stride = 1;     // grid rows per step of this axis
    // kPerAxis: the block's first channel; kGrouped: its first half's (the
    // second half's is d/2 later).
    size_t offset = 0;
    std::shared_ptr<const PlainTablePlan> integer;  // many integer positions
    std::shared_ptr<const RealEncodingPlan> real;   // any other
  };
  // Blocks of axis indices [start, start + n) (no wrap) into `out`
  // (n * channels values each).
  void AxisBlocks(const Axis& axis, uint32_t start, uint32_t n,
                  std::byte* out) const;
  // Copies a block into its place in a row.
  void PlaceBlock(const Axis& axis, const std::byte* block,
                  std::byte* row) const;
  // Grid rows [first, first + count) (extra rows excluded).
  void ComputeGridRows(uint64_t first, uint32_t count, std::byte* out) const;

  TableSpec spec_;
  std::vector<Axis> axes_;
  size_t value_bytes_ = 0;
};

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_GRID_PLAN_H_
