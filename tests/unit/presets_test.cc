// Presets (presets/presets.h), their argument parsing
// (presets/preset_arguments.h), the model-config readers
// (presets/model_config.h) and the ResolvePreset request step
// (convert/preset_request.h): what each call resolves to, and the exact
// status and field named for every bad input.
#include "presets/presets.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>

#include "convert/preset_request.h"
#include "gtest/gtest.h"
#include "presets/model_config.h"

namespace posenc {
namespace {

using Arguments = std::map<std::string, std::string>;

absl::StatusOr<ResolvedPreset> Resolve(const std::string& name,
                                       Arguments args) {
  absl::StatusOr<PresetArguments> parsed =
      PresetArguments::Create(std::move(args));
  if (!parsed.ok()) return parsed.status();
  return ResolvePreset(name, *std::move(parsed), DType::kFloat32, SpecLimits{});
}

void ExpectInvalid(const absl::Status& status, const std::string& text) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(text), std::string::npos) << status;
}

std::string ReadModel(const std::string& file) {
  std::ifstream in(std::string(POSENC_TESTDATA_DIR) + "/models/" + file);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << file;
  return s.str();
}

TEST(PresetsTest, DiffusersDefaults_SinCosShiftOne) {
  absl::StatusOr<ResolvedPreset> r =
      Resolve("diffusers.get_timestep_embedding", {{"embedding_dim", "320"}});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& spec = std::get<EncodingSpec>(r->spec);
  EXPECT_EQ(spec.dim, 320u);
  EXPECT_EQ(spec.layout, Layout::kConcatSinCos);
  EXPECT_EQ(spec.shift, 1);
  EXPECT_EQ(spec.scale, 1);
  EXPECT_EQ(spec.max_period, 10000);
  EXPECT_FALSE(spec.pad_odd_dim);
  EXPECT_NE(r->info->reproduces.find("diffusers"), std::string::npos);
}

TEST(PresetsTest, PythonSpellings_Accepted) {
  absl::StatusOr<ResolvedPreset> r = Resolve("diffusers.get_timestep_embedding",
                                             {{"embedding_dim", "321.0"},
                                              {"flip_sin_to_cos", "True"},
                                              {"downscale_freq_shift", "0"},
                                              {"scale", "1e3"}});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& spec = std::get<EncodingSpec>(r->spec);
  EXPECT_EQ(spec.dim, 321u);
  EXPECT_TRUE(spec.pad_odd_dim);  // diffusers' zero column
  EXPECT_EQ(spec.layout, Layout::kConcatCosSin);
  EXPECT_EQ(spec.scale, 1000);
}

TEST(PresetsTest, FluxTimestep_TimeFactorIsTheScale) {
  absl::StatusOr<ResolvedPreset> r =
      Resolve("flux.timestep_embedding", {{"dim", "256"}});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& spec = std::get<EncodingSpec>(r->spec);
  EXPECT_EQ(spec.layout, Layout::kConcatCosSin);
  EXPECT_EQ(spec.shift, 0);
  EXPECT_EQ(spec.scale, 1000);
}

TEST(PresetsTest, Nerf_OctavesOverEveryCoordinate) {
  absl::StatusOr<ResolvedPreset> r =
      Resolve("nerfstudio.NeRFEncoding", {{"in_dim", "3"},
                                          {"num_frequencies", "10"},
                                          {"min_freq_exp", "0"},
                                          {"max_freq_exp", "8"},
                                          {"include_input", "true"}});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& spec = std::get<EncodingSpec>(r->spec);
  EXPECT_EQ(spec.scheme, FrequencyScheme::kOctaves);
  EXPECT_EQ(spec.width(), 3u * 10 * 2 + 3);
}

TEST(PresetsTest, UnknownPreset_InvalidArgumentListingKnown) {
  absl::StatusOr<ResolvedPreset> r = Resolve("diffusers.get_timestep", {});
  ExpectInvalid(r.status(), "preset: \"diffusers.get_timestep\"");
  ExpectInvalid(r.status(), "diffusers.get_timestep_embedding");
}

TEST(PresetsTest, MissingArgument_InvalidArgumentNamingIt) {
  ExpectInvalid(Resolve("flux.timestep_embedding", {}).status(),
                "arguments.dim: required");
}

TEST(PresetsTest, UnknownArgument_InvalidArgumentNamingItAndKnown) {
  absl::Status s = Resolve("flux.timestep_embedding",
                           {{"dim", "256"}, {"timesteps", "[1, 2]"}})
                       .status();
  ExpectInvalid(s, "arguments.timesteps");
  ExpectInvalid(s, "time_factor=1000.0");
}

