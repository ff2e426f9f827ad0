// The grid tables of the libraries posenc reproduces, as TableSpecs
// (docs/encodings.md "Grid tables" is the same mapping in prose). Each
// returns the spec of the library call named; positions are the exact
// rationals the library computes in float32. The spec is not validated
// here (ValidateSpec does: e.g. an embed_dim not divisible as the library
// requires gives odd channels, INVALID_ARGUMENT there).
//
// Pure functions; no gRPC. Thread-safe.
#ifndef POSENC_PRESETS_GRID_PRESETS_H_
#define POSENC_PRESETS_GRID_PRESETS_H_

#include <cstdint>

#include "core/spec/table_spec.h"

namespace posenc {

// MAE get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token).
TableSpec MaeGrid(uint32_t embed_dim, uint32_t grid_size, bool cls_token);

// diffusers get_2d_sincos_pos_embed(embed_dim, (grid_h, grid_w), cls_token,
// extra_tokens, interpolation_scale = scale_num / scale_den, base_size);
// with pos_embed_max_size M != 0, SD3's PatchEmbed: the M x M table cropped
// to its centre grid_h x grid_w.
struct DiffusersGridOptions {
  uint32_t base_size = 16;
  uint32_t scale_num = 1;  // interpolation_scale = scale_num / scale_den
  uint32_t scale_den = 1;
  bool cls_token = false;
  uint32_t extra_tokens = 0;
  uint32_t pos_embed_max_size = 0;  // 0: no crop
};
TableSpec DiffusersGrid(uint32_t embed_dim, uint32_t grid_h, uint32_t grid_w,
                        const DiffusersGridOptions& options);

// timm build_sincos2d_pos_embed((h, w), dim, temperature, reverse_coord,
// interleave_sin_cos).
TableSpec TimmGrid(uint32_t h, uint32_t w, uint32_t dim, double temperature,
                   bool reverse_coord, bool interleave_sin_cos);

// diffusers get_3d_sincos_pos_embed(embed_dim, spatial_size=(w, h),
// temporal_size t, spatial_interpolation_scale = s_num / s_den,
// temporal_interpolation_scale = t_num / t_den) (CogVideoX), flattened to
// [t * h * w, embed_dim].
TableSpec CogVideoXGrid(uint32_t embed_dim, uint32_t w, uint32_t h, uint32_t t,
                        uint32_t s_num, uint32_t s_den, uint32_t t_num,
                        uint32_t t_den);

}  // namespace posenc

#endif  // POSENC_PRESETS_GRID_PRESETS_H_
