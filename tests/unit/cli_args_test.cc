#include "client/cli_args.h"

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

}  // namespace
}  // namespace posenc
