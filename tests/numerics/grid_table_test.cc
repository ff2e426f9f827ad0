// Grid tables (core/plan/grid_plan.h) against the independent MPFR reference
// written from each library's code (tests/numerics/grid_reference.h): MAE,
// diffusers (interpolation_scale, base_size, extra tokens, SD3's crop),
// timm (both sin/cos arrangements, reverse_coord) and CogVideoX, every
// dtype; then random grid specs over every layout x sin/cos arrangement x
// dtype, with random row ranges and single rows, fresh seed every run
// (printed; POSENC_SEED replays it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/cache/table.h"
#include "core/plan/encoding.h"
#include "presets/grid_presets.h"
#include "tests/common/table_specs.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/grid_reference.h"

namespace posenc {
namespace {

using ::posenc::testing::CheckStats;
using ::posenc::testing::GridAxis;
using ::posenc::testing::GridElementBits;
using ::posenc::testing::GridTableSpec;
using ::posenc::testing::LibraryTable;

using ::posenc::testing::kDTypes;

uint64_t Bits(const std::byte* row, size_t col, DType dtype) {
  const size_t size = DTypeSize(dtype);
  uint64_t bits = 0;
  std::memcpy(&bits, row + col * size, size);
  return bits;
}

// Checks rows [first, first + count) computed as `out` against `want`.
void CheckRows(const TableSpec& spec, const LibraryTable& want, uint32_t first,
               uint32_t count, const std::byte* out, CheckStats& stats) {
  ASSERT_EQ(spec.max_len, want.rows) << spec.DebugString();
  ASSERT_EQ(spec.width(), want.width) << spec.DebugString();
  for (uint32_t r = 0; r < count; ++r) {
    for (uint32_t c = 0; c < want.width; ++c) {
      const uint64_t w =
          GridElementBits(want.element(first + r, c), want.base, spec.dtype);
      const uint64_t g = Bits(out + r * spec.row_bytes(), c, spec.dtype);
      ++stats.values;
      if (w != g && ++stats.mismatches <= 10) {
        ADD_FAILURE() << spec.DebugString() << " row=" << first + r
                      << " col=" << c << std::hex << " want=0x" << w
                      << " got=0x" << g;
      }
    }
  }
}

// The whole table (Table::Compute, the cache's path) against `want`, in
// every dtype.
void CheckWholeTable(TableSpec spec, const LibraryTable& want,
                     CheckStats& stats) {
  for (DType dtype : kDTypes) {
    spec.dtype = dtype;
    ASSERT_TRUE(ValidateSpec(spec, {}).ok())
        << ValidateSpec(spec, {}) << " " << spec.DebugString();
    const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
    CheckRows(spec, want, 0, spec.max_len, table->data(), stats);
  }
}

TEST(GridTableTest, Mae_MatchesItsCode) {
  // get_2d_sincos_pos_embed(64, 6, cls_token=True): axes (h, w), the
  // column's block first, [sin | cos] each.
  CheckStats stats;
  CheckWholeTable(GridTableSpec({GridAxis(6, 32), GridAxis(6, 32)}, {1, 0},
                                Layout::kConcatSinCos, GridSinCos::kPerAxis, 1),
                  testing::MaeTable(64, 6, true), stats);
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, Diffusers_InterpolationAndBaseSizeMatchItsCode) {
  // get_2d_sincos_pos_embed(48, (5, 7), cls_token=True, extra_tokens=2,
  // interpolation_scale=1.5, base_size=16): position k on an axis of n is
  // k * 16 / (n * 3 / 2) = k * 32 / (3n).
  CheckStats stats;
  CheckWholeTable(
      GridTableSpec({GridAxis(5, 24, 32, 15), GridAxis(7, 24, 32, 21)}, {1, 0},
                    Layout::kConcatSinCos, GridSinCos::kPerAxis, 2),
      testing::DiffusersTable(48, 5, 7, true, 2, 3, 2, 16), stats);
  // PixArt-style interpolation_scale 2, base_size 64 // 2 at 16 x 16.
  CheckWholeTable(
      GridTableSpec({GridAxis(16, 16, 32, 32), GridAxis(16, 16, 32, 32)},
                    {1, 0}, Layout::kConcatSinCos),
      testing::DiffusersTable(32, 16, 16, false, 0, 2, 1, 32), stats);
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, Sd3Crop_MatchesItsCode) {
  // PatchEmbed(pos_embed_max_size=24, base_size=8): the 24 x 24 table
  // cropped to the centre 10 x 13: top = 7, left = 5, positions
  // (first + k) * 8 / 24.
  CheckStats stats;
  CheckWholeTable(
      GridTableSpec({GridAxis(10, 16, 8, 24, 7), GridAxis(13, 16, 8, 24, 5)},
                    {1, 0}, Layout::kConcatSinCos),
      testing::Sd3CroppedTable(32, 24, 8, 1, 1, 10, 13), stats);
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, Timm_BothArrangementsAndReverseCoordMatchItsCode) {
  CheckStats stats;
  for (bool reverse : {false, true}) {
    // feat_shape (h, w) = (4, 7); reverse_coord makes the rows (w, h).
    const uint32_t s0 = reverse ? 7 : 4, s1 = reverse ? 4 : 7;
    // Default: [sin_ax0, sin_ax1, cos_ax0, cos_ax1].
    CheckWholeTable(
        GridTableSpec({GridAxis(s0, 16), GridAxis(s1, 16)}, {0, 1},
                      Layout::kConcatSinCos, GridSinCos::kGrouped, 0, 10000),
        testing::TimmTable(4, 7, 32, 10000, reverse, false), stats);
    // interleave_sin_cos: [sin_ax0, cos_ax0, sin_ax1, cos_ax1];
    // temperature 100.
    CheckWholeTable(
        GridTableSpec({GridAxis(s0, 16), GridAxis(s1, 16)}, {0, 1},
                      Layout::kConcatSinCos, GridSinCos::kPerAxis, 0, 100),
        testing::TimmTable(4, 7, 32, 100, reverse, true), stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, CogVideoX_MatchesItsCode) {
  // get_3d_sincos_pos_embed(64, spatial_size=(6, 4), temporal_size=3,
  // spatial_interpolation_scale=1.875, temporal_interpolation_scale=1):
  // axes (t, h, w), channels [t: 16 | w: 24 | h: 24], positions
  // k / 1.875 = 8k / 15.
  CheckStats stats;
  CheckWholeTable(GridTableSpec({GridAxis(3, 16), GridAxis(4, 24, 8, 15),
                                 GridAxis(6, 24, 8, 15)},
                                {0, 2, 1}, Layout::kConcatSinCos),
                  testing::CogVideoXTable(64, 6, 4, 3, 15, 8, 1, 1), stats);
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, LargeMaeTable_SampledRowsMatch) {
  // ViT-B/16 at 224 px: 14 x 14 + cls, 768 channels; every dtype, the
  // rows of a ComputeRowsParallel-free Table against the reference at a
  // few rows (all of their 768 values).
  CheckStats stats;
  TableSpec spec =
      GridTableSpec({GridAxis(14, 384), GridAxis(14, 384)}, {1, 0},
                    Layout::kConcatSinCos, GridSinCos::kPerAxis, 1);
  const LibraryTable want = testing::MaeTable(768, 14, true);
  for (DType dtype : kDTypes) {
    spec.dtype = dtype;
    const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
    for (uint32_t row : {0u, 1u, 14u, 15u, 100u, 196u}) {
      CheckRows(spec, want, row, 1, table->data() + row * spec.row_bytes(),
                stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, LongIntegerAxes_AngleAdditionPathMatchesMpfr) {
  // Axes of >= 1024 integer points take PlainTablePlan instead of
  // RealEncodingPlan: a 1-axis grid (rows written directly) and a 2-axis
  // one, with an SD3-style offset, sampled ranges in every dtype.
  CheckStats stats;
  for (DType dtype : kDTypes) {
    for (int two = 0; two < 2; ++two) {
      TableSpec spec =
          two ? GridTableSpec({GridAxis(3, 6), GridAxis(1500, 10, 1, 1, 700)},
                              {1, 0}, Layout::kConcatCosSin,
                              GridSinCos::kGrouped, 1)
              : GridTableSpec({GridAxis(2000, 12)}, {0}, Layout::kInterleaved);
      spec.dtype = dtype;
      const LibraryTable want = testing::GridSpecTable(spec);
      const EncodingPlan plan(spec);
      for (uint32_t first : {0u, 1u, 1499u, 1900u}) {
        const uint32_t count = std::min(90u, spec.max_len - first);
        std::vector<std::byte> out(size_t{count} * spec.row_bytes());
        plan.ComputeRows(first, count, out.data());
        CheckRows(spec, want, first, count, out.data(), stats);
      }
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, Presets_MatchTheLibrariesCode) {
  // presets/grid_presets.h, each against the reference written from the
  // library's code, in every dtype.
  CheckStats stats;
  CheckWholeTable(MaeGrid(32, 5, true), testing::MaeTable(32, 5, true), stats);
  DiffusersGridOptions o;
  o.base_size = 16;
  o.scale_num = 3;
  o.scale_den = 2;
  o.cls_token = true;
  o.extra_tokens = 2;
  CheckWholeTable(DiffusersGrid(24, 4, 6, o),
                  testing::DiffusersTable(24, 4, 6, true, 2, 3, 2, 16), stats);
  DiffusersGridOptions sd3;
  sd3.base_size = 8;
  sd3.pos_embed_max_size = 24;
  CheckWholeTable(DiffusersGrid(16, 5, 7, sd3),
                  testing::Sd3CroppedTable(16, 24, 8, 1, 1, 5, 7), stats);
  for (bool reverse : {false, true}) {
    for (bool interleave : {false, true}) {
      CheckWholeTable(TimmGrid(3, 5, 16, 1000, reverse, interleave),
                      testing::TimmTable(3, 5, 16, 1000, reverse, interleave),
                      stats);
    }
  }
  CheckWholeTable(CogVideoXGrid(32, 4, 3, 2, 15, 8, 1, 1),
                  testing::CogVideoXTable(32, 4, 3, 2, 15, 8, 1, 1), stats);
  ::posenc::testing::ReportChecked(stats);
}

// A random valid grid table (1-3 axes, any layout and arrangement).
TableSpec RandomGrid(std::mt19937_64& rng) {
  static constexpr Layout kLayouts[] = {
      Layout::kInterleaved, Layout::kConcatSinCos, Layout::kConcatCosSin};
  const Layout layout = kLayouts[rng() % 3];
  const GridSinCos sin_cos = layout != Layout::kInterleaved && rng() % 2
                                 ? GridSinCos::kGrouped
                                 : GridSinCos::kPerAxis;
  const uint32_t n = 1 + rng() % 3;
  std::vector<GridSpecAxis> axes;
  for (uint32_t a = 0; a < n; ++a) {
    GridSpecAxis x;
    x.size = 1 + rng() % (n == 1 ? 40 : n == 2 ? 12 : 5);
    x.channels = 2 * (1 + rng() % 12);
    switch (rng() % 4) {
      case 0:  // integer positions
        break;
      case 1:  // diffusers: base_size / (n * interpolation_scale)
        x.numerator = 1 + rng() % 64;
        x.denominator = 1 + rng() % 100;
        break;
      case 2:  // large, coprime-ish
        x.numerator = 1 + rng() % 100000;
        x.denominator = 1 + rng() % 4000000000u;
        break;
      default:  // a crop offset and a power-of-two step
        x.first_index = rng() % 1000;
        x.denominator = 1u << (rng() % 8);
    }
    axes.push_back(x);
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const double base = rng() % 3 == 0 ? 100 + rng() % 100000 : 10000;
  TableSpec spec = GridTableSpec(axes, order, layout, sin_cos, rng() % 3, base);
  spec.dtype = kDTypes[rng() % 4];
  return spec;
}

TEST(GridTableTest, FreshRandomGrids_RangesAndRowsMatchMpfr) {
  std::mt19937_64 rng = ::posenc::testing::SeededRng("grid tables");
  CheckStats stats;
  for (int n = 0; n < 120; ++n) {
    const TableSpec spec = RandomGrid(rng);
    ASSERT_TRUE(ValidateSpec(spec, {}).ok())
        << ValidateSpec(spec, {}) << " " << spec.DebugString();
    const LibraryTable want = testing::GridSpecTable(spec);
    const EncodingPlan plan(spec);
    // A random range (ComputeRows: blocks shared across rows, wrapping
    // axes) and a random single row (ComputeRow).
    const uint32_t first = rng() % spec.max_len;
    const uint32_t count = 1 + rng() % (spec.max_len - first);
    std::vector<std::byte> out(size_t{count} * spec.row_bytes());
    plan.ComputeRows(first, count, out.data());
    CheckRows(spec, want, first, count, out.data(), stats);
    const uint32_t row = rng() % spec.max_len;
    std::vector<std::byte> one(spec.row_bytes());
    plan.ComputeRow(row, one.data());
    CheckRows(spec, want, row, 1, one.data(), stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(GridTableTest, RangesOfAnyLength_SameBytesAsWholeTable) {
  // Any sub-range, split anywhere, equals the whole table's rows: the
  // blocks of a range are computed for the points it touches only.
  TableSpec spec =
      GridTableSpec({GridAxis(3, 8), GridAxis(5, 6, 16, 40), GridAxis(7, 4)},
                    {2, 0, 1}, Layout::kConcatCosSin, GridSinCos::kGrouped, 2);
  for (DType dtype : kDTypes) {
    spec.dtype = dtype;
    const std::shared_ptr<const Table> whole = Table::Compute(spec, nullptr);
    const EncodingPlan plan(spec);
    for (uint32_t first : {0u, 1u, 2u, 3u, 8u, 36u, 40u, 106u}) {
      for (uint32_t count : {1u, 2u, 5u, 7u, 36u, 50u}) {
        if (first + count > spec.max_len) continue;
        std::vector<std::byte> out(size_t{count} * spec.row_bytes());
        plan.ComputeRows(first, count, out.data());
        ASSERT_EQ(std::memcmp(out.data(), whole->RowBytes(first, count).data(),
                              out.size()),
                  0)
            << spec.DebugString() << " first=" << first << " count=" << count;
      }
    }
  }
}

}  // namespace
}  // namespace posenc
