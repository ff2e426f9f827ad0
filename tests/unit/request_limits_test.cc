#include "core/spec/request_limits.h"

#include <vector>

#include "core/runtime/limit_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

TEST(ResolveRowsPerBatchTest, Unset_PicksAbout64KiB) {
  EXPECT_EQ(*ResolveRowsPerBatch(0, 2048, 64 << 20), 32u);  // d=512 float32
  EXPECT_EQ(*ResolveRowsPerBatch(0, 8, 64 << 20), 8192u);   // d=2
}

TEST(ResolveRowsPerBatchTest, RowLargerThan64KiB_OneRowPerBatch) {
  EXPECT_EQ(*ResolveRowsPerBatch(0, 256 * 1024, 64 << 20), 1u);
}

TEST(ResolveRowsPerBatchTest, RequestedWithinLimit_Kept) {
  EXPECT_EQ(*ResolveRowsPerBatch(1000, 2048, 64 << 20), 1000u);
}

TEST(ResolveRowsPerBatchTest, OverMessageLimit_InvalidArgumentNamingLimit) {
  absl::StatusOr<uint32_t> rows = ResolveRowsPerBatch(600, 2048, 1 << 20);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), HasSubstr("rows_per_batch is 600"));
  EXPECT_THAT(rows.status().message(), HasSubstr("limit 512"));
  EXPECT_EQ(*ResolveRowsPerBatch(512, 2048, 1 << 20), 512u);
}

TEST(ResolveRowsPerBatchTest, RowOverMessageLimit_InvalidArgument) {
  EXPECT_EQ(ResolveRowsPerBatch(0, 4096, 2048).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidatePositionsTest, RepeatsAndAnyOrder_Ok) {
  std::vector<uint32_t> positions = {9, 0, 9, 3};
  EXPECT_TRUE(ValidatePositions(positions, 10, 100).ok());
}

TEST(ValidatePositionsTest, Empty_InvalidArgument) {
  EXPECT_EQ(ValidatePositions({}, 10, 100).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidatePositionsTest, TooMany_InvalidArgumentNamingLimit) {
  std::vector<uint32_t> positions(101, 0);
  absl::Status s = ValidatePositions(positions, 10, 100);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "positions has 101 entries, over the limit 100");
  EXPECT_EQ(LimitOf(s), Limit::kRowsPerRequest);
}

TEST(ValidatePositionsTest, PositionAtMaxLen_OutOfRangeNamingIndex) {
  std::vector<uint32_t> positions = {1, 2, 10};
  absl::Status s = ValidatePositions(positions, 10, 100);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("positions[2] is 10"));
}

TEST(CheckMessageSizeTest, OverLimit_ResourceExhaustedWithHint) {
  EXPECT_TRUE(CheckMessageSize(100, 100, "x", "y").ok());
  absl::Status s = CheckMessageSize(101, 100, "the table", "use StreamBatches");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("use StreamBatches"));
}

}  // namespace
}  // namespace posenc
