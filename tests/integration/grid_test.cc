// Grid tables (TableSpec.grid) through a real server on 127.0.0.1: GetTable,
// StreamBatches, StreamRows and GetRows serve the same bytes as the core's
// table, through the cache (a second call is a hit per GetStats), and a bad
// grid is INVALID_ARGUMENT naming its field.
#include <memory>
#include <string>
#include <vector>

#include "core/cache/table.h"
#include "gtest/gtest.h"
#include "tests/common/table_specs.h"
#include "tests/integration/server_fixture.h"

namespace posenc {
namespace {

class GridTest : public testing::ServerTest {};

// MAE ViT-B/16 at 224 px with its cls token: 197 rows of 768 channels.
TableSpec Mae(DType dtype = DType::kFloat32) {
  TableSpec spec = testing::MaeVitB16Spec(dtype);
  spec.max_len = 0;  // unset: the server takes the grid's 197 rows
  return spec;
}

// The same spec as the server resolves it, computed locally.
std::string LocalTable(TableSpec spec) {
  spec.max_len = static_cast<uint32_t>(spec.grid->rows());
  const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
  return std::string(reinterpret_cast<const char*>(table->data()),
                     table->size_bytes());
}

TEST_F(GridTest, GetTable_SameBytesAsCoreAndSecondCallIsACacheHit) {
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    const TableSpec spec = Mae(dtype);
    absl::StatusOr<Tensor> first = client_->GetTable(spec);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->shape, (std::vector<uint32_t>{197, 768}));
    EXPECT_EQ(first->data, LocalTable(spec));
    absl::StatusOr<Tensor> second = client_->GetTable(spec);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->data, first->data);
  }
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cache().misses(), 2u);
  EXPECT_EQ(stats->cache().hits(), 2u);
  EXPECT_EQ(stats->cache().computations(), 2u);
  EXPECT_EQ(stats->cache().entries(), 2u);
}

TEST_F(GridTest, StreamsAndGetRows_ServeTheCachedGrid) {
  const TableSpec spec = Mae();
  const std::string want = LocalTable(spec);
  const size_t row_bytes = 768 * 4;
  ASSERT_TRUE(client_->GetTable(spec).ok());
  std::string streamed;
  absl::Status s = client_->StreamBatches(
      spec, 0, std::nullopt, 50, [&](uint32_t first, const Tensor& rows) {
        EXPECT_EQ(first * row_bytes, streamed.size());
        streamed += rows.data;
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(streamed, want);
  std::string tail;
  s = client_->StreamRows(spec, 190, std::nullopt,
                          [&](uint32_t, const Tensor& row) {
                            tail += row.data;
                            return absl::OkStatus();
                          });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(tail, want.substr(190 * row_bytes));
  const std::vector<uint32_t> positions = {0, 196, 15, 1};
  absl::StatusOr<Tensor> rows = client_->GetRows(spec, positions);
  ASSERT_TRUE(rows.ok()) << rows.status();
  for (size_t k = 0; k < positions.size(); ++k) {
    EXPECT_EQ(rows->data.substr(k * row_bytes, row_bytes),
              want.substr(positions[k] * row_bytes, row_bytes))
        << "row " << positions[k];
  }
  // Row 0 is the cls token's zeros.
  EXPECT_EQ(rows->data.substr(0, row_bytes), std::string(row_bytes, '\0'));
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cache().computations(), 1u);
  EXPECT_EQ(stats->cache().misses(), 1u);
  EXPECT_GE(stats->cache().hits(), 2u);
}

TEST_F(GridTest, RationalPositions_SameBytesAsCore) {
  // SD3-style crop: a 24 x 24 table at base_size 8 cropped to 10 x 13.
  TableSpec spec = testing::GridTableSpec(
      {testing::GridAxis(10, 16, 1, 3, /*first_index=*/7),
       testing::GridAxis(13, 16, 1, 3, /*first_index=*/5)},
      {1, 0});
  spec.max_len = 0;  // unset: the server takes the grid's rows
  spec.dtype = DType::kFloat64;
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->data, LocalTable(spec));
}

TEST_F(GridTest, LargeGrid_ComputedInPoolChunksSameBytesAsCore) {
  // 128 x 128 x 256 float32 (16 MiB): the server computes it in chunks on
  // its compute pool, each chunk's blocks on its own.
  const GridSpecAxis axis = testing::GridAxis(128, 128, 1, 2);
  TableSpec spec = testing::GridTableSpec({axis, axis}, {1, 0});
  spec.max_len = 0;  // unset: the server takes the grid's rows
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->shape, (std::vector<uint32_t>{16384, 256}));
  EXPECT_TRUE(table->data == LocalTable(spec));
}

void ExpectStatus(const absl::Status& s, absl::StatusCode code,
                  const std::string& field) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_NE(s.message().find(field), std::string::npos)
      << "want " << field << " in: " << s.message();
}

TEST_F(GridTest, BadGrids_InvalidArgumentNamingTheField) {
  TableSpec spec = Mae();
  auto grid = std::make_shared<GridSpec>(*spec.grid);
  grid->axes[1].size = 0;
  spec.grid = grid;
  ExpectStatus(client_->GetTable(spec).status(),
               absl::StatusCode::kInvalidArgument, "spec.grid.axes[1].size");

  spec = Mae();
  spec.d = 512;
  ExpectStatus(client_->GetTable(spec).status(),
               absl::StatusCode::kInvalidArgument, "spec.d");

  spec = Mae();
  spec.max_len = 196;
  ExpectStatus(client_->GetRows(spec, std::vector<uint32_t>{0}).status(),
               absl::StatusCode::kInvalidArgument, "spec.max_len");

  spec = Mae();
  grid = std::make_shared<GridSpec>(*spec.grid);
  grid->axes[0].size = 5000;
  grid->axes[1].size = 5000;
  spec.grid = grid;
  ExpectStatus(client_->StreamBatches(
                   spec, 0, std::nullopt, 0,
                   [](uint32_t, const Tensor&) { return absl::OkStatus(); }),
               absl::StatusCode::kInvalidArgument, "spec.grid");

  spec = Mae();
  grid = std::make_shared<GridSpec>(*spec.grid);
  grid->channel_order = {1, 1};
  spec.grid = grid;
  ExpectStatus(client_->GetTable(spec).status(),
               absl::StatusCode::kInvalidArgument,
               "spec.grid.channel_order[1]");

  // A row past the grid: OUT_OF_RANGE, as for any table.
  ExpectStatus(client_->GetRows(Mae(), std::vector<uint32_t>{197}).status(),
               absl::StatusCode::kOutOfRange, "197");
}

}  // namespace
}  // namespace posenc
