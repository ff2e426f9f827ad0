// PositionGrid: the points of an Encode call given as an integer grid (an
// image's patch ids) instead of a list: coordinate c takes the integers
// start[c], ..., start[c] + count[c] - 1, swept in row-major order (the
// last coordinate fastest). The points are never materialized: the plan
// computes each row from its index (RealEncodingPlan::ComputeGridRows).
//
// Pure value type; thread-compatible.
#ifndef POSENC_CORE_SPEC_POSITION_GRID_H_
#define POSENC_CORE_SPEC_POSITION_GRID_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace posenc {

struct PositionGrid {
  std::vector<int32_t> start;   // one per coordinate
  std::vector<uint32_t> count;  // >= 1 each (the proto's 0 is 1)

  size_t coordinates() const { return start.size(); }
  // The last value of coordinate c.
  int64_t last(size_t c) const { return int64_t{start[c]} + count[c] - 1; }
};

// The number of points: INVALID_ARGUMENT naming `grid.axes` when the axes
// are not `coordinates` many, or `grid` when the product of the counts
// exceeds max_points (--max_rows_per_request). Never overflows.
absl::StatusOr<uint32_t> CountGridPoints(const PositionGrid& grid,
                                         uint32_t coordinates,
                                         uint32_t max_points);

// Writes point p (row-major) of the grid to point[0..coordinates).
// Precondition: p < the grid's point count.
void GridPoint(const PositionGrid& grid, uint64_t p, double* point);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_POSITION_GRID_H_
