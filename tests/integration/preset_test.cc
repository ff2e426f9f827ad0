// The ResolvePreset RPC against a real server on 127.0.0.1: a library call
// (or a model's config.json) resolves to the spec whose Encode rows are the
// same bytes as the hand-written spec of that call; refusals carry the
// exact code and name the argument.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/subprocess.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class PresetTest : public ServerTest {};

std::string ReadModel(const std::string& file) {
  std::ifstream in(std::string(POSENC_TESTDATA_DIR) + "/models/" + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(PresetTest, FluxTimestepPreset_SameBytesAsHandWrittenSpec) {
  absl::StatusOr<PosencClient::Preset> preset = client_->ResolvePreset(
      "flux.timestep_embedding", {{"dim", "256"}}, "", DType::kBFloat16);
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(preset->name, "flux.timestep_embedding");
  EXPECT_THAT(preset->reproduces, HasSubstr("black-forest-labs/flux"));
  ASSERT_TRUE(std::holds_alternative<EncodingSpec>(preset->spec));
  EncodingSpec by_hand;  // docs/encodings.md's FLUX row
  by_hand.dim = 256;
  by_hand.layout = Layout::kConcatCosSin;
  by_hand.scale = 1000;
  by_hand.dtype = DType::kBFloat16;
  const std::vector<double> t = {0, 0.25, 0.5, 1};
  absl::StatusOr<Tensor> a =
      client_->Encode(std::get<EncodingSpec>(preset->spec), t);
  absl::StatusOr<Tensor> b = client_->Encode(by_hand, t);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(a->shape, (std::vector<uint32_t>{4, 256}));
  EXPECT_EQ(a->data, b->data);
}

TEST_F(PresetTest, UnetConfig_Sd15TimestepsAt999Point5) {
  absl::StatusOr<PosencClient::Preset> preset =
      client_->ResolvePreset("", {}, ReadModel("sd15_unet_config.json"));
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(preset->name, "diffusers.Timesteps");
  const auto& spec = std::get<EncodingSpec>(preset->spec);
  EXPECT_EQ(spec.dim, 320u);
  EXPECT_EQ(spec.layout, Layout::kConcatCosSin);  // flip_sin_to_cos
  EXPECT_EQ(spec.shift, 0);                       // freq_shift
  absl::StatusOr<Tensor> rows = client_->Encode(spec, {999.5});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (std::vector<uint32_t>{1, 320}));
}

TEST_F(PresetTest, Sd3Config_GridTableServedAndCached) {
  // SD3-medium's transformer config, a 256 x 256 px image: a 32 x 32
  // latent, 16 x 16 patches cut from the centre of the 192 x 192 table.
  absl::StatusOr<PosencClient::Preset> preset = client_->ResolvePreset(
      "", {{"latent_height", "32"}, {"latent_width", "32"}},
      ReadModel("sd3_medium_transformer_config.json"));
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(preset->name, "diffusers.PatchEmbed");
  ASSERT_TRUE(std::holds_alternative<TableSpec>(preset->spec));
  const TableSpec& spec = std::get<TableSpec>(preset->spec);
  absl::StatusOr<Tensor> a = client_->GetTable(spec);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->shape, (std::vector<uint32_t>{256, 1536}));
  // Row 0, column 0: sin of the first column's position (88 + 0) * 64 /
  // 192 = 88 / 3 at frequency 1.
  EXPECT_EQ(a->ValueAt(0), static_cast<float>(std::sin(88.0 / 3.0)));
  absl::StatusOr<Tensor> b = client_->GetTable(spec);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->data, b->data);
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cache().hits(), 1u);
}

TEST_F(PresetTest, CliQwen2VlHfConfig_MropeRows) {
  ProgramResult r = RunCli(
      {"encode", "--hf-config",
       std::string(POSENC_TESTDATA_DIR) + "/models/qwen2_vl_7b_config.json",
       "--positions", "1000,1000,1000,1000,1001,1002"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two tokens of HF's [cos | sin], 2 x 128 values each.
  const std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(std::count(lines[0].begin(), lines[0].end(), ','), 255);
}

TEST_F(PresetTest, BadCalls_InvalidArgumentNamingTheArgument) {
  absl::StatusOr<PosencClient::Preset> unknown =
      client_->ResolvePreset("flux.timestep_embeddings", {{"dim", "256"}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("preset: \"flux.timestep_embeddings\""));
  absl::StatusOr<PosencClient::Preset> typo = client_->ResolvePreset(
      "flux.timestep_embedding", {{"dim", "256"}, {"max_periods", "1"}});
  EXPECT_EQ(typo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(typo.status().message(), HasSubstr("arguments.max_periods"));
  absl::StatusOr<PosencClient::Preset> config =
      client_->ResolvePreset("", {}, "{\"_class_name\": 3}");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("config_json"));
}

TEST_F(PresetTest, CliPresetAndConfig_SameCsvAsHandWrittenOptions) {
  ProgramResult by_hand =
      RunCli({"encode", "--dim", "320", "--layout", "concat_cos_sin",
              "--positions", "999.5,0.25"});
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  ProgramResult preset =
      RunCli({"encode", "--preset", "diffusers.Timesteps", "--arg",
              "num_channels=320", "--arg", "flip_sin_to_cos=True", "--arg",
              "downscale_freq_shift=0", "--positions", "999.5,0.25"});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  EXPECT_EQ(preset.out, by_hand.out);
  ProgramResult config = RunCli(
      {"encode", "--diffusers-config",
       std::string(POSENC_TESTDATA_DIR) + "/models/sd15_unet_config.json",
       "--positions", "999.5,0.25"});
  ASSERT_EQ(config.exit_code, 0) << config.err;
  EXPECT_EQ(config.out, by_hand.out);
}

TEST_F(PresetTest, CliPresetMisuse_UsageOrStatusExit) {
  // A spec option beside a preset: usage error (2), before any call.
  ProgramResult mixed =
      RunCli({"encode", "--preset", "flux.timestep_embedding", "--arg",
              "dim=256", "--shift", "1", "--positions", "0"});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("--shift cannot be combined with --preset"));
  ProgramResult bad_arg =
      RunCli({"encode", "--preset", "flux.timestep_embedding", "--arg", "dim",
              "--positions", "0"});
  EXPECT_EQ(bad_arg.exit_code, 2);
  EXPECT_THAT(bad_arg.err, HasSubstr("is not name=value"));
  // The server's refusal: exit 1 with the status.
  ProgramResult unknown =
      RunCli({"encode", "--preset", "flux.timestep_embedding", "--arg",
              "dims=256", "--positions", "0"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("INVALID_ARGUMENT: arguments.dims"));
  // An encoding preset asked for as a table.
  ProgramResult table = RunCli(
      {"table", "--preset", "flux.timestep_embedding", "--arg", "dim=256"});
  EXPECT_EQ(table.exit_code, 2);
  EXPECT_THAT(table.err, HasSubstr("use encode"));
}

}  // namespace
}  // namespace posenc::testing
