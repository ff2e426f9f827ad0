// A refused spec names the field at fault, its value and its limit, with
// enough digits to tell a value one ulp past a limit from the limit: the
// real server on 127.0.0.1, called by the real client.
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr double kInf = std::numeric_limits<double>::infinity();

class RopeErrorsTest : public ServerTest {
 protected:
  static TableSpec RopeSpec(const RopeScaling& rope, uint32_t d = 16) {
    TableSpec spec = Spec(d, 8);
    spec.layout = Layout::kRotateHalf;
    spec.rope = std::make_shared<const RopeScaling>(rope);
    return spec;
  }
  static RopeScaling Yarn(double factor) {
    RopeScaling r;
    r.type = RopeType::kYarn;
    r.factor = factor;
    r.original_max_position_embeddings = 4096;
    return r;
  }
  static RopeScaling LongRope(double factor, uint32_t m, uint32_t d = 16) {
    RopeScaling r;
    r.type = RopeType::kLongRope;
    r.factor = factor;
    r.original_max_position_embeddings = m;
    r.short_factor.assign(d / 2, 1.0);
    r.long_factor.assign(d / 2, 2.0);
    return r;
  }
  // The server's INVALID_ARGUMENT message for `spec`, or "" (and a
  // failure) when the call does not end INVALID_ARGUMENT.
  std::string Refusal(const TableSpec& spec) {
    absl::StatusOr<Tensor> table = client_->GetTable(spec);
    EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument)
        << table.status();
    return std::string(table.status().message());
  }
};

TEST_F(RopeErrorsTest, YarnFactor30000NoMscale_NamesFactorAndItsLimit) {
  const std::string m = Refusal(RopeSpec(Yarn(30000)));
  EXPECT_THAT(m, StartsWith("spec.rope.factor is 30000, over the limit "
                            "22026.465794806714 (e^10)"));
  EXPECT_THAT(m, HasSubstr("0.1 ln(factor) + 1 = 2.0308952660644293"));
  EXPECT_THAT(m, Not(HasSubstr("mscale is")));
}

TEST_F(RopeErrorsTest, YarnFactorOneUlpOverE10_RefusedAndPrintedApart) {
  // 22026.465794806714 is the largest double with 0.1 ln(f) + 1 <= 2.
  const double limit = 22026.465794806714;
  absl::StatusOr<Tensor> at = client_->GetTable(RopeSpec(Yarn(limit)));
  EXPECT_TRUE(at.ok()) << at.status();
  const std::string m = Refusal(RopeSpec(Yarn(std::nextafter(limit, kInf))));
  EXPECT_THAT(m, StartsWith("spec.rope.factor is 22026.465794806718, over "
                            "the limit 22026.465794806714"));
}

TEST_F(RopeErrorsTest, YarnMscaleRatioOverTwo_NamesMscale) {
  RopeScaling r = Yarn(40);
  r.mscale = 5;  // g(5) / g(1) = 2.85 / 1.37 = 2.08
  r.mscale_all_dim = 1;
  EXPECT_THAT(Refusal(RopeSpec(r)),
              StartsWith("spec.rope.mscale is 5 with mscale_all_dim 1 and "
                         "factor 40: the attention factor g(mscale) / "
                         "g(mscale_all_dim) = 2.07"));
}

TEST_F(RopeErrorsTest, YarnMscaleRatioUnderTwoToMinus16_NamesMscaleAllDim) {
  RopeScaling r = Yarn(40);
  r.mscale = 1e-9;
  r.mscale_all_dim = 1e6;  // g = 368,889: a = 2.7e-6
  const std::string m = Refusal(RopeSpec(r));
  EXPECT_THAT(m, StartsWith("spec.rope.mscale_all_dim is 1e+06 with mscale "
                            "1e-09 and factor 40"));
  EXPECT_THAT(m, HasSubstr("must be >= 2^-16"));
}

TEST_F(RopeErrorsTest, LongRopeMTwo_NamesOriginalMaxPositionEmbeddings) {
  const std::string m = Refusal(RopeSpec(LongRope(32, 2)));
  EXPECT_EQ(m,
            "spec.rope.original_max_position_embeddings is 2, under the "
            "limit 4 for factor 32: LongRoPE's default attention factor "
            "sqrt(1 + ln(factor) / ln(M)) = 2.449489742783178 must be <= 2 "
            "(M^3 >= factor); or set attention_factor");
}

