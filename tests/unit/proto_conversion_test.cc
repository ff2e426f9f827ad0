#include "convert/proto_conversion.h"

#include "gtest/gtest.h"
#include "tests/common/table_specs.h"

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
  const TableSpec spec = testing::PlainSpec(
      6, 9, 500.5, DType::kBFloat16, Layout::kConcatCosSin, Frequency::kT2T);
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
  absl::StatusOr<EncodingSpec> got = EncodingSpecFromProto(proto);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("spec.max_period: 10000 is only for "
                                        "FREQUENCY_SCHEME_EXPONENTIAL"),
            absl::string_view::npos)
      << got.status();
}

TEST(EncodingSpecFromProtoTest, MultiAxis_CoordinatesDefaultToTheAxes) {
  v1::EncodingSpec proto;
  proto.add_axes_dim(16);
  proto.add_axes_dim(56);
  proto.add_axes_dim(56);
  proto.set_layout(v1::LAYOUT_ROTATION_MATRIX);
  absl::StatusOr<EncodingSpec> got = EncodingSpecFromProto(proto);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->coordinates, 3u);
  EXPECT_EQ(got->axes_dim, (std::vector<uint32_t>{16, 56, 56}));
  EXPECT_EQ(got->layout, Layout::kRotationMatrix);
  EXPECT_EQ(got->pairs(), 64u);
  EXPECT_EQ(got->width(), 256u);
  // A coordinates sent is kept (and checked against the axes later).
  proto.set_coordinates(2);
  EXPECT_EQ(EncodingSpecFromProto(proto)->coordinates, 2u);

  v1::EncodingSpec qwen;
  qwen.set_dim(128);
  qwen.add_mrope_section(24);
  qwen.add_mrope_section(20);
  qwen.add_mrope_section(20);
  qwen.set_mrope_interleaved(true);
  got = EncodingSpecFromProto(qwen);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->coordinates, 3u);
  EXPECT_TRUE(got->mrope_interleaved);
  EXPECT_EQ(got->mrope_section, (std::vector<uint32_t>{24, 20, 20}));
}

TEST(EncodingSpecFromProtoTest, MultiAxisRoundTrip_KeepsEveryField) {
  EncodingSpec spec;
  spec.dim = 128;
  spec.max_period = 5000000;
  spec.mrope_section = {24, 20, 20};
  spec.mrope_interleaved = true;
  spec.coordinates = 3;
  spec.layout = Layout::kRotateHalf;
  spec.dtype = DType::kBFloat16;
  absl::StatusOr<EncodingSpec> back =
      EncodingSpecFromProto(EncodingSpecToProto(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->DebugString(), spec.DebugString());
  spec = EncodingSpec();
  spec.axes_dim = {32, 32};
  spec.coordinates = 2;
  spec.layout = Layout::kRotationMatrix;
  back = EncodingSpecFromProto(EncodingSpecToProto(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->DebugString(), spec.DebugString());
}

TEST(GridFromProtoTest, UnsetCountIsOne) {
  v1::PositionGrid proto;
  proto.add_axes()->set_start(-3);
  v1::GridAxis* axis = proto.add_axes();
  axis->set_start(5);
  axis->set_count(4);
  const PositionGrid grid = GridFromProto(proto);
  EXPECT_EQ(grid.start, (std::vector<int32_t>{-3, 5}));
  EXPECT_EQ(grid.count, (std::vector<uint32_t>{1, 4}));
  absl::StatusOr<uint32_t> points = CountGridPoints(grid, 2, 100);
  ASSERT_TRUE(points.ok());
  EXPECT_EQ(*points, 4u);
  double point[2];
  GridPoint(grid, 3, point);
  EXPECT_EQ(point[0], -3);
  EXPECT_EQ(point[1], 8);
  EXPECT_EQ(CountGridPoints(grid, 3, 100).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CountGridPoints(grid, 2, 3).status().code(),
            absl::StatusCode::kInvalidArgument);
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

v1::TableSpec CogVideoXGridProto() {
  // axes (t, h, w), channels [t | w | h], positions 8k / 15 spatially.
  v1::TableSpec spec;
  spec.set_d(64);
  spec.set_layout(v1::LAYOUT_CONCAT_SIN_COS);
  v1::GridSpec* grid = spec.mutable_grid();
  const uint32_t sizes[3] = {3, 4, 6}, channels[3] = {16, 24, 24};
  for (int a = 0; a < 3; ++a) {
    v1::GridSpecAxis* axis = grid->add_axes();
    axis->set_size(sizes[a]);
    axis->set_channels(channels[a]);
    if (a > 0) {
      axis->set_position_numerator(16);
      axis->set_position_denominator(30);
    }
  }
  for (uint32_t a : {0, 2, 1}) grid->add_channel_order(a);
  return spec;
}

TEST(SpecFromProtoTest, Grid_DefaultsResolvedAndFractionReduced) {
  absl::StatusOr<TableSpec> spec = SpecFromProto(CogVideoXGridProto());
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_NE(spec->grid, nullptr);
  EXPECT_EQ(spec->max_len, 72u);  // unset: the grid's rows
  EXPECT_EQ(spec->grid->axes[0].numerator, 1u);
  EXPECT_EQ(spec->grid->axes[0].denominator, 1u);
  EXPECT_EQ(spec->grid->axes[1].numerator, 8u);
  EXPECT_EQ(spec->grid->axes[1].denominator, 15u);
  EXPECT_EQ(spec->grid->channel_order, (std::vector<uint32_t>{0, 2, 1}));
  EXPECT_EQ(spec->grid->sin_cos, GridSinCos::kPerAxis);
  EXPECT_TRUE(ValidateSpec(*spec, {}).ok()) << ValidateSpec(*spec, {});
  // The explicit proto form names the same table.
  absl::StatusOr<TableSpec> again = SpecFromProto(SpecToProto(*spec));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == *spec);
}

TEST(SpecFromProtoTest, GridBadFields_InvalidArgumentNamingField) {
  v1::TableSpec spec = CogVideoXGridProto();
  spec.set_partial_rotary_factor(0.5);
  absl::StatusOr<TableSpec> s = SpecFromProto(spec);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("spec.partial_rotary_factor"),
            std::string::npos);
  spec = CogVideoXGridProto();
  spec.mutable_grid()->set_sin_cos(static_cast<v1::GridSinCos>(9));
  s = SpecFromProto(spec);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("spec.grid.sin_cos"), std::string::npos);
  spec = CogVideoXGridProto();
  for (int k = 0; k < 1000; ++k) spec.mutable_grid()->add_axes()->set_size(1);
  s = SpecFromProto(spec);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("spec.grid.axes"), std::string::npos);
}

}  // namespace
}  // namespace posenc
