// ValidateSpec on grid tables (core/spec/grid_spec.h): each bad field is
// INVALID_ARGUMENT naming it; the cache key (==, hash) tells grids apart.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/hash/hash.h"
#include "core/spec/table_spec.h"
#include "tests/common/table_specs.h"

namespace posenc {
namespace {

// MAE ViT-B/16: 14 x 14 + cls, 768 channels, column block first.
TableSpec Mae() { return testing::MaeVitB16Spec(); }

// Applies `edit` to a copy of Mae()'s grid.
template <typename F>
TableSpec WithGrid(F edit) {
  TableSpec spec = Mae();
  auto grid = std::make_shared<GridSpec>(*spec.grid);
  edit(*grid, spec);
  spec.grid = grid;
  return spec;
}

void ExpectInvalid(const TableSpec& spec, const std::string& field,
                   const SpecLimits& limits = {}) {
  const absl::Status s = ValidateSpec(spec, limits);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
      << s << " " << spec.DebugString();
  EXPECT_NE(s.message().find(field), std::string::npos)
      << "want " << field << " in: " << s.message();
}

TEST(GridSpecTest, MaeSpec_Valid) {
  EXPECT_TRUE(ValidateSpec(Mae(), {}).ok()) << ValidateSpec(Mae(), {});
  EXPECT_EQ(Mae().grid->rows(), 197u);
}

TEST(GridSpecTest, AxisCount_InvalidOutside1To3) {
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.axes.clear();
                  g.channel_order.clear();
                }),
                "spec.grid.axes");
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec& s) {
                  GridSpecAxis a;
                  a.size = 2;
                  a.channels = 2;
                  g.axes = {a, a, a, a};
                  g.channel_order = {0, 1, 2, 3};
                  g.extra_zero_rows = 0;
                  s.d = 8;
                  s.max_len = 16;
                }),
                "spec.grid.axes");
}

TEST(GridSpecTest, BadAxisFields_NameTheAxisAndField) {
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) { g.axes[1].size = 0; }),
                "spec.grid.axes[1].size");
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec& s) {
                  g.axes[0].channels = 383;
                  s.d = 767;
                }),
                "spec.d");  // odd d: the table's own rule first
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.axes[0].channels = 383;
                  g.axes[1].channels = 385;
                }),
                "spec.grid.axes[0].channels");
  ExpectInvalid(
      WithGrid([](GridSpec& g, TableSpec&) { g.axes[1].numerator = 0; }),
      "spec.grid.axes[1].position_numerator");
  ExpectInvalid(
      WithGrid([](GridSpec& g, TableSpec&) { g.axes[0].denominator = 0; }),
      "spec.grid.axes[0].position_denominator");
}

TEST(GridSpecTest, ChannelOrder_MustBeAPermutation) {
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.channel_order = {0, 0};
                }),
                "spec.grid.channel_order[1]");
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.channel_order = {0, 2};
                }),
                "spec.grid.channel_order[1]");
  ExpectInvalid(
      WithGrid([](GridSpec& g, TableSpec&) { g.channel_order = {0}; }),
      "spec.grid.channel_order");
}

TEST(GridSpecTest, DAndMaxLen_MustMatchTheGrid) {
  ExpectInvalid(WithGrid([](GridSpec&, TableSpec& s) { s.d = 512; }), "spec.d");
  ExpectInvalid(WithGrid([](GridSpec&, TableSpec& s) { s.max_len = 196; }),
                "spec.max_len");
}

TEST(GridSpecTest, RowsPastMaxLenLimit_Invalid) {
  SpecLimits limits;
  limits.max_len_limit = 100;
  ExpectInvalid(Mae(), "spec.grid", limits);
  // A product past 2^64 does not wrap around.
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec& s) {
                  GridSpecAxis a;
                  a.size = 0xFFFFFFFFu;
                  a.channels = 2;
                  g.axes = {a, a, a};
                  g.channel_order = {0, 1, 2};
                  s.d = 6;
                  s.max_len = 5;
                }),
                "spec.grid: > 2^64 rows");
}

TEST(GridSpecTest, PositionsPastTheAngleRange_Invalid) {
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.axes[0].first_index = 1u << 24;
                }),
                "spec.grid.axes[0].first_index");
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec&) {
                  g.axes[1].numerator = 0xFFFFFFFFu;
                  g.axes[1].denominator = 7;
                }),
                "spec.grid.axes[1].first_index");
  // The same numerator over a large enough denominator is fine.
  const TableSpec ok = WithGrid([](GridSpec& g, TableSpec&) {
    g.axes[1].numerator = 0xFFFFFFFFu;
    g.axes[1].denominator = 0xFFFFFFFFu;
  });
  EXPECT_TRUE(ValidateSpec(ok, {}).ok()) << ValidateSpec(ok, {});
}

TEST(GridSpecTest, NonsenseCombinations_NameTheField) {
  ExpectInvalid(
      WithGrid([](GridSpec&, TableSpec& s) { s.frequency = Frequency::kT2T; }),
      "spec.frequency");
  ExpectInvalid(WithGrid([](GridSpec&, TableSpec& s) {
                  auto rope = std::make_shared<RopeScaling>();
                  rope->type = RopeType::kLinear;
                  rope->factor = 2;
                  s.rope = rope;
                }),
                "spec.rope");
  ExpectInvalid(
      WithGrid([](GridSpec&, TableSpec& s) { s.layout = Layout::kRotateHalf; }),
      "spec.layout");
  ExpectInvalid(WithGrid([](GridSpec& g, TableSpec& s) {
                  g.sin_cos = GridSinCos::kGrouped;
                  s.layout = Layout::kInterleaved;
                }),
                "spec.grid.sin_cos");
  ExpectInvalid(WithGrid([](GridSpec&, TableSpec& s) { s.base = 1e300; }),
                "spec.base");
}

TEST(GridSpecTest, CacheKey_TellsGridsApart) {
  const TableSpec a = Mae();
  const TableSpec b = WithGrid([](GridSpec& g, TableSpec&) {
    g.channel_order = {0, 1};
  });
  const TableSpec c =
      WithGrid([](GridSpec& g, TableSpec&) { g.axes[0].denominator = 2; });
  TableSpec plain = Mae();
  plain.grid = nullptr;
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a.SameFamily(plain));
  EXPECT_NE(absl::Hash<TableSpec>()(a), absl::Hash<TableSpec>()(b));
  // Equal grids in distinct objects are one key.
  const TableSpec a2 = WithGrid([](GridSpec&, TableSpec&) {});
  EXPECT_TRUE(a == a2);
  EXPECT_EQ(absl::Hash<TableSpec>()(a), absl::Hash<TableSpec>()(a2));
}

}  // namespace
}  // namespace posenc
