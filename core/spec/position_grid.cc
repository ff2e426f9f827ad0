#include "core/spec/position_grid.h"

#include "absl/strings/str_cat.h"
#include "core/runtime/limit_error.h"

namespace posenc {

absl::StatusOr<uint32_t> CountGridPoints(const PositionGrid& grid,
                                         uint32_t coordinates,
                                         uint32_t max_points) {
  if (grid.coordinates() != coordinates) {
    return absl::InvalidArgumentError(
        absl::StrCat("grid.axes: ", grid.coordinates(),
                     " axes; the grid needs one per "
                     "coordinate, spec.coordinates = ",
                     coordinates));
  }
  uint64_t points = 1;
  for (size_t c = 0; c < grid.coordinates(); ++c) {
    points *= grid.count[c];  // <= max_points * 2^32: no overflow
    if (points > max_points) {
      return LimitError(
          absl::StatusCode::kInvalidArgument, Limit::kRowsPerRequest,
          absl::StrCat("grid: the counts up to grid.axes[", c, "] give ",
                       points, " points, over the limit ", max_points,
                       " per request"));
    }
  }
  return static_cast<uint32_t>(points);
}

void GridPoint(const PositionGrid& grid, uint64_t p, double* point) {
  for (size_t c = grid.coordinates(); c-- > 0;) {
    point[c] = static_cast<double>(grid.start[c] + int64_t(p % grid.count[c]));
    p /= grid.count[c];
  }
}

}  // namespace posenc