TEST(PresetsTest, MalformedValues_InvalidArgumentNamingTheArgument) {
  ExpectInvalid(Resolve("flux.timestep_embedding", {{"dim", "25.5"}}).status(),
                "arguments.dim: \"25.5\" is not an integer");
  ExpectInvalid(Resolve("flux.timestep_embedding", {{"dim", "abc"}}).status(),
                "arguments.dim");
  ExpectInvalid(Resolve("flux.timestep_embedding",
                        {{"dim", "256"}, {"max_period", "nan"}})
                    .status(),
                "arguments.max_period: \"nan\" is not a finite number");
  ExpectInvalid(Resolve("diffusers.get_timestep_embedding",
                        {{"embedding_dim", "8"}, {"flip_sin_to_cos", "yes"}})
                    .status(),
                "arguments.flip_sin_to_cos");
  ExpectInvalid(Resolve("flux.timestep_embedding", {{"dim", "70000"}}).status(),
                "arguments.dim: \"70000\" is not an integer in 2..65536");
}

TEST(PresetsTest, SpecTheLimitsRefuse_InvalidArgumentNamingTheField) {
  // downscale_freq_shift at half: the exponent's denominator is zero.
  ExpectInvalid(Resolve("diffusers.get_timestep_embedding",
                        {{"embedding_dim", "8"}, {"downscale_freq_shift", "4"}})
                    .status(),
                "spec.shift");
}

TEST(PresetArgumentsTest, Bounds_InvalidArgument) {
  Arguments many;
  for (int k = 0; k < 33; ++k) many["a" + std::to_string(k)] = "1";
  ExpectInvalid(PresetArguments::Create(many).status(), "at most 32");
  ExpectInvalid(
      PresetArguments::Create({{"dim", std::string(1025, '1')}}).status(),
      "arguments.dim: 1025 bytes");
  ExpectInvalid(PresetArguments::Create({{std::string(65, 'x'), "1"}}).status(),
                "names have 1..64");
}

TEST(PresetArgumentsTest, Lists_BracketsTuplesAndBareNumbers) {
  absl::StatusOr<PresetArguments> args =
      PresetArguments::Create({{"a", "[16, 56, 56]"},
                               {"b", "(4,)"},
                               {"c", "7"},
                               {"d", "[1, 2"},
                               {"e", "[1, -2]"}});
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args->Counts("a", {}, 0, 100, 1, 3),
            (std::vector<uint32_t>{16, 56, 56}));
  EXPECT_EQ(*args->Counts("b", {}, 0, 100, 1, 3), (std::vector<uint32_t>{4}));
  EXPECT_EQ(*args->Counts("c", {}, 0, 100, 1, 3), (std::vector<uint32_t>{7}));
  ExpectInvalid(args->Counts("d", {}, 0, 100, 1, 3).status(),
                "arguments.d: \"[1, 2\" is not a list");
  ExpectInvalid(args->Counts("e", {}, 0, 100, 1, 3).status(),
                "not an integer in 0..100");
  ExpectInvalid(args->Counts("a", {}, 0, 100, 1, 2).status(),
                "has 3 entries; it takes 1..2");
}

TEST(ModelConfigTest, Sd15Unet_TimestepsFromBlockOutChannels) {
  absl::StatusOr<ModelConfigCall> call =
      ReadModelConfig(ReadModel("sd15_unet_config.json"), "");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->preset, "diffusers.Timesteps");
  EXPECT_EQ(call->arguments, (Arguments{{"num_channels", "320"},
                                        {"flip_sin_to_cos", "true"},
                                        {"downscale_freq_shift", "0"}}));
}

TEST(ModelConfigTest, FluxTimesteps_CombinedTimestepProjection) {
  absl::StatusOr<ModelConfigCall> call = ReadModelConfig(
      ReadModel("flux1_dev_transformer_config.json"), "diffusers.Timesteps");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->arguments.at("num_channels"), "256");
}

TEST(ModelConfigTest, FluxConfig_DefaultIsDiffusersPosEmbedFromAxesDimsRope) {
  const std::string config = ReadModel("flux1_dev_transformer_config.json");
  absl::StatusOr<ModelConfigCall> call = ReadModelConfig(config, "");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->preset, "diffusers.FluxPosEmbed");
  EXPECT_EQ(call->arguments,
            (Arguments{{"theta", "10000"}, {"axes_dim", "[16, 56, 56]"}}));
  absl::StatusOr<ModelConfigCall> bfl = ReadModelConfig(config, "flux.EmbedND");
  ASSERT_TRUE(bfl.ok()) << bfl.status();
  EXPECT_EQ(bfl->arguments.at("dim"), "128");
}

TEST(ModelConfigTest, Sd3Config_PatchEmbedCroppedFrom192) {
  v1::ResolvePresetRequest request;
  request.set_config_json(ReadModel("sd3_medium_transformer_config.json"));
  absl::StatusOr<v1::ResolvePresetResponse> response =
      ResolvePresetRequest(request, SpecLimits{});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->preset(), "diffusers.PatchEmbed");
  ASSERT_TRUE(response->has_table());
  const v1::TableSpec& t = response->table();
  EXPECT_EQ(t.d(), 1536u);  // 24 heads x 64
  EXPECT_EQ(t.max_len(), 64u * 64);
  // A 128 x 128 latent (1024 px) is 64 x 64 patches: the centre of the
  // 192 x 192 table, top = left = 64, step base_size / M = 64 / 192.
  ASSERT_EQ(t.grid().axes_size(), 2);
  EXPECT_EQ(t.grid().axes(0).first_index(), 64u);
  EXPECT_EQ(t.grid().axes(0).position_numerator(), 1u);
  EXPECT_EQ(t.grid().axes(0).position_denominator(), 3u);
}

