// EncodingPlan: the plan of any table (TableSpec), built once per family and
// then used to compute any of its rows exactly (correctly rounded, RNE) in
// its dtype. It picks the plan that computes the spec: a GridPlan for a grid
// table (core/plan/grid_plan.h), a PlainTablePlan for the table of positions
// 0..max_len-1 (core/plan/plain_table_plan.h, where the costs are).
//
//   const EncodingPlan plan(spec);   // ValidateSpec(spec, limits) is OK
//   std::vector<std::byte> rows(size_t{count} * spec.row_bytes());
//   plan.ComputeRows(first, count, rows.data());
//
// Immutable after construction: ComputeRow and ComputeRows are thread-safe
// and may be called concurrently from many threads on one plan; copies
// share the underlying plan.
#ifndef POSENC_CORE_PLAN_ENCODING_PLAN_H_
#define POSENC_CORE_PLAN_ENCODING_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/plan/grid_plan.h"
#include "core/plan/plain_table_plan.h"
#include "core/spec/table_spec.h"

namespace posenc {

class EncodingPlan {
 public:
  // Precondition: ValidateSpec(spec) is OK (max_len is ignored but by a
  // grid's).
  explicit EncodingPlan(const TableSpec& spec);

  const TableSpec& spec() const { return spec_; }

  // Writes row `pos` (spec.row_bytes() bytes) to `out`. pos <= 2^24 (a
  // grid: pos < spec.max_len).
  void ComputeRow(uint32_t pos, std::byte* out) const;

  // Writes rows [first, first + count) to `out` (count * row_bytes bytes),
  // first + count <= 2^24 + 1 (a grid: <= spec.max_len). Same bytes as
  // ComputeRow per row.
  void ComputeRows(uint32_t first, uint32_t count, std::byte* out) const;

  // Row step between anchors of a plain table's angle-addition path
  // (PlainTablePlan::AngleAdditionStep); 0 for a grid table.
  uint32_t AngleAdditionStep() const;

  // Bytes the plan holds (PlainTablePlan::MemoryBytes or
  // GridPlan::MemoryBytes).
  size_t MemoryBytes() const;

 private:
  TableSpec spec_;
  // Exactly one is set.
  std::shared_ptr<const PlainTablePlan> plain_;
  std::shared_ptr<const GridPlan> grid_;
};

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_ENCODING_PLAN_H_
