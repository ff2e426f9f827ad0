#include "presets/grid_presets.h"

#include <memory>
#include <numeric>
#include <utility>
#include <vector>

namespace posenc {
namespace {

GridSpecAxis Axis(uint32_t size, uint32_t channels, uint64_t num, uint64_t den,
                  uint32_t first_index = 0) {
  const uint64_t g = std::gcd(num, den);
  GridSpecAxis a;
  a.size = size;
  a.channels = channels;
  a.first_index = first_index;
  // Reduced. A part past 32 bits would wrap in the cast to a wrong but
  // valid step: it becomes 0 instead, which ValidateSpec refuses.
  const bool fits = num / g <= UINT32_MAX && den / g <= UINT32_MAX;
  a.numerator = fits ? static_cast<uint32_t>(num / g) : 0;
  a.denominator = fits ? static_cast<uint32_t>(den / g) : 0;
  return a;
}

TableSpec Spec(uint32_t d, std::vector<GridSpecAxis> axes,
               std::vector<uint32_t> order, GridSinCos sin_cos, uint32_t extra,
               double base = kDefaultBase) {
  auto grid = std::make_shared<GridSpec>();
  grid->axes = std::move(axes);
  grid->channel_order = std::move(order);
  grid->sin_cos = sin_cos;
  grid->extra_zero_rows = extra;
  TableSpec spec;
  spec.d = d;
  spec.base = base;
  const uint64_t rows = grid->rows();
  spec.max_len = rows <= UINT32_MAX ? static_cast<uint32_t>(rows) : 0;
  spec.layout = Layout::kConcatSinCos;
  spec.grid = std::move(grid);
  return spec;
}

}  // namespace

TableSpec MaeGrid(uint32_t embed_dim, uint32_t grid_size, bool cls_token) {
  // meshgrid(grid_w, grid_h): the column's block first.
  const GridSpecAxis axis = Axis(grid_size, embed_dim / 2, 1, 1);
  return Spec(embed_dim, {axis, axis}, {1, 0}, GridSinCos::kPerAxis,
              cls_token ? 1 : 0);
}

TableSpec DiffusersGrid(uint32_t embed_dim, uint32_t grid_h, uint32_t grid_w,
                        const DiffusersGridOptions& o) {
  // k / (n / base_size) / (num / den) = k * base_size * den / (n * num);
  // SD3's crop: n = M and first = (M - size) // 2.
  auto axis = [&](uint32_t size) {
    const uint32_t m = o.pos_embed_max_size;
    const uint64_t n = m != 0 ? m : size;
    const uint32_t first = m != 0 && m >= size ? (m - size) / 2 : 0;
    return Axis(size, embed_dim / 2, uint64_t{o.base_size} * o.scale_den,
                n * o.scale_num, first);
  };
  return Spec(embed_dim, {axis(grid_h), axis(grid_w)}, {1, 0},
              GridSinCos::kPerAxis, o.cls_token ? o.extra_tokens : 0);
}

TableSpec TimmGrid(uint32_t h, uint32_t w, uint32_t dim, double temperature,
                   bool reverse_coord, bool interleave_sin_cos) {
  // ndgrid over feat_shape (reversed by reverse_coord): rows over (h, w)
  // or (w, h), channels in that order; stack([sin, cos], dim=1) groups
  // the sines, dim=2 keeps each axis's [sin | cos].
  const GridSpecAxis a0 = Axis(reverse_coord ? w : h, dim / 2, 1, 1);
  const GridSpecAxis a1 = Axis(reverse_coord ? h : w, dim / 2, 1, 1);
  return Spec(dim, {a0, a1}, {0, 1},
              interleave_sin_cos ? GridSinCos::kPerAxis : GridSinCos::kGrouped,
              0, temperature);
}

TableSpec CogVideoXGrid(uint32_t embed_dim, uint32_t w, uint32_t h, uint32_t t,
                        uint32_t s_num, uint32_t s_den, uint32_t t_num,
                        uint32_t t_den) {
  // [temporal (D/4) | spatial (3D/4: w's block, then h's)], rows t-major.
  const uint32_t temporal = embed_dim / 4;
  const uint32_t spatial_half = (embed_dim - temporal) / 2;
  return Spec(
      embed_dim,
      {Axis(t, temporal, t_den, t_num), Axis(h, spatial_half, s_den, s_num),
       Axis(w, spatial_half, s_den, s_num)},
      {0, 2, 1}, GridSinCos::kPerAxis, 0);
}

}  // namespace posenc
