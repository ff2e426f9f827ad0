// The `posenc` CLI end to end: the real binary against a real server.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/encoding_specs.h"
#include "tests/common/npy_reader.h"
#include "tests/common/rope_scalings.h"
#include "tests/common/subprocess.h"
#include "tests/common/table_specs.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class CliTest : public ServerTest {
 protected:
  using Result = ProgramResult;

  static std::string Temp(const std::string& name) {
    return TestTempPath(name);
  }
};

TEST_F(CliTest, TableToNpy_FileHoldsTheServersTable) {
  const std::string path = Temp("pe.npy");
  Result r = RunCli({"table", "--d", "512", "--max-len", "1024", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<NpyArray> npy = ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->descr, "<f4");
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{1024, 512}));
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(512, 1024));
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(npy->data, table->data);
  float row2[4];
  std::memcpy(row2, npy->data.data() + 2 * 512 * 4, sizeof row2);
  EXPECT_NEAR(row2[0], 0.9093, 1e-4);
  EXPECT_NEAR(row2[1], -0.4161, 1e-4);
}

TEST_F(CliTest, GridTable_FileHoldsTheServersGridTable) {
  // MAE at 4 x 6 with its cls token: 25 rows of 16 channels.
  const std::string path = Temp("grid.npy");
  Result r = RunCli({"table", "--grid", "4x6", "--d", "16", "--grid-order",
                     "1,0", "--grid-extra", "1", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<NpyArray> npy = ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{25, 16}));
  const TableSpec spec =
      GridTableSpec({GridAxis(4, 8), GridAxis(6, 8)}, {1, 0},
                    Layout::kConcatSinCos, GridSinCos::kPerAxis,
                    /*extra_zero_rows=*/1);  // d 16, max_len 25
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(npy->data, table->data);
  // A bad grid: exit 1 with the server's field on stderr.
  Result bad = RunCli({"table", "--grid", "4x0", "--d", "16"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("spec.grid.axes[1].size"), std::string::npos)
      << bad.err;
}

TEST_F(CliTest, RowsToBinAndCsv_MatchStream) {
  const std::string bin = Temp("rows.bin");
  Result r = RunCli({"rows", "--d", "8", "--max-len", "100", "--start", "10",
                     "--end", "20", "--rows-per-batch", "3", "-o", bin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(8, 100));
  ASSERT_TRUE(table.ok());
  std::ifstream in(bin, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bytes, table->data.substr(10 * 32, 10 * 32));

  Result csv = RunCli(
      {"rows", "--d", "4", "--max-len", "4", "--start", "2", "--end", "3"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("0.9092974,-0.41614684,0.019998666,0.9998"));
}

TEST_F(CliTest, GatherWorkedExample_PrintsCsv) {
  Result r =
      RunCli({"gather", "--d", "4", "--max-len", "8", "--positions", "2,3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "0.9092974,-0.41614684,0.019998666,0.9998\n"
            "0.14112,-0.9899925,0.029995501,0.99955004\n");
}

TEST_F(CliTest, InvalidSpec_ExitOneWithStatusOnStderr) {
  Result r = RunCli({"table", "--d", "3", "--max-len", "4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("spec.d must be even"));
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliTest, UsageErrors_ExitTwo) {
  EXPECT_EQ(RunCli({"frobnicate"}).exit_code, 2);
  Result missing = RunCli({"table", "--d", "4"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--max-len"));
  EXPECT_EQ(
      RunCli({"table", "--d", "4", "--max-len", "4", "-o", "x.txt"}).exit_code,
      1);
}

TEST_F(CliTest, ZeroOrMissingSize_UsageErrorSaysWhatIsWrong) {
  Result zero = RunCli({"table", "--d", "4", "--max-len", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("--max-len must be at least 1"));
  EXPECT_THAT(zero.err, HasSubstr("got 0"));
  Result zero_d = RunCli({"table", "--d", "0", "--max-len", "4"});
  EXPECT_EQ(zero_d.exit_code, 2);
  EXPECT_THAT(zero_d.err, HasSubstr("--d must be at least 2"));
  Result missing_d = RunCli({"table", "--max-len", "4"});
  EXPECT_EQ(missing_d.exit_code, 2);
  EXPECT_THAT(missing_d.err, HasSubstr("--d is required"));
}

TEST_F(CliTest, TableOverMessageLimit_NamesTheStreamingCommand) {
  ServerOptions options = DefaultOptions();
  options.max_message_bytes = 1024;
  StartServer(options);
  Result r = RunCli({"table", "--d", "64", "--max-len", "100"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(r.err, HasSubstr("use `posenc rows`"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("StreamBatches")));
  // The command it names works with the same options.
  Result rows = RunCli(
      {"rows", "--d", "64", "--max-len", "100", "-o", Temp("streamed.npy")});
  EXPECT_EQ(rows.exit_code, 0) << rows.err;
}

TEST_F(CliTest, Help_ListsCommandsAndOptionsWithDefaults) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--help"}, {"help"}, {"rows", "--help"}, {"-h"}}) {
    Result r = RunCli(args, /*with_target=*/false);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    for (const char* text : {"table",
                             "rows",
                             "gather",
                             "stats",
                             "health",
                             "--target host:port",
                             "(default: 127.0.0.1:50051)",
                             "--timeout",
                             "(default: 30)",
                             "--base X",
                             "(default: 10000)",
                             "(default: float32)",
                             "(default: interleaved)",
                             "(default: paper)",
                             "--rows-per-batch",
                             "--positions",
                             "--tls-ca",
                             "encode",
                             "--pad-odd-dim",
                             "--include-input",
                             "(default: exponential)"}) {
      EXPECT_THAT(r.out, HasSubstr(text)) << args[0];
    }
  }
  // Without a command it is a usage error, with the same text on stderr.
  Result none = RunCli({}, /*with_target=*/false);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("--rows-per-batch"));
}

TEST_F(CliTest, HealthAndStats_ReportServer) {
  Result health = RunCli({"health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");
  Result stats = RunCli({"stats"});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("budget_bytes: 67108864"));
}

TEST_F(CliTest, NoServer_ExitOneUnavailable) {
  Result r = RunCli({"health", "--target", "127.0.0.1:1", "--timeout", "2"},
                    /*with_target=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
}

// `posenc encode`: rows of real-valued points through the Encode RPC.

TEST_F(CliTest, EncodeWorkedExample_PrintsCsv) {
  // Position 2 of the d = 4 table: the README's worked example, now as a
  // real-valued point (shift 0 is the paper's frequencies).
  Result r = RunCli({"encode", "--dim", "4", "--positions", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0.9092974,-0.41614684,0.019998666,0.9998\n");
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CliTest, EncodeFluxTimestepsToNpy_FileHoldsTheServersRows) {
  // FLUX timestep_embedding(t, 320): cos first, t * 1000.
  const std::string path = Temp("t.npy");
  Result r =
      RunCli({"encode", "--dim", "320", "--layout", "concat_cos_sin", "--scale",
              "1000", "--positions", "0.25,0.999,0", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<NpyArray> npy = ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->descr, "<f4");
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{3, 320}));
  EncodingSpec spec;
  spec.dim = 320;
  spec.layout = Layout::kConcatCosSin;
  spec.scale = 1000;
  absl::StatusOr<Tensor> want = client_->Encode(spec, {0.25, 0.999, 0});
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(npy->data, want->data);
  // Row 0: cos(250) then, at column 160, sin(250); row 2 (t = 0): cos 1,
  // sin +0.
  float v[2];
  std::memcpy(&v[0], npy->data.data(), 4);
  std::memcpy(&v[1], npy->data.data() + 160 * 4, 4);
  EXPECT_EQ(v[0], static_cast<float>(std::cos(250.0)));
  EXPECT_EQ(v[1], static_cast<float>(std::sin(250.0)));
  std::memcpy(&v[0], npy->data.data() + 2 * 320 * 4, 4);
  std::memcpy(&v[1], npy->data.data() + (2 * 320 + 160) * 4, 4);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_FALSE(std::signbit(v[1]));
}

TEST_F(CliTest, EncodeFluxGridToNpy_SameBitsAsTheClientsTuples) {
  // FLUX's rotation matrices of a 3 x 4 latent: [12, 64 * 4] in the file.
  const std::string path = Temp("flux.npy");
  Result r = RunCli({"encode", "--axes-dim", "16,56,56", "--layout",
                     "rotation_matrix", "--grid", "0,0:3,2:4", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<NpyArray> npy = ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{12, 256}));
  const EncodingSpec spec = AxesSpec({16, 56, 56}, Layout::kRotationMatrix);
  std::vector<double> ids;
  for (int h = 0; h < 3; ++h) {
    for (int w = 2; w < 6; ++w) ids.insert(ids.end(), {0, 1.0 * h, 1.0 * w});
  }
  absl::StatusOr<Tensor> want = client_->Encode(spec, ids);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(npy->data, want->data);
  // Qwen2-VL sections from --positions, refused sections exit 1 naming them.
  r = RunCli({"encode", "--dim", "128", "--max-period", "1000000",
              "--mrope-section", "16,24,24", "--layout", "rotate_half",
              "--positions", "0,0,0,3,5,9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"encode", "--dim", "128", "--mrope-section", "16,24,23",
              "--positions", "0,0,0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("spec.mrope_section"));
  r = RunCli({"encode", "--axes-dim", "16,56,56", "--grid", "0,0:3,0:3",
              "--positions", "0,0,0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--grid"));
}

TEST_F(CliTest, EncodeBFloat16ToBin_RawBytesOfTheServersRows) {
  const std::string path = Temp("t.bin");
  Result r =
      RunCli({"encode", "--dim", "16", "--dtype", "bfloat16", "--shift", "1",
              "--max-period", "500", "--positions", "999.5,-3.25", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EncodingSpec spec;
  spec.dim = 16;
  spec.dtype = DType::kBFloat16;
  spec.shift = 1;
  spec.max_period = 500;
  absl::StatusOr<Tensor> want = client_->Encode(spec, {999.5, -3.25});
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(bytes.size(), 2u * 16 * 2);
  EXPECT_EQ(bytes, want->data);
}

TEST_F(CliTest, EncodeOctavesWithInput_ExactQuarterTurns) {
  // nerfstudio NeRFEncoding(in_dim=1, num_frequencies=2, 0, 1,
  // include_input): 2 pi 2^{0,1} x at x = 0.25 are pi/2 and pi, exactly
  // 1, 0 (sin) and 0, -1 (cos), then x itself.
  Result r =
      RunCli({"encode", "--frequency", "octaves", "--num-frequencies", "2",
              "--min-freq-exp", "0", "--max-freq-exp", "1", "--layout",
              "concat_sin_cos", "--include-input", "--positions", "0.25,-0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1,0,0,-1,0.25\n0,0,-1,1,-0.5\n");
}

TEST_F(CliTest, EncodeCoordinatesAndSwitches_WidthFollowsSpec) {
  // Three coordinates a point, 2 frequencies each: 12 sin/cos + 3 inputs.
  const std::string path = Temp("nerf.npy");
  Result r = RunCli({"encode", "--frequency", "octaves", "--num-frequencies",
                     "2", "--max-freq-exp", "3", "--coordinates", "3",
                     "--include-input=true", "--dtype", "float64",
                     "--positions", "0.1,0.2,0.3,-1,2,0.7", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<NpyArray> npy = ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->descr, "<f8");
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{2, 15}));
  double last;
  std::memcpy(&last, npy->data.data() + (2 * 15 - 1) * 8, 8);
  EXPECT_EQ(last, 0.7);
  // An odd dim with its zero column; the switch off again is the server's
  // refusal of the odd dim.
  Result pad =
      RunCli({"encode", "--dim", "5", "--pad-odd-dim", "--positions", "1"});
  ASSERT_EQ(pad.exit_code, 0) << pad.err;
  EXPECT_THAT(pad.out, ::testing::EndsWith(",0\n"));
  EXPECT_EQ(std::count(pad.out.begin(), pad.out.end(), ','), 4);
  Result off = RunCli(
      {"encode", "--dim", "5", "--pad-odd-dim=false", "--positions", "1"});
  EXPECT_EQ(off.exit_code, 1);
  EXPECT_THAT(off.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(off.err, HasSubstr("spec.dim"));
}

TEST_F(CliTest, EncodeServerRefusals_ExitOneNamingTheField) {
  struct Case {
    std::vector<std::string> args;
    const char* code;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{
           {{"--dim", "3", "--positions", "1"}, "INVALID_ARGUMENT", "spec.dim"},
           {{"--dim", "8", "--max-period", "1", "--positions", "1"},
            "INVALID_ARGUMENT",
            "spec.max_period"},
           {{"--dim", "8", "--positions", "1,1e30"},
            "OUT_OF_RANGE",
            "positions[1]"},
           {{"--dim", "8", "--coordinates", "2", "--positions", "1,2,3"},
            "INVALID_ARGUMENT",
            "positions"},
       }) {
    std::vector<std::string> args = {"encode"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Result r = RunCli(args);
    EXPECT_EQ(r.exit_code, 1) << c.field << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.code)) << c.field;
    EXPECT_THAT(r.err, HasSubstr(c.field)) << c.field;
    EXPECT_TRUE(r.out.empty()) << c.field;
  }
}

TEST_F(CliTest, EncodeBadOptions_ExitTwoNamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    const char* names;
  };
  for (const Case& c : std::vector<Case>{
           {{"--dim", "4"}, "--positions"},
           {{"--dim", "4", "--positions", "1,x"}, "--positions"},
           {{"--positions", "1"}, "--dim"},
           {{"--dim", "four", "--positions", "1"}, "--dim"},
           {{"--dim", "4", "--scale", "big", "--positions", "1"}, "--scale"},
           {{"--dim", "4", "--frequency", "linear", "--positions", "1"},
            "--frequency"},
           {{"--frequency", "octaves", "--positions", "1"},
            "--num-frequencies"},
           {{"--frequency", "octaves", "--num-frequencies", "2", "--max-period",
             "100", "--positions", "1"},
            "--max-period"},
           {{"--dim", "4", "--min-freq-exp", "1", "--positions", "1"},
            "--min-freq-exp"},
           {{"--dim", "4", "--layout", "rotate_half", "--positions", "1"},
            "--layout"},
           {{"--dim", "4", "--dtype", "int8", "--positions", "1"}, "--dtype"},
           {{"--dim", "4", "--pad-odd-dim=maybe", "--positions", "1"},
            "--pad-odd-dim"},
           {{"--d", "4", "--positions", "1"}, "--d"},
       }) {
    std::vector<std::string> args = {"encode"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Result r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << c.names << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.names));
    EXPECT_TRUE(r.out.empty()) << c.names;
  }
}

// --hf-config: small config.json files written here, each mirroring a
// public model family's RoPE settings (head sizes shrunk to keep tables
// small). Each table must equal the explicit spec's table from the server.
class HfConfigCliTest : public CliTest {
 protected:
  // Writes `json` to a temp config, runs `posenc table --hf-config` into a
  // .npy and checks the file against GetTable(want).
  void ExpectConfigGives(const std::string& json, const TableSpec& want,
                         std::vector<std::string> extra = {}) {
    const std::string config = Temp("config.json");
    {
      std::ofstream out(config);
      out << json;
    }
    const std::string path = Temp("rope.npy");
    std::vector<std::string> args = {"table", "--hf-config", config, "-o",
                                     path};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    absl::StatusOr<NpyArray> npy = ReadNpy(path);
    ASSERT_TRUE(npy.ok()) << npy.status();
    EXPECT_EQ(npy->shape, (std::vector<uint64_t>{want.max_len, want.width()}));
    absl::StatusOr<Tensor> table = client_->GetTable(want);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ(npy->data, table->data);
  }
};

TEST_F(HfConfigCliTest, Llama3Config_Llama31Scaling) {
  // Llama 3.1 8B: rope_theta 500000, llama3 scaling 8 / 1 / 4 / 8192
  // (hidden 4096 / 32 heads = 128 there; 512 / 16 = 32 here).
  const TableSpec want =
      WithRope(PlainSpec(32, 256, 500000, DType::kFloat32, Layout::kRotateHalf),
               Llama3Scaling(8, 1, 4, 8192));
  ExpectConfigGives(R"({"hidden_size": 512, "num_attention_heads": 16,
      "max_position_embeddings": 256, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
        "rope_type": "llama3"}})",
                    want);
}

TEST_F(HfConfigCliTest, YarnConfig_Qwen25Scaling) {
  // Qwen2.5 with YaRN: rope_theta 1e6, {"type": "yarn", "factor": 4,
  // "original_max_position_embeddings": 32768}; head_dim given.
  const TableSpec want = WithRope(
      PlainSpec(16, 300, 1000000, DType::kBFloat16, Layout::kInterleavedPairs),
      YarnScaling(4, 32768));
  ExpectConfigGives(R"({"head_dim": 16, "hidden_size": 64,
      "num_attention_heads": 2, "max_position_embeddings": 131072,
      "rope_theta": 1000000.0, "rope_scaling": {"type": "yarn",
        "factor": 4.0, "original_max_position_embeddings": 32768}})",
                    want,
                    {"--max-len", "300", "--dtype", "bfloat16", "--layout",
                     "interleaved_pairs"});
}

TEST_F(HfConfigCliTest, DeepSeekV3Config_RotaryHeadSizeAndMscale) {
  // DeepSeek-V3's config.json: no head_dim, hidden 7168 / 128 heads = 56,
  // but only qk_rope_head_dim = 64 channels are rotated; YaRN with M =
  // 4096 and factor = 163840 / 4096 = 40, mscale 1 / mscale_all_dim 1.
  RopeScaling yarn = YarnScaling(40, 4096, 32, 1);
  yarn.mscale = 1;
  yarn.mscale_all_dim = 1;
  const TableSpec want =
      WithRope(PlainSpec(64, 32, kDefaultBase, DType::kBFloat16,
                         Layout::kInterleavedPairs),
               yarn);
  ExpectConfigGives(R"({"hidden_size": 7168, "num_attention_heads": 128,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "max_position_embeddings": 163840, "rope_theta": 10000,
      "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
        "mscale": 1.0, "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096, "type": "yarn"}})",
                    want,
                    {"--max-len", "32", "--dtype", "bfloat16", "--layout",
                     "interleaved_pairs"});
}

TEST_F(HfConfigCliTest, LongRopeConfig_Phi3Scaling) {
  // Phi-3-mini-128k: partial_rotary_factor absent, original 4096,
  // max_position_embeddings 131072, longrope lists (d/2 = 4 values here).
  // seq_len unset (as HF's table at initialisation): short_factor.
  RopeScaling longrope = LongRopeScaling(131072.0 / 4096, 4096);
  longrope.short_factor = {1.0, 1.02, 1.5, 2.0};
  longrope.long_factor = {1.0, 1.25, 3.5, 40.0};
  const TableSpec want = WithRope(
      PlainSpec(8, 64, kDefaultBase, DType::kFloat32, Layout::kConcatCosSin),
      longrope);
  ExpectConfigGives(R"({"hidden_size": 32, "num_attention_heads": 4,
      "max_position_embeddings": 131072,
      "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
      "rope_scaling": {"type": "longrope",
        "short_factor": [1.0, 1.02, 1.5, 2.0],
        "long_factor": [1.0, 1.25, 3.5, 40.0]}})",
                    want, {"--max-len", "64", "--layout", "concat_cos_sin"});
}

TEST_F(HfConfigCliTest, PlainConfig_Llama2PartialRotary) {
  // Llama 2 (no rope_scaling), with a partial_rotary_factor as Phi-2 /
  // GPT-NeoX: head 64 * 0.5 = 32 rotary channels.
  TableSpec want = Spec(32, 128);
  want.layout = Layout::kRotateHalf;
  ExpectConfigGives(R"({"hidden_size": 256, "num_attention_heads": 4,
      "partial_rotary_factor": 0.5, "max_position_embeddings": 128,
      "rope_theta": 10000.0, "rope_scaling": null})",
                    want);
}

TEST_F(HfConfigCliTest, UnknownRopeType_UsageErrorNamingIt) {
  const std::string config = Temp("bad.json");
  {
    std::ofstream out(config);
    out << R"({"head_dim": 8, "max_position_embeddings": 8,
        "rope_scaling": {"rope_type": "mrope"}})";
  }
  Result r = RunCli({"table", "--hf-config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'mrope'"));
}

}  // namespace
}  // namespace posenc::testing
