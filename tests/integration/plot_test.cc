// `posenc plot` and the CLI's progress line, end to end: the real binary
// against a real server on 127.0.0.1; PNGs read back with libpng.
#include <fcntl.h>
#include <png.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "client/download_progress.h"
#include "client/png_plot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/subprocess.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

// A PNG as libpng reads it back: the IHDR's size and 8-bit RGB pixels.
struct Image {
  uint32_t width = 0, height = 0;
  uint8_t bit_depth = 0, color_type = 0;  // straight from the IHDR bytes
  std::vector<uint8_t> rgb;

  Rgb At(uint32_t x, uint32_t y) const {
    const size_t k = (size_t{y} * width + x) * 3;
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
};

absl::StatusOr<Image> ReadPng(const std::string& path) {
  Image image;
  // The IHDR chunk, byte by byte: 8-byte signature, length, "IHDR",
  // width and height big-endian, bit depth, colour type.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 26 || bytes.compare(12, 4, "IHDR") != 0) {
    return absl::DataLossError("no IHDR at the start of " + path);
  }
  auto be32 = [&](size_t at) {
    return uint32_t{static_cast<uint8_t>(bytes[at])} << 24 |
           uint32_t{static_cast<uint8_t>(bytes[at + 1])} << 16 |
           uint32_t{static_cast<uint8_t>(bytes[at + 2])} << 8 |
           uint32_t{static_cast<uint8_t>(bytes[at + 3])};
  };
  const uint32_t ihdr_width = be32(16), ihdr_height = be32(20);
  image.bit_depth = static_cast<uint8_t>(bytes[24]);
  image.color_type = static_cast<uint8_t>(bytes[25]);

  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    return absl::DataLossError(std::string("libpng: ") + png.message);
  }
  image.width = png.width;
  image.height = png.height;
  if (image.width != ihdr_width || image.height != ihdr_height) {
    png_image_free(&png);
    return absl::DataLossError("libpng and the IHDR bytes disagree");
  }
  png.format = PNG_FORMAT_RGB;
  image.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.rgb.data(), 0, nullptr)) {
    return absl::DataLossError(std::string("libpng: ") + png.message);
  }
  return image;
}

class PlotTest : public ServerTest {
 protected:
  using Result = ProgramResult;

  // Runs the CLI with stderr on a pseudo-terminal and stdout to /dev/null;
  // returns what the terminal received.
  Result RunCliOnTerminal(std::vector<std::string> args) {
    args = CliArgs(std::move(args));
    int master = -1, slave = -1;
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
      ADD_FAILURE() << "openpty: " << std::strerror(errno);
      return {-1, "", ""};
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      setsid();
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(slave, 2);
      close(master);
      close(slave);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(slave);
    std::string tty;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      pollfd p = {master, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: every copy of the terminal's side closed
      tty.append(buf, n);
    }
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", tty};
  }

  static std::string Temp(const std::string& name) {
    return TestTempPath(name);
  }

  // Every pixel of `image` is the colour of its value in `table` (rows x
  // width values), drawn scale x scale.
  static void ExpectPixelsMatch(const Image& image, const Tensor& table,
                                uint32_t width, uint32_t scale) {
    const uint32_t rows = static_cast<uint32_t>(table.size() / width);
    ASSERT_EQ(image.width, width * scale);
    ASSERT_EQ(image.height, rows * scale);
    for (uint32_t y = 0; y < image.height; ++y) {
      for (uint32_t x = 0; x < image.width; ++x) {
        const double v = table.ValueAt(size_t{y / scale} * width + x / scale);
        ASSERT_EQ(image.At(x, y), DivergingColor(v))
            << "pixel (" << x << ", " << y << ") value " << v;
      }
    }
  }
};

TEST(DivergingColorTest, Stops_BlueWhiteRedAndClamped) {
  EXPECT_EQ(DivergingColor(-1), (Rgb{0, 0, 255}));
  EXPECT_EQ(DivergingColor(0), (Rgb{255, 255, 255}));
  EXPECT_EQ(DivergingColor(-0.0), (Rgb{255, 255, 255}));
  EXPECT_EQ(DivergingColor(1), (Rgb{255, 0, 0}));
  EXPECT_EQ(DivergingColor(0.5), (Rgb{255, 128, 128}));  // 127.5 rounds up
  EXPECT_EQ(DivergingColor(-0.5), (Rgb{128, 128, 255}));
  EXPECT_EQ(DivergingColor(1.19), (Rgb{255, 0, 0}));  // a RoPE factor
  EXPECT_EQ(DivergingColor(-2), (Rgb{0, 0, 255}));
  EXPECT_EQ(DivergingColor(std::nan("")), (Rgb{0, 0, 0}));
}

