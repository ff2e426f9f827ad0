#include "client/cli_args.h"

#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kAllowed = {"d",      "max-len",  "base",
                                           "dtype",  "layout",   "frequency",
                                           "output", "positions"};

TEST(CliArgsTest, SpacedAndEqualsForms_Parse) {
  const char* argv[] = {"posenc",         "table", "--d",    "512",
                        "--max-len=1024", "-o",    "pe.npy", "--dtype=float16"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(8, argv, kAllowed);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->command(), "table");
  EXPECT_EQ(args->GetString("output", ""), "pe.npy");
  absl::StatusOr<TableSpec> spec = args->GetSpec();
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->d, 512u);
  EXPECT_EQ(spec->max_len, 1024u);
  EXPECT_EQ(spec->dtype, DType::kFloat16);
  EXPECT_EQ(spec->base, 10000.0);
}

TEST(CliArgsTest, UnknownOption_InvalidArgumentListingAccepted) {
  const char* argv[] = {"posenc", "table", "--colour", "red"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(4, argv, kAllowed);
  EXPECT_EQ(args.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(args.status().message(), HasSubstr("--colour"));
  EXPECT_THAT(args.status().message(), HasSubstr("--max-len"));
}

TEST(CliArgsTest, MissingValue_InvalidArgument) {
  const char* argv[] = {"posenc", "table", "--d"};
  EXPECT_EQ(CliArgs::Parse(3, argv, kAllowed).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CliArgsTest, PositionsList_ParsedInOrderWithRepeats) {
  const char* argv[] = {"posenc", "gather", "--positions", "9,0,9"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(4, argv, kAllowed);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args->GetUint32List("positions"),
            (std::vector<uint32_t>{9, 0, 9}));
}

TEST(CliArgsTest, BadNumbersAndNames_InvalidArgumentNamingOption) {
  const char* argv[] = {"posenc", "table", "--d", "x", "--max-len", "4"};
  absl::StatusOr<CliArgs> args = CliArgs::Parse(6, argv, kAllowed);
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetSpec().status().message(), HasSubstr("--d"));

  const char* argv2[] = {"posenc",    "table", "--d",      "4",
                         "--max-len", "4",     "--layout", "diagonal"};
  args = CliArgs::Parse(8, argv2, kAllowed);
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetSpec().status().message(), HasSubstr("--layout"));
}

// `posenc encode`'s options: switches, a list of doubles, the EncodingSpec.
const std::vector<std::string> kEncode = {"dim",          "positions",
                                          "dtype",        "layout",
                                          "frequency",    "scale",
                                          "max-period",   "shift",
                                          "coordinates",  "num-frequencies",
                                          "min-freq-exp", "max-freq-exp",
                                          "pad-odd-dim",  "include-input",
                                          "axes-dim",     "mrope-section",
                                          "grid",         "mrope-interleaved"};
const std::vector<std::string> kSwitches = {"pad-odd-dim", "include-input",
                                            "mrope-interleaved"};

absl::StatusOr<CliArgs> ParseEncode(std::vector<const char*> argv) {
  argv.insert(argv.begin(), {"posenc", "encode"});
  return CliArgs::Parse(static_cast<int>(argv.size()), argv.data(), kEncode,
                        kSwitches);
}

TEST(CliArgsTest, Switches_TakeNoValueUnlessGivenWithEquals) {
  absl::StatusOr<CliArgs> args =
      ParseEncode({"--pad-odd-dim", "--dim", "5", "--include-input=false"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE(*args->GetBool("pad-odd-dim"));
  EXPECT_FALSE(*args->GetBool("include-input"));
  EXPECT_EQ(*args->GetUint32("dim", 0), 5u);  // not swallowed by the switch
  EXPECT_FALSE(*args->GetBool("shift"));      // absent: false
  args = ParseEncode({"--include-input=yes"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetBool("include-input").status().message(),
              HasSubstr("--include-input"));
  // A non-switch still needs its value.
  EXPECT_THAT(ParseEncode({"--dim"}).status().message(),
              HasSubstr("--dim needs a value"));
}

TEST(CliArgsTest, DoubleList_AnyDoubleInOrder) {
  absl::StatusOr<CliArgs> args =
      ParseEncode({"--positions", "999.5,-0.25,1e-3,0"});
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args->GetDoubleList("positions"),
            (std::vector<double>{999.5, -0.25, 1e-3, 0}));
  args = ParseEncode({"--positions", "1,two"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetDoubleList("positions").status().message(),
              HasSubstr("'two'"));
  args = ParseEncode({});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetDoubleList("positions").status().message(),
              HasSubstr("--positions is required"));
}

TEST(CliArgsTest, EncodingSpec_ExponentialAndOctaves) {
  absl::StatusOr<CliArgs> args = ParseEncode(
      {"--dim", "321", "--pad-odd-dim", "--layout", "concat_cos_sin", "--scale",
       "1000", "--max-period", "500", "--shift", "1", "--dtype", "bfloat16"});
  ASSERT_TRUE(args.ok());
  absl::StatusOr<EncodingSpec> spec = args->GetEncodingSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->scheme, FrequencyScheme::kExponential);
  EXPECT_EQ(spec->dim, 321u);
  EXPECT_TRUE(spec->pad_odd_dim);
  EXPECT_EQ(spec->layout, Layout::kConcatCosSin);
  EXPECT_EQ(spec->scale, 1000.0);
  EXPECT_EQ(spec->max_period, 500.0);
  EXPECT_EQ(spec->shift, 1.0);
  EXPECT_EQ(spec->dtype, DType::kBFloat16);
  EXPECT_EQ(spec->coordinates, 1u);
  EXPECT_FALSE(spec->include_input);

  args = ParseEncode({"--frequency", "octaves", "--num-frequencies", "10",
                      "--min-freq-exp", "-1", "--max-freq-exp", "8.5",
                      "--coordinates", "3", "--include-input"});
  ASSERT_TRUE(args.ok());
  spec = args->GetEncodingSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->scheme, FrequencyScheme::kOctaves);
  EXPECT_EQ(spec->dim, 0u);
  EXPECT_EQ(spec->num_frequencies, 10u);
  EXPECT_EQ(spec->min_freq_exp, -1.0);
  EXPECT_EQ(spec->max_freq_exp, 8.5);
  EXPECT_EQ(spec->coordinates, 3u);
  EXPECT_TRUE(spec->include_input);
  EXPECT_EQ(spec->layout, Layout::kInterleaved);
}

TEST(CliArgsTest, EncodingSpec_RefusalsNameTheOption) {
  for (const auto& [argv, name] :
       std::vector<std::pair<std::vector<const char*>, const char*>>{
           {{"--scale", "1"}, "--dim"},
           {{"--frequency", "octaves"}, "--num-frequencies"},
           {{"--frequency", "cosine", "--dim", "4"}, "--frequency"},
           {{"--frequency", "octaves", "--num-frequencies", "2", "--shift",
             "1"},
            "--shift"},
           {{"--frequency", "octaves", "--num-frequencies", "2",
             "--pad-odd-dim"},
            "--pad-odd-dim"},
           {{"--dim", "4", "--max-freq-exp", "3"}, "--max-freq-exp"},
           {{"--dim", "4", "--layout", "interleaved_pairs"}, "--layout"},
           {{"--dim", "4", "--coordinates", "-1"}, "--coordinates"},
           {{"--dim", "4", "--max-period", "ten"}, "--max-period"},
       }) {
    absl::StatusOr<CliArgs> args = ParseEncode(argv);
    ASSERT_TRUE(args.ok()) << name;
    absl::StatusOr<EncodingSpec> spec = args->GetEncodingSpec();
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(spec.status().message(), HasSubstr(name));
  }
}

const std::vector<std::string> kGridAllowed = {
    "d",          "max-len",       "base",
    "dtype",      "layout",        "frequency",
    "grid",       "grid-channels", "grid-positions",
    "grid-first", "grid-order",    "grid-sin-cos",
    "grid-extra"};

absl::StatusOr<TableSpec> GridSpecOf(std::vector<const char*> argv) {
  argv.insert(argv.begin(), {"posenc", "table"});
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(static_cast<int>(argv.size()), argv.data(), kGridAllowed);
  if (!args.ok()) return args.status();
  return args->GetSpec();
}

TEST(CliArgsTest, GridMae_DAndMaxLenFromTheGrid) {
  absl::StatusOr<TableSpec> spec =
      GridSpecOf({"--grid", "14x14", "--d", "768", "--grid-order", "1,0",
                  "--grid-extra", "1"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_NE(spec->grid, nullptr);
  EXPECT_EQ(spec->d, 768u);
  EXPECT_EQ(spec->max_len, 197u);
  EXPECT_EQ(spec->layout, Layout::kConcatSinCos);
  EXPECT_EQ(spec->grid->axes.size(), 2u);
  EXPECT_EQ(spec->grid->axes[0].channels, 384u);
  EXPECT_EQ(spec->grid->channel_order, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(spec->grid->extra_zero_rows, 1u);
  EXPECT_TRUE(ValidateSpec(*spec, {}).ok()) << ValidateSpec(*spec, {});
}

TEST(CliArgsTest, GridCogVideoX_PerAxisListsAndOneForAll) {
  absl::StatusOr<TableSpec> spec =
      GridSpecOf({"--grid", "13x30x45", "--grid-channels", "480,720,720",
                  "--grid-positions", "1/1,8/15,8/15", "--grid-order", "0,2,1",
                  "--grid-first", "0"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->d, 1920u);
  EXPECT_EQ(spec->max_len, 13u * 30 * 45);
  EXPECT_EQ(spec->grid->axes[1].numerator, 8u);
  EXPECT_EQ(spec->grid->axes[2].denominator, 15u);
  EXPECT_EQ(spec->grid->axes[2].first_index, 0u);
  EXPECT_TRUE(ValidateSpec(*spec, {}).ok()) << ValidateSpec(*spec, {});
}

TEST(CliArgsTest, GridBadOptions_InvalidArgumentNamingOption) {
  EXPECT_THAT(GridSpecOf({"--grid", "14by14", "--d", "8"}).status().message(),
              HasSubstr("--grid"));
  EXPECT_THAT(GridSpecOf({"--grid", "3x3", "--d", "9"}).status().message(),
              HasSubstr("--grid-channels"));
  EXPECT_THAT(GridSpecOf({"--grid", "3x3", "--d", "8", "--grid-positions",
                          "1/2,1/3,1/4"})
                  .status()
                  .message(),
              HasSubstr("--grid-positions"));
  EXPECT_THAT(
      GridSpecOf({"--grid", "3x3", "--d", "8", "--grid-sin-cos", "both"})
          .status()
          .message(),
      HasSubstr("--grid-sin-cos"));
  EXPECT_THAT(GridSpecOf({"--grid", "3x3", "--d", "8", "--frequency", "t2t"})
                  .status()
                  .message(),
              HasSubstr("--frequency"));
  EXPECT_THAT(GridSpecOf({"--d", "8", "--max-len", "4", "--grid-extra", "1"})
                  .status()
                  .message(),
              HasSubstr("--grid-extra needs --grid"));
}

TEST(CliArgsTest, EncodingSpec_MultiAxisCoordinatesFromTheAxes) {
  absl::StatusOr<CliArgs> args =
      ParseEncode({"--axes-dim", "16,56,56", "--layout", "rotation_matrix"});
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<EncodingSpec> spec = args->GetEncodingSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();  // no --dim needed
  EXPECT_EQ(spec->axes_dim, (std::vector<uint32_t>{16, 56, 56}));
  EXPECT_EQ(spec->coordinates, 3u);
  EXPECT_EQ(spec->layout, Layout::kRotationMatrix);
  args = ParseEncode({"--dim", "128", "--mrope-section", "24,20,20",
                      "--mrope-interleaved", "--layout", "rotate_half"});
  ASSERT_TRUE(args.ok()) << args.status();
  spec = args->GetEncodingSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->mrope_section, (std::vector<uint32_t>{24, 20, 20}));
  EXPECT_TRUE(spec->mrope_interleaved);
  EXPECT_EQ(spec->coordinates, 3u);
  EXPECT_EQ(spec->layout, Layout::kRotateHalf);
  // A RoPE layout without the axes is a usage error naming --layout.
  args = ParseEncode({"--dim", "8", "--layout", "rotation_matrix"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetEncodingSpec().status().message(),
              HasSubstr("--layout"));
  args = ParseEncode({"--axes-dim", "16,x"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetEncodingSpec().status().message(),
              HasSubstr("--axes-dim"));
}

TEST(CliArgsTest, Grid_StartCountPerCoordinate) {
  absl::StatusOr<CliArgs> args = ParseEncode({"--grid", "0,-3:64,5:0"});
  ASSERT_TRUE(args.ok()) << args.status();
  absl::StatusOr<PositionGrid> grid = args->GetGrid("grid");
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->start, (std::vector<int32_t>{0, -3, 5}));
  EXPECT_EQ(grid->count, (std::vector<uint32_t>{1, 64, 1}));
  for (const char* bad : {"0:1:2", "a", "1:-2", "1:x", ""}) {
    args = ParseEncode({"--grid", bad});
    if (!args.ok()) continue;  // "" has no value: the parser's refusal
    absl::StatusOr<PositionGrid> g = args->GetGrid("grid");
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(g.status().message(), HasSubstr("--grid")) << bad;
  }
}

}  // namespace
}  // namespace posenc
