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

TEST(EncodingSpecFromProtoTest, OctavesWithExplicitDefaultMaxPeriod_Invalid) {
  v1::EncodingSpec proto;
  proto.set_frequency(v1::FREQUENCY_SCHEME_OCTAVES);
  proto.set_num_frequencies(4);
  ASSERT_TRUE(EncodingSpecFromProto(proto).ok());
  // 10000 is the core spec's default: only the proto can tell it was sent.
  proto.set_max_period(10000);
  absl::StatusOr<RealEncodingSpec> got = EncodingSpecFromProto(proto);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("spec.max_period: 10000 is only for "
                                        "FREQUENCY_SCHEME_EXPONENTIAL"),
            absl::string_view::npos)
      << got.status();
}

}  // namespace
}  // namespace posenc

namespace posenc {
namespace {

TEST(RopeFromProto, PartialRotaryFactor_DIsTheRotaryDimension) {
  v1::TableSpec proto;
  proto.set_d(80);  // Phi-2's head size, partial_rotary_factor 0.4
  proto.set_max_len(16);
  proto.set_partial_rotary_factor(0.4);
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->d, 32u);
  EXPECT_EQ(spec->rope, nullptr);
}

TEST(RopeFromProto, OddRotaryDimension_InvalidArgumentNamingField) {
  v1::TableSpec proto;
  proto.set_d(10);
  proto.set_max_len(16);
  proto.set_partial_rotary_factor(0.3);  // int(10 * 0.3) = 3
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("spec.partial_rotary_factor"),
            std::string::npos);
  proto.set_partial_rotary_factor(1.5);
  EXPECT_EQ(SpecFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RopeFromProto, DefaultTypeWithNothingSet_PlainTable) {
  v1::TableSpec proto;
  proto.set_d(8);
  proto.set_max_len(4);
  proto.mutable_rope()->set_type(v1::ROPE_TYPE_DEFAULT);
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->rope, nullptr);
  TableSpec plain = *spec;
  EXPECT_EQ(*SpecFromProto(proto), plain);
}

TEST(RopeFromProto, RoundTrip_SameSpecAndRopeLayouts) {
  v1::TableSpec proto;
  proto.set_d(16);
  proto.set_max_len(4);
  proto.set_layout(v1::LAYOUT_INTERLEAVED_PAIRS);
  v1::RopeScaling* rope = proto.mutable_rope();
  rope->set_type(v1::ROPE_TYPE_YARN);
  rope->set_factor(4);
  rope->set_original_max_position_embeddings(64);
  rope->set_truncate(false);
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  ASSERT_TRUE(spec.ok());
  ASSERT_NE(spec->rope, nullptr);
  EXPECT_EQ(spec->layout, Layout::kInterleavedPairs);
  EXPECT_EQ(spec->width(), 32u);
  EXPECT_EQ(spec->rope->truncate, std::optional<bool>(false));
  absl::StatusOr<TableSpec> again = SpecFromProto(SpecToProto(*spec));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *spec);
  rope->set_factor(8);
  EXPECT_FALSE(*SpecFromProto(proto) == *spec);
}

}  // namespace
}  // namespace posenc
