#include "core/plan/grid_plan.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>

namespace posenc {
namespace {

// Scratch per block of rows: the blocks of the points a block of rows
// touches (at most the rows' own bytes).
constexpr size_t kScratchBytes = size_t{8} << 20;

// An axis of integer positions with at least this many points takes
// PlainTablePlan (angle addition from anchor rows: faster per row, but its
// per-plan tables cost more than a few dozen points' rows by
// RealEncodingPlan; bench/encoding_bench's BM_GridCold).
constexpr uint32_t kMinAngleAdditionPoints = 1024;

}  // namespace

GridPlan::GridPlan(const TableSpec& spec)
    : spec_(spec), value_bytes_(DTypeSize(spec.dtype)) {
  const GridSpec& grid = *spec.grid;
  const size_t n = grid.axes.size();
  axes_.resize(n);
  uint64_t stride = 1;
  for (size_t a = n; a-- > 0;) {
    const GridSpecAxis& g = grid.axes[a];
    Axis& axis = axes_[a];
    axis.size = g.size;
    axis.channels = g.channels;
    axis.first_index = g.first_index;
    axis.stride = stride;
    stride *= g.size;
    const uint32_t common = std::gcd(g.numerator, g.denominator);
    axis.numerator = g.numerator / common;
    const uint32_t denominator = g.denominator / common;
    if (axis.numerator == 1 && denominator == 1 &&
        g.size >= kMinAngleAdditionPoints) {
      TableSpec plain;
      plain.d = g.channels;
      plain.base = spec.base;
      plain.max_len = 1;  // ignored by PlainTablePlan
      plain.dtype = spec.dtype;
      plain.layout = spec.layout;
      axis.integer = std::make_shared<const PlainTablePlan>(plain);
      continue;
    }
    EncodingSpec real;
    real.dim = g.channels;
    real.dtype = spec.dtype;
    real.layout = spec.layout;
    real.max_period = spec.base;
    real.scale_divisor = denominator;
    SpecLimits limits;
    limits.max_d = g.channels;
    // ValidateGridTable bounds the frequencies and positions.
    absl::StatusOr<RealEncodingPlan> plan =
        RealEncodingPlan::Create(real, limits);
    if (!plan.ok()) std::abort();  // a broken precondition
    axis.real = std::make_shared<const RealEncodingPlan>(*std::move(plan));
  }
  size_t offset = 0;
  for (uint32_t a : grid.channel_order) {
    axes_[a].offset = offset;
    offset += grid.sin_cos == GridSinCos::kGrouped ? axes_[a].channels / 2
                                                   : axes_[a].channels;
  }
}

void GridPlan::AxisBlocks(const Axis& axis, uint32_t start, uint32_t n,
                          std::byte* out) const {
  if (axis.integer != nullptr) {
    axis.integer->ComputeRows(axis.first_index + start, n, out);
    return;
  }
  std::vector<double> xs(n);
  for (uint32_t k = 0; k < n; ++k) {
    // Exact: ValidateGridTable keeps it within 2^53.
    xs[k] = static_cast<double>(uint64_t{axis.first_index} + start + k) *
            axis.numerator;
  }
  axis.real->ComputeRows(xs, out);
}

void GridPlan::PlaceBlock(const Axis& axis, const std::byte* block,
                          std::byte* row) const {
  const size_t bytes = size_t{axis.channels} * value_bytes_;
  if (spec_.grid->sin_cos == GridSinCos::kPerAxis) {
    std::memcpy(row + axis.offset * value_bytes_, block, bytes);
    return;
  }
  const size_t half = bytes / 2;
  std::memcpy(row + axis.offset * value_bytes_, block, half);
  std::memcpy(row + (spec_.d / 2 + axis.offset) * value_bytes_, block + half,
              half);
}

void GridPlan::ComputeRow(uint32_t row, std::byte* out) const {
  ComputeRows(row, 1, out);
}

size_t GridPlan::MemoryBytes() const {
  size_t total = sizeof(*this) + axes_.capacity() * sizeof(Axis);
  for (const Axis& axis : axes_) {
    if (axis.integer != nullptr) total += axis.integer->MemoryBytes();
    if (axis.real != nullptr) total += axis.real->MemoryBytes();
  }
  return total;
}

void GridPlan::ComputeRows(uint32_t first, uint32_t count,
                           std::byte* out) const {
  const size_t row_bytes = spec_.row_bytes();
  const uint32_t extra = spec_.grid->extra_zero_rows;
  if (first < extra) {
    // +0 is all zero bits in every dtype.
    const uint32_t zeros = std::min(count, extra - first);
    std::memset(out, 0, size_t{zeros} * row_bytes);
    first += zeros;
    count -= zeros;
    out += size_t{zeros} * row_bytes;
  }
  const uint32_t block =
      static_cast<uint32_t>(std::max<size_t>(1, kScratchBytes / row_bytes));
  while (count > 0) {
    const uint32_t n = std::min(count, block);
    ComputeGridRows(uint64_t{first} - extra, n, out);
    first += n;
    count -= n;
    out += size_t{n} * row_bytes;
  }
}

void GridPlan::ComputeGridRows(uint64_t first, uint32_t count,
                               std::byte* out) const {
  if (axes_.size() == 1) {
    // One axis: its block is the row (grouped halves land where the
    // layout's own halves are), every row a distinct point: write directly.
    AxisBlocks(axes_[0], static_cast<uint32_t>(first), count, out);
    return;
  }
  const size_t row_bytes = spec_.row_bytes();
  const uint64_t last = first + count - 1;
  // Per axis: the points the rows touch, i0, i0 + 1, ... (mod size), and
  // their blocks in that order.
  std::vector<uint32_t> start(axes_.size());
  std::vector<std::vector<std::byte>> blocks(axes_.size());
  for (size_t a = 0; a < axes_.size(); ++a) {
    const Axis& axis = axes_[a];
    const uint64_t steps = last / axis.stride - first / axis.stride + 1;
    const uint32_t n =
        static_cast<uint32_t>(std::min<uint64_t>(axis.size, steps));
    const uint32_t i0 =
        static_cast<uint32_t>((first / axis.stride) % axis.size);
    const size_t block_bytes = size_t{axis.channels} * value_bytes_;
    blocks[a].resize(size_t{n} * block_bytes);
    start[a] = i0;
    const uint32_t head = std::min(n, axis.size - i0);
    AxisBlocks(axis, i0, head, blocks[a].data());
    if (head < n) {
      AxisBlocks(axis, 0, n - head, blocks[a].data() + head * block_bytes);
    }
  }
  for (uint32_t r = 0; r < count; ++r) {
    const uint64_t g = first + r;
    std::byte* row = out + size_t{r} * row_bytes;
    for (size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      const uint32_t index =
          static_cast<uint32_t>((g / axis.stride) % axis.size);
      const uint32_t slot = (index + axis.size - start[a]) % axis.size;
      PlaceBlock(axis,
                 blocks[a].data() + size_t{slot} * axis.channels * value_bytes_,
                 row);
    }
  }
}

}  // namespace posenc
