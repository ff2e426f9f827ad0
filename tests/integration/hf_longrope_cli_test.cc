// `posenc table --hf-config` on Phi-3-mini-128k's config.json in both of
// Hugging Face's layouts (tests/testdata/hf, whose README says where the
// values come from): the real CLI against a real server. HF's LongRoPE
// multiplies cos and sin by sqrt(1 + ln(factor) / ln(M)) with factor =
// 131072 / 4096 = 32: row 0 of the float64 table is that factor (cos 0)
// then zeros (sin 0).
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/npy_reader.h"
#include "tests/common/subprocess.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

// sqrt(17 / 12) = sqrt(1 + ln 32 / ln 4096), correctly rounded.
constexpr double kPhi3AttentionFactor = 1.1902380714238083;

class HfLongRopeCliTest : public ServerTest {
 protected:
  // `posenc table --hf-config CONFIG --dtype float64 -o X.npy` plus
  // `extra`; the .npy read back.
  NpyArray Table(const std::string& config, std::vector<std::string> extra) {
    const std::string path = TestTempPath("phi3.npy");
    std::vector<std::string> args = {
        "table", "--hf-config", config, "--dtype", "float64", "-o", path};
    args = CliArgs(std::move(args));
    args.insert(args.end(), extra.begin(), extra.end());
    const ProgramResult cli = RunProgram(args);
    EXPECT_EQ(cli.exit_code, 0) << cli.err;
    absl::StatusOr<NpyArray> npy = ReadNpy(path);
    EXPECT_TRUE(npy.ok()) << npy.status();
    return npy.ok() ? *npy : NpyArray{};
  }
  static double At(const NpyArray& npy, size_t row, size_t column) {
    double v;
    std::memcpy(&v, npy.data.data() + (row * npy.shape[1] + column) * 8, 8);
    return v;
  }
};

TEST_F(HfLongRopeCliTest, Phi3Mini128kBothLayouts_RowZeroIsHfAttentionFactor) {
  const std::string dir = POSENC_TESTDATA_DIR "/hf/";
  const NpyArray top_level =
      Table(dir + "phi3_mini_128k_top_level.json", {"--max-len", "16"});
  const NpyArray v5 =
      Table(dir + "phi3_mini_128k_rope_parameters.json", {"--max-len", "16"});
  ASSERT_EQ(top_level.shape, (std::vector<uint64_t>{16, 192}));
  for (size_t c = 0; c < 96; ++c) {
    ASSERT_EQ(At(top_level, 0, c), kPhi3AttentionFactor) << c;  // cos 0
    ASSERT_EQ(At(top_level, 0, 96 + c), 0.0) << c;              // sin 0
  }
  EXPECT_EQ(v5.shape, top_level.shape);
  EXPECT_EQ(v5.data, top_level.data);
}

TEST_F(HfLongRopeCliTest, Phi3Mini128kBothLayoutsLongSequence_SameLongTable) {
  // --seq-len over M = 4096: HF's long_factor table, same attention factor.
  const std::string dir = POSENC_TESTDATA_DIR "/hf/";
  const std::vector<std::string> extra = {"--max-len", "16", "--seq-len",
                                          "131072"};
  const NpyArray top_level =
      Table(dir + "phi3_mini_128k_top_level.json", extra);
  const NpyArray v5 = Table(dir + "phi3_mini_128k_rope_parameters.json", extra);
  const NpyArray short_table =
      Table(dir + "phi3_mini_128k_top_level.json", {"--max-len", "16"});
  ASSERT_EQ(top_level.shape, (std::vector<uint64_t>{16, 192}));
  EXPECT_EQ(At(top_level, 0, 0), kPhi3AttentionFactor);
  EXPECT_EQ(v5.data, top_level.data);
  EXPECT_NE(short_table.data, top_level.data);
}

}  // namespace
}  // namespace posenc::testing
