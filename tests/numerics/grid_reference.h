// Independent MPFR reference for grid tables (core/spec/grid_spec.h), written
// from the libraries' code rather than from core/:
//   MAE util/pos_embed.py get_2d_sincos_pos_embed (a9f5c70),
//   diffusers embeddings.py get_2d_sincos_pos_embed and SD3's PatchEmbed
//   crop, get_3d_sincos_pos_embed (CogVideoX) (0002117),
//   timm layers/pos_embed_sincos.py build_sincos2d_pos_embed (0647e28),
// each as the element (row, column) -> zero, or sin/cos of the exact
// rational position times base^(-i / half); plus the same from the proto's
// GridSpec definition (for random specs). Values are rounded from MPFR by
// the tests' own IEEE rounding (tests/numerics/mpfr_reference.h).
//
// Not thread-safe (that rounding changes the thread's MPFR exponent range).
#ifndef POSENC_TESTS_NUMERICS_GRID_REFERENCE_H_
#define POSENC_TESTS_NUMERICS_GRID_REFERENCE_H_

#include <cstdint>
#include <functional>

#include "core/spec/grid_spec.h"
#include "core/spec/table_spec.h"

namespace posenc::testing {

// One value of a table: zero, or sin/cos(p / q * base^(-i / half)).
struct GridElement {
  bool zero = false;
  bool is_sin = true;
  uint64_t p = 0;  // position numerator
  uint64_t q = 1;  // position denominator
  uint32_t i = 0;  // frequency index, < half
  uint32_t half = 1;
};

// A library's table: its size and its element at (row, column).
struct LibraryTable {
  uint32_t rows = 0;
  uint32_t width = 0;
  double base = 10000;
  std::function<GridElement(uint32_t row, uint32_t col)> element;
};

// MAE get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token).
LibraryTable MaeTable(uint32_t embed_dim, uint32_t grid_size, bool cls_token);

// diffusers get_2d_sincos_pos_embed(embed_dim, grid_size=(gh, gw),
// cls_token, extra_tokens, interpolation_scale = is_num / is_den,
// base_size).
LibraryTable DiffusersTable(uint32_t embed_dim, uint32_t gh, uint32_t gw,
                            bool cls_token, uint32_t extra_tokens,
                            uint32_t is_num, uint32_t is_den,
                            uint32_t base_size);

// SD3's PatchEmbed: diffusers' table at pos_embed_max_size M (base_size,
// interpolation_scale = is_num / is_den), cropped to the centre h x w.
LibraryTable Sd3CroppedTable(uint32_t embed_dim, uint32_t max_size,
                             uint32_t base_size, uint32_t is_num,
                             uint32_t is_den, uint32_t h, uint32_t w);

// timm build_sincos2d_pos_embed(feat_shape=(h, w), dim, temperature,
// reverse_coord, interleave_sin_cos).
LibraryTable TimmTable(uint32_t h, uint32_t w, uint32_t dim, double temperature,
                       bool reverse_coord, bool interleave_sin_cos);

// diffusers get_3d_sincos_pos_embed(embed_dim, spatial_size=(w, h),
// temporal_size, spatial_interpolation_scale = s_num / s_den,
// temporal_interpolation_scale = t_num / t_den), flattened to rows
// [T * H * W, embed_dim].
LibraryTable CogVideoXTable(uint32_t embed_dim, uint32_t w, uint32_t h,
                            uint32_t t, uint32_t s_num, uint32_t s_den,
                            uint32_t t_num, uint32_t t_den);

// The table a TableSpec with a grid names, by the proto's definition.
LibraryTable GridSpecTable(const TableSpec& spec);

// Bits of RNE_dtype of the element (decided at increasing precision).
uint64_t GridElementBits(const GridElement& e, double base, DType dtype);

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_GRID_REFERENCE_H_
