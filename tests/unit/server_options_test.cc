// The server's pure parts: the options table (defaults, ranges, help), the
// log line formats, and the server flag named in core's limit errors.
#include "server/server_options.h"

#include <regex>
#include <string>

#include "absl/status/status.h"
#include "core/runtime/limit_error.h"
#include "core/spec/table_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/limit_flags.h"
#include "server/log.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

TEST(ServerOptionsTest, Defaults_Valid) {
  EXPECT_EQ(ValidateServerOptions(ServerOptions()).code(),
            absl::StatusCode::kOk);
}

TEST(ServerOptionsTest, OutOfRange_InvalidArgumentNamingFlagRangeAndValue) {
  ServerOptions options;
  options.max_d = 1;
  absl::Status s = ValidateServerOptions(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--max_d must be 2..65536, got 1: exactness"));

  options = ServerOptions();
  options.cache_bytes = 5;
  s = ValidateServerOptions(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--cache_bytes must be at least 1048576, got 5");

  options = ServerOptions();
  options.grace_seconds = -1;
  s = ValidateServerOptions(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--grace_seconds must be at least 0 seconds, got -1");
}

TEST(ServerOptionsTest, UnknownLogFormat_InvalidArgumentListingChoices) {
  ServerOptions options;
  options.log_format = "xml";
  absl::Status s = ValidateServerOptions(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--log_format must be one of text|json, got 'xml'");
  options.log_format = "json";
  EXPECT_EQ(ValidateServerOptions(options).code(), absl::StatusCode::kOk);
}

TEST(ServerOptionsTest, MetricsListenMalformed_InvalidArgumentEmptyAllowed) {
  ServerOptions options;
  options.metrics_listen = "9090";
  EXPECT_EQ(ValidateServerOptions(options).code(),
            absl::StatusCode::kInvalidArgument);
  options.metrics_listen = "";
  EXPECT_EQ(ValidateServerOptions(options).code(), absl::StatusCode::kOk);
  options.metrics_listen = "0.0.0.0:9090";
  EXPECT_EQ(ValidateServerOptions(options).code(), absl::StatusCode::kOk);
}

TEST(ServerOptionsTest, OptionHelp_AppendsTheRange) {
  EXPECT_EQ(OptionHelp("largest d", Between(2, 65536)), "largest d (2..65536)");
  EXPECT_EQ(OptionHelp("idle", ZeroOrSeconds(0.001, 5)),
            "idle (0 (off) or 0.001..5 seconds)");
  EXPECT_EQ(OptionHelp("format", OneOf("text|json")), "format (text|json)");
  EXPECT_EQ(OptionHelp("file", AnyValue()), "file");
}

TEST(LogTest, TextFormat_TimeLevelEvent) {
  SetLogFormat(LogFormat::kText);
  const std::string line = FormatLogLine("INFO", "started pid=7");
  EXPECT_TRUE(std::regex_match(
      line, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO )"
                       R"(started pid=7\n)")))
      << line;
}

TEST(LogTest, JsonFormat_OneObjectWithTimeLevelEventFields) {
  SetLogFormat(LogFormat::kJson);
  const std::string line = FormatLogLine(
      "WARN",
      "GetTable -> INVALID_ARGUMENT: \"d\"\nbad x-posenc-table=k1 "
      "count=3, count=4");
  SetLogFormat(LogFormat::kText);
  EXPECT_TRUE(std::regex_match(
      line,
      std::regex(R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",)"
                 R"("level":"WARN",)"
                 R"("event":"GetTable -> INVALID_ARGUMENT: \\"d\\"\\nbad )"
                 R"(x-posenc-table=k1 count=3, count=4",)"
                 R"("fields":\{"x-posenc-table":"k1","count":"3"\}\}\n)")))
      << line;
}

TEST(LogTest, JsonFormat_ControlCharactersEscaped) {
  SetLogFormat(LogFormat::kJson);
  const std::string line = FormatLogLine("INFO", std::string("a\x01\tb\\"));
  SetLogFormat(LogFormat::kText);
  EXPECT_THAT(line, HasSubstr(R"("event":"a\u0001\u0009b\\")"));
}

TEST(NameServerFlagTest, CoreLimitErrors_NameTheServerFlag) {
  const std::pair<Limit, const char*> cases[] = {
      {Limit::kD, "--max_d"},
      {Limit::kMaxLen, "--max_len_limit"},
      {Limit::kRowsPerRequest, "--max_rows_per_request"},
      {Limit::kMessageBytes, "--max_message_bytes"},
      {Limit::kQueuedComputeBytes, "--max_queued_compute_bytes"},
  };
  for (const auto& [limit, flag] : cases) {
    absl::Status s =
        NameServerFlag(LimitError(absl::StatusCode::kResourceExhausted, limit,
                                  "x is 9, over the limit 8"));
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << flag;
    EXPECT_EQ(
        s.message(),
        std::string("x is 9, over the limit 8 (posenc_server ") + flag + ")");
    EXPECT_EQ(LimitOf(s), limit) << "the payload is kept";
  }
}

TEST(NameServerFlagTest, UntaggedErrors_Unchanged) {
  // A limit of the spec itself (not a server flag), said the same way.
  absl::Status s = NameServerFlag(
      absl::OutOfRangeError("spec.rope.factor is 30000, over the limit 1024"));
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "spec.rope.factor is 30000, over the limit 1024");
  EXPECT_EQ(NameServerFlag(absl::OkStatus()).code(), absl::StatusCode::kOk);
}

TEST(NameServerFlagTest, CoreSaysItsOwnTerms_ServerAddsTheFlag) {
  TableSpec spec;
  spec.d = 70000;
  spec.max_len = 1;
  SpecLimits limits;
  limits.max_d = 65536;
  absl::Status core = ValidateSpec(spec, limits);
  EXPECT_EQ(core.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core.message(), "spec.d is 70000, over the limit 65536");
  EXPECT_EQ(LimitOf(core), Limit::kD);
  EXPECT_EQ(NameServerFlag(core).message(),
            "spec.d is 70000, over the limit 65536 (posenc_server --max_d)");
}

}  // namespace
}  // namespace posenc
