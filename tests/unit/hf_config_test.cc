// SpecFromHfConfig (client/hf_config.h) on LongRoPE configs: the factor
// and M that transformers' _compute_longrope_parameters uses, in both
// config.json layouts. The Phi-3-mini-128k configs are tests/testdata/hf
// (their README says where the values come from).
#include "client/hf_config.h"

#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

std::string ReadTestData(const std::string& name) {
  std::ifstream in(std::string(POSENC_TESTDATA_DIR "/hf/") + name);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Phi-3-mini-128k: head_dim 3072 / 32 = 96, 131072 positions, M 4096 and,
// with no factor in the config, factor 131072 / 4096 = 32 (so HF's
// attention factor sqrt(1 + ln 32 / ln 4096) = 1.1902...).
void ExpectPhi3Mini128k(const TableSpec& spec) {
  EXPECT_EQ(spec.d, 96u);
  EXPECT_EQ(spec.base, 10000.0);
  EXPECT_EQ(spec.max_len, 131072u);
  EXPECT_EQ(spec.layout, Layout::kRotateHalf);
  ASSERT_NE(spec.rope, nullptr);
  EXPECT_EQ(spec.rope->type, RopeType::kLongRope);
  EXPECT_EQ(spec.rope->factor, 32.0);
  EXPECT_EQ(spec.rope->original_max_position_embeddings, 4096u);
  EXPECT_EQ(spec.rope->attention_factor, 0.0);  // the default, derived
  EXPECT_EQ(spec.rope->seq_len, 0u);
  ASSERT_EQ(spec.rope->short_factor.size(), 48u);
  ASSERT_EQ(spec.rope->long_factor.size(), 48u);
  EXPECT_EQ(spec.rope->short_factor[0], 1.05);
  EXPECT_EQ(spec.rope->long_factor[47], 64.81001281738281);
}

TEST(HfConfigLongRopeTest, Phi3Mini128kTopLevelLayout_FactorIsContextRatio) {
  absl::StatusOr<TableSpec> spec =
      SpecFromHfConfig(ReadTestData("phi3_mini_128k_top_level.json"), {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectPhi3Mini128k(*spec);
}

TEST(HfConfigLongRopeTest,
     Phi3Mini128kRopeParametersLayout_FactorIsContextRatio) {
  absl::StatusOr<TableSpec> spec =
      SpecFromHfConfig(ReadTestData("phi3_mini_128k_rope_parameters.json"), {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectPhi3Mini128k(*spec);
  absl::StatusOr<TableSpec> old =
      SpecFromHfConfig(ReadTestData("phi3_mini_128k_top_level.json"), {});
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(*spec, *old);
}

// SpecFromHfConfig(json) is a RoPE spec with `factor` and M = `m`.
void ExpectLongRopeFactorAndM(const std::string& json, double factor,
                              uint32_t m) {
  absl::StatusOr<TableSpec> spec = SpecFromHfConfig(json, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->factor, factor);
  EXPECT_EQ(spec->rope->original_max_position_embeddings, m);
}

TEST(HfConfigLongRopeTest, OriginalInsideRopeScaling_FactorIsContextRatio) {
  // The current layout under the older key name rope_scaling.
  const std::string json =
      absl::StrReplaceAll(ReadTestData("phi3_mini_128k_rope_parameters.json"),
                          {{"\"rope_parameters\"", "\"rope_scaling\""}});
  absl::StatusOr<TableSpec> spec = SpecFromHfConfig(json, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectPhi3Mini128k(*spec);
}

TEST(HfConfigLongRopeTest, ExplicitFactor_TakenOverTheRatio) {
  // transformers v5 uses rope_parameters' factor when it is set.
  ExpectLongRopeFactorAndM(
      R"({"head_dim": 8, "max_position_embeddings": 131072,
          "rope_parameters": {"rope_type": "longrope", "factor": 16.0,
            "original_max_position_embeddings": 4096,
            "short_factor": [1, 1, 1, 1], "long_factor": [2, 2, 2, 2]}})",
      16.0, 4096);
}

TEST(HfConfigLongRopeTest, NoOriginalAnywhere_MIsMaxPositionsFactorOne) {
  // HF's standardize_rope_params sets M = max_position_embeddings: the
  // ratio is 1, so no attention factor.
  ExpectLongRopeFactorAndM(
      R"({"head_dim": 8, "max_position_embeddings": 4096,
          "rope_scaling": {"type": "longrope",
            "short_factor": [1, 1, 1, 1], "long_factor": [2, 2, 2, 2]}})",
      1.0, 4096);
}

TEST(HfConfigLongRopeTest, FractionalOriginal_InvalidArgumentWithAllDigits) {
  absl::StatusOr<TableSpec> spec = SpecFromHfConfig(
      R"({"head_dim": 8, "max_position_embeddings": 131072,
          "rope_scaling": {"type": "longrope",
            "original_max_position_embeddings": 4096.000000000001,
            "short_factor": [1, 1, 1, 1], "long_factor": [2, 2, 2, 2]}})",
      {});
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(),
            "rope_scaling.original_max_position_embeddings must be a "
            "non-negative integer, got 4096.000000000001");
}

// Regression (fuzz_hf_config, issue 36's campaign): a negative
// partial_rotary_factor made int(head_dim * f) a negative double cast to
// uint32_t, undefined behaviour; now refused as the server refuses it.
TEST(HfConfigHostileTest, NegativePartialRotaryFactor_InvalidArgument) {
  absl::StatusOr<TableSpec> spec = SpecFromHfConfig(
      R"({"head_dim": 128, "max_position_embeddings": 4096,
          "partial_rotary_factor": -0.5,
          "rope_scaling": {"type": "dynamic", "factor": 2.0}})",
      {});
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(),
            "partial_rotary_factor must be in (0, 1] in config.json, got "
            "-0.5");
  for (const char* f : {"0", "1.5", "1e308"}) {
    const std::string json =
        absl::StrCat(R"({"head_dim": 128, "max_position_embeddings": 4096, )",
                     R"("partial_rotary_factor": )", f, "}");
    EXPECT_EQ(SpecFromHfConfig(json, {}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << f;
  }
}

// The same cast of original_max_position_embeddings in the dynamic and
// YaRN branches: a negative or fractional one is named.
TEST(HfConfigHostileTest, NegativeOriginalMaxPositions_InvalidArgument) {
  for (const char* type : {"dynamic", "yarn"}) {
    absl::StatusOr<TableSpec> spec = SpecFromHfConfig(
        absl::StrCat(R"({"head_dim": 64, "max_position_embeddings": 4096,
            "rope_scaling": {"type": ")",
                     type,
                     R"(", "factor": 2.0,
            "original_max_position_embeddings": -64}})"),
        {});
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << type;
    EXPECT_EQ(spec.status().message(),
              "rope_scaling.original_max_position_embeddings must be a "
              "non-negative integer, got -64")
        << type;
  }
}

}  // namespace
}  // namespace posenc