TEST(ModelConfigTest, Qwen2VlConfig_MropeSectionsAndHeadDim) {
  absl::StatusOr<ModelConfigCall> call =
      ReadModelConfig(ReadModel("qwen2_vl_7b_config.json"), "");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->preset, "qwen2_vl.mrope");
  EXPECT_EQ(call->arguments, (Arguments{{"head_dim", "128"},
                                        {"rope_theta", "1e+06"},
                                        {"mrope_section", "[16, 24, 24]"}}));
}

TEST(PresetsTest, GridAndMultiAxisMisuse_InvalidArgumentNamingTheArgument) {
  ExpectInvalid(Resolve("mae.get_2d_sincos_pos_embed",
                        {{"embed_dim", "66"}, {"grid_size", "14"}})
                    .status(),
                "arguments.embed_dim: 66 must be a multiple of 4");
  ExpectInvalid(Resolve("diffusers.get_2d_sincos_pos_embed",
                        {{"embed_dim", "64"},
                         {"grid_size", "8"},
                         {"interpolation_scale", "0.1"}})
                    .status(),
                "arguments.interpolation_scale: 0.1 is not exactly a ratio");
  ExpectInvalid(Resolve("diffusers.PatchEmbed", {{"height", "16"},
                                                 {"patch_size", "2"},
                                                 {"embed_dim", "32"},
                                                 {"pos_embed_max_size", "8"},
                                                 {"latent_height", "20"}})
                    .status(),
                "must be at most pos_embed_max_size = 8");
  ExpectInvalid(Resolve("timm.RotaryEmbeddingCat", {{"dim", "64"}}).status(),
                "arguments.in_pixels: True (timm's default)");
  ExpectInvalid(Resolve("flux.EmbedND", {{"dim", "100"},
                                         {"theta", "10000"},
                                         {"axes_dim", "[16, 56, 56]"}})
                    .status(),
                "arguments.dim: 100 is not sum(axes_dim) = 128");
  ExpectInvalid(Resolve("qwen2_vl.mrope", {{"head_dim", "128"},
                                           {"rope_theta", "1e6"},
                                           {"mrope_section", "[16, 24]"}})
                    .status(),
                "arguments.mrope_section");
}

TEST(ModelConfigTest, BadConfigs_InvalidArgumentNamingConfigJson) {
  ExpectInvalid(ReadModelConfig("{not json", "").status(),
                "config_json: not a JSON object");
  ExpectInvalid(ReadModelConfig("[1, 2]", "").status(), "config_json");
  ExpectInvalid(ReadModelConfig(R"({"_class_name": "VQModel"})", "").status(),
                "config_json: _class_name / model_type \"VQModel\" has no "
                "reader");
  ExpectInvalid(ReadModelConfig(std::string(64 * 1024 + 1, ' '), "").status(),
                "config_json: 65537 bytes, at most 65536");
  ExpectInvalid(ReadModelConfig(ReadModel("sd15_unet_config.json"),
                                "nerfstudio.NeRFEncoding")
                    .status(),
                "UNet2DConditionModel builds no nerfstudio.NeRFEncoding");
  ExpectInvalid(
      ReadModelConfig(
          R"({"_class_name": "UNet2DConditionModel", "time_embedding_type": "fourier", "block_out_channels": [320]})",
          "")
          .status(),
      "time_embedding_type");
  ExpectInvalid(
      ReadModelConfig(
          R"({"_class_name": "UNet2DConditionModel", "block_out_channels": "320"})",
          "")
          .status(),
      "block_out_channels");
}

TEST(PresetRequestTest, ConfigAndArguments_ArgumentsOverrideTheConfig) {
  v1::ResolvePresetRequest request;
  request.set_config_json(ReadModel("sd15_unet_config.json"));
  (*request.mutable_arguments())["downscale_freq_shift"] = "1";
  request.set_dtype(v1::DTYPE_BFLOAT16);
  absl::StatusOr<v1::ResolvePresetResponse> response =
      ResolvePresetRequest(request, SpecLimits{});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->preset(), "diffusers.Timesteps");
  ASSERT_TRUE(response->has_encoding());
  EXPECT_EQ(response->encoding().dim(), 320u);
  EXPECT_EQ(response->encoding().shift(), 1);
  EXPECT_EQ(response->encoding().layout(), v1::LAYOUT_CONCAT_COS_SIN);
  EXPECT_EQ(response->encoding().dtype(), v1::DTYPE_BFLOAT16);
}

TEST(PresetRequestTest, NoPresetNoConfig_InvalidArgument) {
  absl::StatusOr<v1::ResolvePresetResponse> response =
      ResolvePresetRequest(v1::ResolvePresetRequest(), SpecLimits{});
  ExpectInvalid(response.status(), "preset: \"\" is not a known preset");
}

}  // namespace
}  // namespace posenc
