#include "core/spec/table_spec.h"

#include <cmath>
#include <limits>

#include "core/runtime/limit_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/table_specs.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

TableSpec Spec(uint32_t d, uint32_t max_len) {
  return ::posenc::testing::PlainSpec(d, max_len);
}

TEST(ValidateSpecTest, EvenDWithinLimits_Ok) {
  EXPECT_TRUE(ValidateSpec(Spec(512, 8192), SpecLimits()).ok());
  EXPECT_TRUE(ValidateSpec(Spec(2, 1), SpecLimits()).ok());
}

TEST(ValidateSpecTest, OddD_InvalidArgumentNamingD) {
  absl::Status s = ValidateSpec(Spec(5, 10), SpecLimits());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("spec.d must be even"));
  EXPECT_THAT(s.message(), HasSubstr("5"));
}

TEST(ValidateSpecTest, ZeroD_InvalidArgument) {
  absl::Status s = ValidateSpec(Spec(0, 10), SpecLimits());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("spec.d is required"));
}

TEST(ValidateSpecTest, DOverLimit_InvalidArgumentNamingLimit) {
  SpecLimits limits;
  limits.max_d = 64;
  absl::Status s = ValidateSpec(Spec(66, 10), limits);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "spec.d is 66, over the limit 64");
  EXPECT_EQ(LimitOf(s), Limit::kD);
  EXPECT_TRUE(ValidateSpec(Spec(64, 10), limits).ok());
}

TEST(ValidateSpecTest, T2TWithDTwo_InvalidArgument) {
  TableSpec spec = Spec(2, 10);
  spec.frequency = Frequency::kT2T;
  EXPECT_EQ(ValidateSpec(spec, SpecLimits()).code(),
            absl::StatusCode::kInvalidArgument);
  spec.d = 4;
  EXPECT_TRUE(ValidateSpec(spec, SpecLimits()).ok());
}

TEST(ValidateSpecTest, BadBase_InvalidArgumentNamingBase) {
  for (double base : {1.0, 0.5, -3.0, std::numeric_limits<double>::infinity(),
                      std::nan("")}) {
    TableSpec spec = Spec(4, 4);
    spec.base = base;
    absl::Status s = ValidateSpec(spec, SpecLimits());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << base;
    EXPECT_THAT(s.message(), HasSubstr("spec.base")) << base;
  }
}

TEST(ValidateSpecTest, MaxLenZeroOrOverLimit_InvalidArgument) {
  SpecLimits limits;
  limits.max_len_limit = 100;
  absl::Status zero = ValidateSpec(Spec(4, 0), limits);
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("spec.max_len is required"));
  absl::Status over = ValidateSpec(Spec(4, 101), limits);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(over.message(), "spec.max_len is 101, over the limit 100");
  EXPECT_EQ(LimitOf(over), Limit::kMaxLen);
  EXPECT_TRUE(ValidateSpec(Spec(4, 100), limits).ok());
}

TEST(ValidateSpecTest, RotationMatrixLayout_InvalidArgumentNamingLayout) {
  // An Encode layout of multi-axis RoPE only; never a table's.
  TableSpec spec = Spec(64, 10);
  spec.layout = Layout::kRotationMatrix;
  absl::Status s = ValidateSpec(spec, SpecLimits());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("spec.layout"), std::string::npos) << s;
}

TEST(ValidateRangeTest, InsideTable_Ok) {
  EXPECT_TRUE(ValidateRange(0, 10, 10).ok());
  EXPECT_TRUE(ValidateRange(9, 10, 10).ok());
}

TEST(ValidateRangeTest, EmptyOrReversed_InvalidArgument) {
  EXPECT_EQ(ValidateRange(5, 5, 10).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRange(6, 5, 10).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateRangeTest, PastMaxLen_OutOfRange) {
  absl::Status end = ValidateRange(0, 11, 10);
  EXPECT_EQ(end.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(end.message(), HasSubstr("end is 11"));
  absl::Status start = ValidateRange(10, 12, 10);
  EXPECT_EQ(start.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(start.message(), HasSubstr("start is 10"));
}

TEST(TableSpecTest, Sizes_FollowDType) {
  TableSpec spec = Spec(512, 100);
  EXPECT_EQ(spec.row_bytes(), 2048u);
  EXPECT_EQ(spec.table_bytes(), 204800u);
  spec.dtype = DType::kFloat64;
  EXPECT_EQ(spec.row_bytes(), 4096u);
  spec.dtype = DType::kBFloat16;
  EXPECT_EQ(spec.row_bytes(), 1024u);
}

}  // namespace
}  // namespace posenc