TEST_F(RopeErrorsTest, LongRopeFactorMCubed_AttentionFactorExactlyTwo) {
  // sqrt(1 + ln 27 / ln 3) = 2 exactly: inside [2^-16, 2], decided exactly.
  for (DType dtype :
       {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    TableSpec spec = RopeSpec(LongRope(27, 3));
    spec.dtype = dtype;
    spec.max_len = 64;
    absl::StatusOr<Tensor> table = client_->GetTable(spec);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ(table->ValueAt(0), 2.0) << DTypeName(dtype);  // cos(0) * 2
  }
  // One ulp over M^3: refused, the factor printed with all its digits.
  const std::string m =
      Refusal(RopeSpec(LongRope(std::nextafter(27.0, kInf), 3)));
  EXPECT_THAT(m, StartsWith("spec.rope.original_max_position_embeddings is "
                            "3, under the limit 4 for factor "
                            "27.000000000000004: "));
}

TEST_F(RopeErrorsTest, AttentionFactorTwoPlusOneUlp_PrintedApartFromTwo) {
  RopeScaling r = Yarn(4);
  r.attention_factor = 2;
  absl::StatusOr<Tensor> at = client_->GetTable(RopeSpec(r));
  EXPECT_TRUE(at.ok()) << at.status();
  r.attention_factor = std::nextafter(2.0, kInf);
  EXPECT_EQ(Refusal(RopeSpec(r)),
            "spec.rope.attention_factor is 2.0000000000000004, over the limit "
            "2 (it must be in [2^-16, 2])");
  r.attention_factor = std::nextafter(0x1p-16, 0.0);
  EXPECT_EQ(Refusal(RopeSpec(r)),
            "spec.rope.attention_factor is 1.5258789062499998e-05, under the "
            "limit 2^-16 = 1.52587890625e-05 (it must be in [2^-16, 2])");
}

TEST_F(RopeErrorsTest, FactorsOneUlpOutsideTheirRange_PrintedInFull) {
  RopeScaling linear;
  linear.type = RopeType::kLinear;
  linear.factor = std::nextafter(65536.0, kInf);
  EXPECT_EQ(Refusal(RopeSpec(linear)),
            "spec.rope.factor must be finite and in [1, 65536], got "
            "65536.00000000001");
  linear.factor = std::nextafter(1.0, 0.0);
  EXPECT_EQ(Refusal(RopeSpec(linear)),
            "spec.rope.factor must be finite and in [1, 65536], got "
            "0.9999999999999999");
  RopeScaling lr = LongRope(0, 4096);
  lr.long_factor[5] = std::nextafter(65536.0, kInf);
  EXPECT_EQ(Refusal(RopeSpec(lr)),
            "spec.rope.long_factor[5] must be finite and in [1, 65536], got "
            "65536.00000000001");
}

TEST_F(RopeErrorsTest, BaseOneUlpUnderOne_PrintedInFull) {
  TableSpec spec = Spec(8, 8);
  spec.base = std::nextafter(1.0, 0.0);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(table.status().message(),
            "spec.base must be finite and > 1 (0 means 10000), got "
            "0.9999999999999999");
}

TEST_F(RopeErrorsTest, PartialRotaryFactorOneUlpOverOne_PrintedInFull) {
  // The client sends partial_rotary_factor as given (core's TableSpec has
  // none): build the request by hand.
  v1::GetTableRequest request;
  request.mutable_spec()->set_d(16);
  request.mutable_spec()->set_max_len(8);
  request.mutable_spec()->set_partial_rotary_factor(std::nextafter(1.0, 2.0));
  v1::GetTableResponse response;
  grpc::ClientContext context;
  std::unique_ptr<v1::PositionalEncoding::Stub> stub =
      v1::PositionalEncoding::NewStub(client_->channel());
  const grpc::Status s = stub->GetTable(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "spec.partial_rotary_factor must be in (0, 1] (0 means 1), got "
            "1.0000000000000002");
}

}  // namespace
}  // namespace posenc::testing
