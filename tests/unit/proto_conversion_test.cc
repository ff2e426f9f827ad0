#include "common/proto_conversion.h"

#include "gtest/gtest.h"

namespace posenc {
namespace {

TEST(SpecFromProtoTest, UnsetFields_TakeDocumentedDefaults) {
  v1::TableSpec proto;
  proto.set_d(8);
  proto.set_max_len(3);
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->base, 10000.0);
  EXPECT_EQ(spec->dtype, DType::kFloat32);
  EXPECT_EQ(spec->layout, Layout::kInterleaved);
  EXPECT_EQ(spec->frequency, Frequency::kPaper);
}

TEST(SpecFromProtoTest, RoundTrip_KeepsEveryField) {
  TableSpec spec;
  spec.d = 6;
  spec.max_len = 9;
  spec.base = 500.5;
  spec.dtype = DType::kBFloat16;
  spec.layout = Layout::kConcatCosSin;
  spec.frequency = Frequency::kT2T;
  absl::StatusOr<TableSpec> back = SpecFromProto(SpecToProto(spec));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, spec);
}

TEST(SpecFromProtoTest, UnknownEnumValue_InvalidArgumentNamingField) {
  v1::TableSpec proto;
  proto.set_d(8);
  proto.set_max_len(3);
  proto.set_dtype(static_cast<v1::DType>(42));
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("spec.dtype"), std::string::npos);

  proto.set_dtype(v1::DTYPE_FLOAT32);
  proto.set_layout(static_cast<v1::Layout>(7));
  EXPECT_EQ(SpecFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto.set_layout(v1::LAYOUT_INTERLEAVED);
  proto.set_frequency(static_cast<v1::Frequency>(9));
  EXPECT_EQ(SpecFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace posenc
