#include "convert/routing_key.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "convert/proto_conversion.h"

namespace posenc {
namespace {

TEST(RoutingKey, DefaultsAreNormalised_SameKeyAsExplicitSpec) {
  v1::TableSpec unset;
  unset.set_d(512);
  unset.set_max_len(100);
  v1::TableSpec explicit_spec = unset;
  explicit_spec.set_base(10000);
  explicit_spec.set_dtype(v1::DTYPE_FLOAT32);
  explicit_spec.set_layout(v1::LAYOUT_INTERLEAVED);
  explicit_spec.set_frequency(v1::FREQUENCY_PAPER);
  EXPECT_EQ(RoutingKey(unset),
            "d=512;base=10000;dtype=float32;layout=interleaved;freq=paper");
  EXPECT_EQ(RoutingKey(explicit_spec), RoutingKey(unset));
}

// The server resolves a partial_rotary_factor into d (the rotary dimension,
// the truncated double product), so (d, factor) and (rotary d, no factor)
// are one family and must share a key; so must factor 1 and unset.
TEST(RoutingKey, PartialRotaryFactor_SameKeyAsRotaryDimension) {
  struct Case {
    uint32_t d;
    double prf;
    uint32_t rotary;
  };
  for (const Case& c :
       {Case{64, 0.5, 32}, Case{64, 1.0, 64}, Case{96, 0.25, 24},
        // 100 * 0.29 = 28.999999999999996 in double.
        Case{100, 0.29, 28}}) {
    v1::TableSpec with_prf;
    with_prf.set_d(c.d);
    with_prf.set_max_len(16);
    with_prf.set_layout(v1::LAYOUT_ROTATE_HALF);
    with_prf.set_partial_rotary_factor(c.prf);
    with_prf.mutable_rope()->set_type(v1::ROPE_TYPE_LINEAR);
    with_prf.mutable_rope()->set_factor(2);
    v1::TableSpec without = with_prf;
    without.set_d(c.rotary);
    without.clear_partial_rotary_factor();
    SCOPED_TRACE(absl::StrCat("d=", c.d, " prf=", c.prf));
    EXPECT_EQ(RoutingKey(with_prf), RoutingKey(without));
    EXPECT_EQ(RoutingKey(with_prf).rfind(absl::StrCat("d=", c.rotary, ";"), 0),
              0u);
    // The server's own reading: the same family.
    absl::StatusOr<TableSpec> a = SpecFromProto(with_prf);
    absl::StatusOr<TableSpec> b = SpecFromProto(without);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(a->SameFamily(*b));
  }
  // Out of (0, 1]: the server rejects it; the key keeps d and names it.
  v1::TableSpec bad;
  bad.set_d(64);
  bad.set_partial_rotary_factor(1.5);
  EXPECT_EQ(RoutingKey(bad),
            "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;"
            "prf=1.5");
  EXPECT_EQ(SpecFromProto(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RoutingKey, RopeLlama3_ProtoExampleKey) {
  v1::TableSpec spec;
  spec.set_d(128);
  spec.set_base(500000);
  spec.set_max_len(8192);
  spec.set_dtype(v1::DTYPE_BFLOAT16);
  spec.set_layout(v1::LAYOUT_ROTATE_HALF);
  spec.set_frequency(v1::FREQUENCY_PAPER);
  v1::RopeScaling* rope = spec.mutable_rope();
  rope->set_type(v1::ROPE_TYPE_LLAMA3);
  rope->set_factor(8);
  rope->set_original_max_position_embeddings(8192);
  rope->set_low_freq_factor(1);
  rope->set_high_freq_factor(4);
  EXPECT_EQ(RoutingKey(spec),
            "d=128;base=500000;dtype=bfloat16;layout=rotate_half;freq=paper;"
            "rope=llama3;factor=8;original_max_position_embeddings=8192;"
            "low_freq_factor=1;high_freq_factor=4");
}

TEST(RoutingKey, RopeListsHashedPrfFoldedTruncateNamed) {
  v1::TableSpec spec;
  spec.set_d(8);
  spec.set_layout(v1::LAYOUT_INTERLEAVED_PAIRS);
  spec.set_partial_rotary_factor(0.5);
  v1::RopeScaling* rope = spec.mutable_rope();
  rope->set_type(v1::ROPE_TYPE_LONGROPE);
  rope->set_original_max_position_embeddings(4096);
  rope->set_seq_len(8192);
  for (double v : {1.0, 1.5, 2.25, 3.0}) rope->add_short_factor(v);
  for (double v : {4.0, 8.0, 16.0, 32.0}) rope->add_long_factor(v);
  // Hashes: FNV-1a 64 of the little-endian float64 bytes, checked with
  // Python's struct.pack('<d').
  EXPECT_EQ(RoutingKey(spec),
            "d=4;base=10000;dtype=float32;layout=interleaved_pairs;freq=paper;"
            "rope=longrope;original_max_position_embeddings=4096;"
            "seq_len=8192;short_factor=2847407824701127;"
            "long_factor=8ec4f8313371b225");
  v1::TableSpec yarn;
  yarn.set_d(64);
  yarn.mutable_rope()->set_type(v1::ROPE_TYPE_YARN);
  yarn.mutable_rope()->set_factor(4);
  yarn.mutable_rope()->set_truncate(false);
  EXPECT_EQ(RoutingKey(yarn),
            "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;"
            "rope=yarn;factor=4;truncate=false");
  // An empty rope message adds nothing: the plain table's key.
  v1::TableSpec plain;
  plain.set_d(64);
  plain.mutable_rope();
  EXPECT_EQ(RoutingKey(plain),
            "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper");
}

TEST(RoutingKey, MaxLenIgnored_OtherFieldsNamed) {
  v1::TableSpec a;
  a.set_d(64);
  a.set_base(500.5);
  a.set_max_len(7);
  a.set_dtype(v1::DTYPE_BFLOAT16);
  a.set_layout(v1::LAYOUT_CONCAT_COS_SIN);
  a.set_frequency(v1::FREQUENCY_T2T);
  v1::TableSpec b = a;
  b.set_max_len(1 << 20);
  EXPECT_EQ(RoutingKey(a), RoutingKey(b));
  EXPECT_EQ(RoutingKey(a),
            "d=64;base=500.5;dtype=bfloat16;layout=concat_cos_sin;freq=t2t");
  b.set_dtype(v1::DTYPE_FLOAT16);
  EXPECT_NE(RoutingKey(a), RoutingKey(b));
}

TEST(RoutingKey, UnknownEnums_WrittenAsNumbers) {
  v1::TableSpec spec;
  spec.set_d(3);
  spec.set_dtype(static_cast<v1::DType>(9));
  spec.set_layout(static_cast<v1::Layout>(8));
  spec.set_frequency(static_cast<v1::Frequency>(7));
  EXPECT_EQ(RoutingKey(spec), "d=3;base=10000;dtype=9;layout=8;freq=7");
  // Layout 6 (rotation matrices, Encode only) has its name, as every
  // client derives it from the proto.
  spec.set_layout(v1::LAYOUT_ROTATION_MATRIX);
  EXPECT_EQ(RoutingKey(spec),
            "d=3;base=10000;dtype=9;layout=rotation_matrix;freq=7");
}

// Expected strings are JavaScript's String(x), checked with node.
TEST(FormatBaseForKey, TrickyDoubles_MatchJavaScriptString) {
  EXPECT_EQ(FormatBaseForKey(10000), "10000");
  EXPECT_EQ(FormatBaseForKey(0.1), "0.1");
  EXPECT_EQ(FormatBaseForKey(1e21), "1e+21");
  EXPECT_EQ(FormatBaseForKey(1e20), "100000000000000000000");
  EXPECT_EQ(FormatBaseForKey(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(FormatBaseForKey(5e-324), "5e-324");
  EXPECT_EQ(FormatBaseForKey(1e-6), "0.000001");
  EXPECT_EQ(FormatBaseForKey(1e-7), "1e-7");
  EXPECT_EQ(FormatBaseForKey(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatBaseForKey(1e6), "1000000");
  EXPECT_EQ(FormatBaseForKey(500.5), "500.5");
  EXPECT_EQ(FormatBaseForKey(1.7976931348623157e308),
            "1.7976931348623157e+308");
  EXPECT_EQ(FormatBaseForKey(1.0000000000000002), "1.0000000000000002");
  EXPECT_EQ(FormatBaseForKey(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(FormatBaseForKey(-2.5), "-2.5");
  EXPECT_EQ(FormatBaseForKey(-0.0), "0");
  EXPECT_EQ(FormatBaseForKey(std::numeric_limits<double>::infinity()),
            "Infinity");
  EXPECT_EQ(FormatBaseForKey(std::nan("")), "NaN");
}

// MAE ViT-B/16 with its cls token, as the proto's routing-key example.
v1::TableSpec MaeGrid() {
  v1::TableSpec spec;
  spec.set_d(768);
  spec.set_layout(v1::LAYOUT_CONCAT_SIN_COS);
  v1::GridSpec* grid = spec.mutable_grid();
  for (int a = 0; a < 2; ++a) {
    v1::GridSpecAxis* axis = grid->add_axes();
    axis->set_size(14);
    axis->set_channels(384);
  }
  grid->add_channel_order(1);
  grid->add_channel_order(0);
  grid->set_extra_zero_rows(1);
  return spec;
}

TEST(RoutingKey, Grid_ProtoExampleKey) {
  EXPECT_EQ(RoutingKey(MaeGrid()),
            "d=768;base=10000;dtype=float32;layout=concat_sin_cos;freq=paper;"
            "grid=14:384:0:1/1,14:384:0:1/1;order=1,0;sin_cos=per_axis;"
            "extra=1");
}

TEST(RoutingKey, GridDefaultsAndReducedFractions_SameKey) {
  // Unset numerator/denominator, 1/1 and 16/16 name one table; an unset
  // channel_order is 0,1; max_len is not part of the key.
  v1::TableSpec a = MaeGrid();
  a.mutable_grid()->clear_channel_order();
  v1::TableSpec b = a;
  b.set_max_len(197);
  for (int k = 0; k < 2; ++k) {
    b.mutable_grid()->mutable_axes(k)->set_position_numerator(16);
    b.mutable_grid()->mutable_axes(k)->set_position_denominator(16);
  }
  b.mutable_grid()->add_channel_order(0);
  b.mutable_grid()->add_channel_order(1);
  b.mutable_grid()->set_sin_cos(v1::GRID_SIN_COS_PER_AXIS);
  EXPECT_EQ(RoutingKey(a), RoutingKey(b));
  EXPECT_NE(RoutingKey(a).find(";order=0,1;"), std::string::npos)
      << RoutingKey(a);
  // SpecFromProto resolves them to one cache key as well.
  absl::StatusOr<TableSpec> sa = SpecFromProto(a), sb = SpecFromProto(b);
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_TRUE(*sa == *sb);
}

TEST(RoutingKey, GridFieldsEachChangeTheKey) {
  const std::string base = RoutingKey(MaeGrid());
  v1::TableSpec s = MaeGrid();
  s.mutable_grid()->mutable_axes(0)->set_position_numerator(2);
  s.mutable_grid()->mutable_axes(0)->set_position_denominator(3);
  EXPECT_NE(RoutingKey(s).find("grid=14:384:0:2/3,"), std::string::npos)
      << RoutingKey(s);
  s = MaeGrid();
  s.mutable_grid()->mutable_axes(1)->set_first_index(5);
  EXPECT_NE(RoutingKey(s).find(",14:384:5:1/1;"), std::string::npos);
  s = MaeGrid();
  s.mutable_grid()->set_sin_cos(v1::GRID_SIN_COS_GROUPED);
  EXPECT_NE(RoutingKey(s).find(";sin_cos=grouped;"), std::string::npos);
  s.mutable_grid()->set_sin_cos(static_cast<v1::GridSinCos>(7));
  EXPECT_NE(RoutingKey(s).find(";sin_cos=7;"), std::string::npos);
  s = MaeGrid();
  s.mutable_grid()->set_extra_zero_rows(0);
  EXPECT_NE(RoutingKey(s), base);
  s = MaeGrid();
  s.clear_grid();
  EXPECT_EQ(RoutingKey(s),
            "d=768;base=10000;dtype=float32;layout=concat_sin_cos;freq=paper");
}

}  // namespace
}  // namespace posenc
