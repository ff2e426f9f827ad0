#include "tests/numerics/grid_reference.h"

#include <mpfr.h>

#include <stdexcept>
#include <vector>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

// get_1d_sincos_pos_embed_from_grid(embed_dim, pos) of MAE / diffusers:
// omega = 1 / 10000^(arange(embed_dim / 2) / (embed_dim / 2)),
// [sin(pos * omega) | cos(pos * omega)]; column `col` of it.
GridElement OneD(uint32_t embed_dim, uint64_t p, uint64_t q, uint32_t col) {
  const uint32_t half = embed_dim / 2;
  GridElement e;
  e.is_sin = col < half;
  e.i = col % half;
  e.half = half;
  e.p = p;
  e.q = q;
  return e;
}

// get_2d_sincos_pos_embed_from_grid(embed_dim, grid): emb_h of grid[0] --
// the column coordinate after meshgrid(grid_w, grid_h) -- then emb_w of
// grid[1], the row coordinate.
GridElement TwoD(uint32_t embed_dim, uint64_t col_p, uint64_t col_q,
                 uint64_t row_p, uint64_t row_q, uint32_t c) {
  const uint32_t half = embed_dim / 2;
  return c < half ? OneD(half, col_p, col_q, c)
                  : OneD(half, row_p, row_q, c - half);
}

GridElement Zero() {
  GridElement e;
  e.zero = true;
  return e;
}

}  // namespace

LibraryTable MaeTable(uint32_t embed_dim, uint32_t grid_size, bool cls_token) {
  LibraryTable t;
  const uint32_t cls = cls_token ? 1 : 0;
  t.rows = cls + grid_size * grid_size;
  t.width = embed_dim;
  t.element = [=](uint32_t row, uint32_t col) {
    if (row < cls) return Zero();
    const uint32_t g = row - cls;  // grid.reshape: row-major over (h, w)
    const uint32_t h = g / grid_size, w = g % grid_size;
    return TwoD(embed_dim, w, 1, h, 1, col);
  };
  return t;
}

LibraryTable DiffusersTable(uint32_t embed_dim, uint32_t gh, uint32_t gw,
                            bool cls_token, uint32_t extra_tokens,
                            uint32_t is_num, uint32_t is_den,
                            uint32_t base_size) {
  LibraryTable t;
  const uint32_t extra = cls_token ? extra_tokens : 0;
  t.rows = extra + gh * gw;
  t.width = embed_dim;
  // grid_h = arange(gh) / (gh / base_size) / interpolation_scale
  //        = k * base_size * is_den / (gh * is_num).
  t.element = [=](uint32_t row, uint32_t col) {
    if (row < extra) return Zero();
    const uint32_t g = row - extra;
    const uint64_t h = g / gw, w = g % gw;
    return TwoD(embed_dim, w * base_size * is_den, uint64_t{gw} * is_num,
                h * base_size * is_den, uint64_t{gh} * is_num, col);
  };
  return t;
}

LibraryTable Sd3CroppedTable(uint32_t embed_dim, uint32_t max_size,
                             uint32_t base_size, uint32_t is_num,
                             uint32_t is_den, uint32_t h, uint32_t w) {
  const LibraryTable full = DiffusersTable(embed_dim, max_size, max_size, false,
                                           0, is_num, is_den, base_size);
  // cropped_pos_embed: top = (M - h) // 2, left = (M - w) // 2,
  // spatial_pos_embed[:, top:top + h, left:left + w, :].
  const uint32_t top = (max_size - h) / 2, left = (max_size - w) / 2;
  LibraryTable t;
  t.rows = h * w;
  t.width = embed_dim;
  t.element = [=](uint32_t row, uint32_t col) {
    const uint32_t r = top + row / w, c = left + row % w;
    return full.element(r * max_size + c, col);
  };
  return t;
}

LibraryTable TimmTable(uint32_t h, uint32_t w, uint32_t dim, double temperature,
                       bool reverse_coord, bool interleave_sin_cos) {
  LibraryTable t;
  t.rows = h * w;
  t.width = dim;
  t.base = temperature;
  // feat_shape reversed by reverse_coord; ndgrid ('ij') over it, flattened:
  // row g holds (g / shape[1], g % shape[1]).
  const uint32_t s1 = reverse_coord ? h : w;
  const uint32_t pos_dim = dim / 4;
  t.element = [=](uint32_t row, uint32_t col) {
    const uint32_t coord[2] = {row / s1, row % s1};
    // pos2 = grid[..., None] * bands: [N, 2 (coords), pos_dim];
    // stack([sin, cos], dim=1): [N, 2 (sin/cos), 2, pos_dim], or dim=2:
    // [N, 2 (coords), 2 (sin/cos), pos_dim]; then flatten(1).
    const uint32_t outer = col / (2 * pos_dim);
    const uint32_t inner = (col / pos_dim) % 2;
    const uint32_t axis = interleave_sin_cos ? outer : inner;
    const uint32_t kind = interleave_sin_cos ? inner : outer;  // 0: sin
    GridElement e;
    e.is_sin = kind == 0;
    e.i = col % pos_dim;  // bands = 1 / temperature^(arange(pos_dim) / pos_dim)
    e.half = pos_dim;
    e.p = coord[axis];
    e.q = 1;
    return e;
  };
  return t;
}

