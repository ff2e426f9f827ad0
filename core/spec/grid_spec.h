// GridSpec: the value that names a 2D/3D (or 1D) grid of positions, the
// rows of the sin-cos position-embedding tables of vision and diffusion
// transformers (MAE, diffusers incl. SD3's crop, timm, CogVideoX), as the
// proto's GridSpec (proto/posenc/v1/posenc.proto) with defaults applied.
//
// A grid table (TableSpec::grid set) has extra_zero_rows rows of zeros,
// then one row per grid point, the points in row-major order over `axes`
// (axes[0] varies slowest). Axis a holds points k = 0..size-1 at the exact
// rational position x_k = (first_index + k) * numerator / denominator and
// owns a block of `channels` channels (half = channels / 2 frequencies
// f_i = base^(-2i / channels), TableSpec::base). A row is the axes' blocks
// in `channel_order`:
//   kPerAxis  each block is [its sin/cos pairs] in the table's layout
//             (interleaved, concat_sin_cos, concat_cos_sin);
//   kGrouped  the row's first d/2 channels hold every block's first half
//             and the last d/2 every block's second half, in channel order
//             (concat_sin_cos: all sines, then all cosines: timm's default).
// Every value is the exact sin/cos(x_k * f_i) rounded once to the dtype.
//
// Pure value type; no gRPC. Thread-compatible.
#ifndef POSENC_CORE_SPEC_GRID_SPEC_H_
#define POSENC_CORE_SPEC_GRID_SPEC_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace posenc {

struct TableSpec;
struct SpecLimits;

// The most axes a grid has (video: time, height, width).
inline constexpr uint32_t kMaxGridAxes = 3;

// How a grid row places the sin/cos halves of its axes' blocks.
enum class GridSinCos : uint8_t {
  kPerAxis,  // each axis's block whole, pairs in the table layout
  kGrouped,  // all blocks' first halves, then all second halves
};

const char* GridSinCosName(GridSinCos sin_cos);

// One axis of a grid table: the proto's GridSpecAxis with defaults applied.
struct GridSpecAxis {
  uint32_t size = 0;         // points on the axis, >= 1
  uint32_t channels = 0;     // channels of its block, even, >= 2
  uint32_t first_index = 0;  // index of point 0 (SD3's crop offset)
  uint32_t numerator = 1;    // position step numerator, >= 1
  uint32_t denominator = 1;  // position step denominator, >= 1

  bool operator==(const GridSpecAxis& o) const {
    return size == o.size && channels == o.channels &&
           first_index == o.first_index && numerator == o.numerator &&
           denominator == o.denominator;
  }
  template <typename H>
  friend H AbslHashValue(H h, const GridSpecAxis& a) {
    return H::combine(std::move(h), a.size, a.channels, a.first_index,
                      a.numerator, a.denominator);
  }
};

struct GridSpec {
  std::vector<GridSpecAxis> axes;  // row order: axes[0] varies slowest
  // Axis indices in the order their blocks appear in a row: a permutation
  // of 0..axes.size()-1 (SpecFromProto fills the identity when unset).
  std::vector<uint32_t> channel_order;
  GridSinCos sin_cos = GridSinCos::kPerAxis;
  uint32_t extra_zero_rows = 0;  // zero rows before the grid's (cls tokens)

  // extra_zero_rows + the product of the sizes, saturating at UINT64_MAX.
  uint64_t rows() const;
  // The sum of the axes' channels.
  uint64_t channels() const;

  bool operator==(const GridSpec& o) const {
    return axes == o.axes && channel_order == o.channel_order &&
           sin_cos == o.sin_cos && extra_zero_rows == o.extra_zero_rows;
  }
  template <typename H>
  friend H AbslHashValue(H h, const GridSpec& g) {
    return H::combine(std::move(h), g.axes, g.channel_order, g.sin_cos,
                      g.extra_zero_rows);
  }

  // "axes=16:384:0:1/1,16:384:0:1/1 order=1,0 sin_cos=per_axis extra=1"
  std::string DebugString() const;
};

// The checks of a grid table (spec.grid set), called by ValidateSpec: OK
// or INVALID_ARGUMENT naming the field, its value and the rule:
// spec.grid.axes 1..3; spec.grid.axes[a].size >= 1, .channels even >= 2,
// .position_numerator / .position_denominator >= 1; spec.grid.channel_order
// a permutation of the axes; spec.d the sum of the channels; rows
// (extra_zero_rows + product of sizes) at most max_len_limit and
// spec.max_len equal to them; each axis's largest position
// (first_index + size - 1) * numerator / denominator below 2^24 (the
// proven angle range) with (first_index + size - 1) * numerator <= 2^53;
// spec.base small enough that every frequency is above 2^-790; spec.layout
// interleaved or concat (kGrouped: concat only); FREQUENCY_PAPER; no rope.
absl::Status ValidateGridTable(const TableSpec& spec, const SpecLimits& limits);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_GRID_SPEC_H_
