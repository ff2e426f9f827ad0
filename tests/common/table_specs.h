// Builders of the TableSpecs tests ask for: a plain table, a table with RoPE
// scaling, a grid table and its axes. Plain field assignment, nothing
// validated or resolved: a test states the spec it means in one call.
#ifndef POSENC_TESTS_COMMON_TABLE_SPECS_H_
#define POSENC_TESTS_COMMON_TABLE_SPECS_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/spec/grid_spec.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"

namespace posenc::testing {

// A plain table (no RoPE scaling, no grid). TableSpec{} lists the fields
// in their order: d, base, max_len, dtype, layout, frequency, rope, grid.
inline TableSpec PlainSpec(uint32_t d, uint32_t max_len,
                           double base = kDefaultBase,
                           DType dtype = DType::kFloat32,
                           Layout layout = Layout::kInterleaved,
                           Frequency frequency = Frequency::kPaper) {
  return TableSpec{d,      base,      max_len,          dtype,
                   layout, frequency, /*rope=*/nullptr, /*grid=*/nullptr};
}

// `spec` with RoPE scaling `rope`.
inline TableSpec WithRope(TableSpec spec, const RopeScaling& rope) {
  spec.rope = std::make_shared<const RopeScaling>(rope);
  return spec;
}

// One axis of a grid: `size` points at first_index + k * num / den.
inline GridSpecAxis GridAxis(uint32_t size, uint32_t channels,
                             uint32_t numerator = 1, uint32_t denominator = 1,
                             uint32_t first_index = 0) {
  return GridSpecAxis{size, channels, first_index, numerator, denominator};
}

// A grid table: d is the axes' channels, max_len the grid's rows.
inline TableSpec GridTableSpec(std::vector<GridSpecAxis> axes,
                               std::vector<uint32_t> order,
                               Layout layout = Layout::kConcatSinCos,
                               GridSinCos sin_cos = GridSinCos::kPerAxis,
                               uint32_t extra_zero_rows = 0,
                               double base = kDefaultBase) {
  auto grid = std::make_shared<const GridSpec>(
      GridSpec{std::move(axes), std::move(order), sin_cos, extra_zero_rows});
  TableSpec spec = PlainSpec(static_cast<uint32_t>(grid->channels()),
                             static_cast<uint32_t>(grid->rows()), base,
                             DType::kFloat32, layout);
  spec.grid = std::move(grid);
  return spec;
}

// MAE ViT-B/16 at 224 px with its cls token: 14 x 14 + 1 = 197 rows of 768
// channels, the column's block first.
inline TableSpec MaeVitB16Spec(DType dtype = DType::kFloat32) {
  TableSpec spec = GridTableSpec({GridAxis(14, 384), GridAxis(14, 384)}, {1, 0},
                                 Layout::kConcatSinCos, GridSinCos::kPerAxis,
                                 /*extra_zero_rows=*/1);
  spec.dtype = dtype;
  return spec;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_TABLE_SPECS_H_