TEST_F(PlotTest, WorkedExample_SizeFromIhdrAndColoursOfTheValues) {
  const std::string path = Temp("pe.png");
  Result r = RunCli({"plot", "--d", "4", "--max-len", "8", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  absl::StatusOr<Image> image = ReadPng(path);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 4u);   // channels
  EXPECT_EQ(image->height, 8u);  // positions
  EXPECT_EQ(image->bit_depth, 8);
  EXPECT_EQ(image->color_type, PNG_COLOR_TYPE_RGB);
  // Position 0: sin 0 = exactly 0 is the middle colour, cos 0 = 1 red.
  EXPECT_EQ(image->At(0, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(image->At(1, 0), (Rgb{255, 0, 0}));
  EXPECT_EQ(image->At(2, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(image->At(3, 0), (Rgb{255, 0, 0}));
  // Position 2 (float32): 0.9092974 -> 255 * (1 - v) = 23.13 -> 23;
  // -0.41614684 -> 148.88 -> 149 (blue side); 0.019998666 -> 249.90 ->
  // 250; 0.9998 -> 0.05 -> 0.
  EXPECT_EQ(image->At(0, 2), (Rgb{255, 23, 23}));
  EXPECT_EQ(image->At(1, 2), (Rgb{149, 149, 255}));
  EXPECT_EQ(image->At(2, 2), (Rgb{255, 250, 250}));
  EXPECT_EQ(image->At(3, 2), (Rgb{255, 0, 0}));
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(4, 8));
  ASSERT_TRUE(table.ok()) << table.status();
  ExpectPixelsMatch(*image, *table, 4, 1);
}

TEST_F(PlotTest, Scale_EachValueIsASquare) {
  const std::string path = Temp("scaled.png");
  Result r = RunCli(
      {"plot", "--d", "4", "--max-len", "8", "--scale", "3", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Image> image = ReadPng(path);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 12u);
  EXPECT_EQ(image->height, 24u);
  EXPECT_EQ(image->At(5, 8), (Rgb{149, 149, 255}));  // value (2, 1)
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(4, 8));
  ASSERT_TRUE(table.ok()) << table.status();
  ExpectPixelsMatch(*image, *table, 4, 3);
}

TEST_F(PlotTest, EveryTableSpecOption_DrawsThatTable) {
  // base, dtype, layout and frequency, as `posenc table` takes them.
  const std::string path = Temp("t2t.png");
  Result r = RunCli({"plot", "--d", "16", "--max-len", "300", "--base", "500",
                     "--dtype", "float16", "--layout", "concat_sin_cos",
                     "--frequency", "t2t", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Image> image = ReadPng(path);
  ASSERT_TRUE(image.ok()) << image.status();
  TableSpec spec = Spec(16, 300);
  spec.base = 500;
  spec.dtype = DType::kFloat16;
  spec.layout = Layout::kConcatSinCos;
  spec.frequency = Frequency::kT2T;
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  ExpectPixelsMatch(*image, *table, 16, 1);
}

TEST_F(PlotTest, HfConfigRope_RotateHalfRowsTimesAttentionFactor) {
  // Phi-3-mini-128k (tests/testdata/hf): head_dim 96, rotate_half rows of
  // 192 values; with the attention factor 1.19 every cos at position 0 is
  // over 1, so red.
  const std::string path = Temp("phi3.png");
  Result r = RunCli({"plot", "--hf-config",
                     POSENC_TESTDATA_DIR "/hf/phi3_mini_128k_top_level.json",
                     "--max-len", "64", "--dtype", "bfloat16", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Image> image = ReadPng(path);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 192u);
  EXPECT_EQ(image->height, 64u);
  EXPECT_EQ(image->At(0, 0), (Rgb{255, 0, 0}));
  EXPECT_EQ(image->At(96, 0), (Rgb{255, 255, 255}));  // sin 0
}

TEST_F(PlotTest, NoOutput_UsageErrorExitTwo) {
  Result r = RunCli({"plot", "--d", "4", "--max-len", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plot needs -o FILE.png"));
}

TEST_F(PlotTest, ScaleOutOfRange_UsageErrorExitTwoNamingScale) {
  for (const char* scale : {"0", "65"}) {
    const std::string path = Temp("bad-scale.png");
    Result r = RunCli(
        {"plot", "--d", "4", "--max-len", "8", "--scale", scale, "-o", path});
    EXPECT_EQ(r.exit_code, 2) << scale;
    EXPECT_THAT(r.err, HasSubstr("--scale must be 1 to 64")) << scale;
    EXPECT_FALSE(std::filesystem::exists(path)) << scale;
  }
}

TEST_F(PlotTest, InvalidSpec_ExitOneAndNoFileLeft) {
  const std::string path = Temp("odd.png");
  Result r = RunCli({"plot", "--d", "3", "--max-len", "8", "-o", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: spec.d must be even"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(PlotTest, StderrNotATerminal_NoProgressText) {
  // Captured to a file, as in a pipe or CI: stderr stays empty.
  Result plot = RunCli(
      {"plot", "--d", "64", "--max-len", "5000", "-o", Temp("quiet.png")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_EQ(plot.err, "");
  Result rows = RunCli({"rows", "--d", "64", "--max-len", "5000",
                        "--rows-per-batch", "100", "-o", Temp("quiet.npy")});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(rows.err, "");
}

TEST_F(PlotTest, StderrATerminal_ProgressReachesAllRows) {
  // d 64 float32: 256 bytes a row; 5000 rows = 1.2 MiB.
  Result plot = RunCliOnTerminal(
      {"plot", "--d", "64", "--max-len", "5000", "-o", Temp("tty.png")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_THAT(plot.err, HasSubstr("posenc: 5000/5000 rows, 1.2/1.2 MiB "
                                  "(100%)"));
  EXPECT_THAT(plot.err, HasSubstr("\r"));  // redrawn in place
  Result rows = RunCliOnTerminal({"rows", "--d", "64", "--max-len", "5000",
                                  "--start", "1000", "--rows-per-batch", "100",
                                  "-o", Temp("tty.npy")});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_THAT(rows.err, HasSubstr("posenc: 4000/4000 rows, 1.0/1.0 MiB "
                                  "(100%)"));
}

TEST(DownloadProgressLineTest, Line_RowsMiBAndPercentRoundedDown) {
  EXPECT_EQ(DownloadProgress::Line(412160, 1048576, 2048),
            "posenc: 412160/1048576 rows, 805.0/2048.0 MiB (39%)");
  EXPECT_EQ(DownloadProgress::Line(0, 0, 8),
            "posenc: 0/0 rows, 0.0/0.0 MiB (100%)");
}

}  // namespace
}  // namespace posenc::testing