LibraryTable CogVideoXTable(uint32_t embed_dim, uint32_t w, uint32_t h,
                            uint32_t t_size, uint32_t s_num, uint32_t s_den,
                            uint32_t t_num, uint32_t t_den) {
  LibraryTable t;
  t.rows = t_size * h * w;
  t.width = embed_dim;
  const uint32_t temporal = embed_dim / 4;
  const uint32_t spatial = embed_dim / 4 * 3;
  t.element = [=](uint32_t row, uint32_t col) {
    // concatenate([pos_embed_temporal, pos_embed_spatial], -1): [T, H*W, D].
    const uint32_t tt = row / (h * w), hw = row % (h * w);
    const uint64_t hh = hw / w, ww = hw % w;
    if (col < temporal) {
      // grid_t = arange(T) / temporal_interpolation_scale.
      return OneD(temporal, uint64_t{tt} * t_den, t_num, col);
    }
    // grid_h/w = arange / spatial_interpolation_scale, meshgrid(w, h).
    return TwoD(spatial, ww * s_den, s_num, hh * s_den, s_num, col - temporal);
  };
  return t;
}

LibraryTable GridSpecTable(const TableSpec& spec) {
  const GridSpec grid = *spec.grid;
  LibraryTable t;
  t.rows = spec.max_len;
  t.width = spec.d;
  t.base = spec.base;
  const Layout layout = spec.layout;
  const uint32_t d = spec.d;
  t.element = [=](uint32_t row, uint32_t col) {
    if (row < grid.extra_zero_rows) return Zero();
    // Row-major over the axes: the last axis varies fastest.
    uint64_t g = row - grid.extra_zero_rows;
    std::vector<uint64_t> index(grid.axes.size());
    for (size_t a = grid.axes.size(); a-- > 0;) {
      index[a] = g % grid.axes[a].size;
      g /= grid.axes[a].size;
    }
    // The block holding `col`, and the column within it.
    uint32_t axis = 0, within = 0;
    bool second_half = false;
    if (grid.sin_cos == GridSinCos::kPerAxis) {
      uint32_t start = 0;
      for (uint32_t a : grid.channel_order) {
        if (col < start + grid.axes[a].channels) {
          axis = a;
          within = col - start;
          break;
        }
        start += grid.axes[a].channels;
      }
    } else {
      second_half = col >= d / 2;
      const uint32_t c = second_half ? col - d / 2 : col;
      uint32_t start = 0;
      for (uint32_t a : grid.channel_order) {
        if (c < start + grid.axes[a].channels / 2) {
          axis = a;
          within = c - start + (second_half ? grid.axes[a].channels / 2 : 0);
          break;
        }
        start += grid.axes[a].channels / 2;
      }
    }
    const GridSpecAxis& x = grid.axes[axis];
    const uint32_t half = x.channels / 2;
    GridElement e;
    e.half = half;
    e.p = (x.first_index + index[axis]) * x.numerator;
    e.q = x.denominator;
    switch (layout) {
      case Layout::kConcatSinCos:
        e.is_sin = within < half;
        e.i = within % half;
        break;
      case Layout::kConcatCosSin:
        e.is_sin = within >= half;
        e.i = within % half;
        break;
      default:  // interleaved
        e.is_sin = within % 2 == 0;
        e.i = within / 2;
    }
    return e;
  };
  return t;
}

uint64_t GridElementBits(const GridElement& e, double base, DType dtype) {
  mpfr_t v;
  if (e.zero || e.p == 0) {  // sin 0 = +0, cos 0 = 1
    mpfr_init2(v, 64);
    mpfr_set_ui(v, e.zero || e.is_sin ? 0 : 1, MPFR_RNDN);
    const uint64_t bits = RoundMpfrToBits(v, dtype);
    mpfr_clear(v);
    return bits;
  }
  for (mpfr_prec_t p = 320; p <= 20000; p *= 2) {
    mpfr_t f, x, a, lo, hi;
    mpfr_inits2(p + 64, f, x, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    // omega = base^(-i / half); x = p / q; angle = x * omega.
    mpfr_set_si(a, -static_cast<long>(e.i), MPFR_RNDN);
    mpfr_div_ui(a, a, e.half, MPFR_RNDN);
    mpfr_set_d(f, base, MPFR_RNDN);
    mpfr_pow(f, f, a, MPFR_RNDN);
    mpfr_set_ui(x, 0, MPFR_RNDN);
    mpfr_add_d(x, x, static_cast<double>(e.p), MPFR_RNDN);  // exact < 2^53
    mpfr_div_d(x, x, static_cast<double>(e.q), MPFR_RNDN);
    mpfr_mul(a, x, f, MPFR_RNDN);
    if (e.is_sin) {
      mpfr_sin(v, a, MPFR_RNDN);
    } else {
      mpfr_cos(v, a, MPFR_RNDN);
    }
    // The p-bit inputs leave v within ~2^(EXP(a) - p + 8): round both ends.
    mpfr_set_ui_2exp(lo, 1, mpfr_get_exp(a) - p + 16, MPFR_RNDN);
    mpfr_add(hi, v, lo, MPFR_RNDN);
    mpfr_sub(lo, v, lo, MPFR_RNDN);
    const uint64_t b0 = RoundMpfrToBits(lo, dtype);
    const uint64_t b1 = RoundMpfrToBits(hi, dtype);
    mpfr_clears(f, x, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    if (b0 == b1) return b0;
  }
  throw std::runtime_error("GridElementBits: undecided at 20000 bits");
}

}  // namespace posenc::testing
