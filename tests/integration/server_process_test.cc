// The posenc_server binary as operators run it: flags, start-up errors, and
// SIGTERM/SIGINT draining in-flight streams before a clean exit.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <regex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/posenc_client.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/common/subprocess.h"
#include "tests/common/table_specs.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Temp(const std::string& name) { return TestTempPath(name); }

// A posenc_server process on a free loopback port.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> flags) {
    std::vector<std::string> argv = {POSENC_SERVER_PATH,
                                     "--listen=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Subprocess>(argv, Temp("server.out"),
                                            Temp("server.err"));
    // The start-up log line names the bound port: "... (port 12345) ...".
    const std::regex port_re(R"(\(port (\d+)\))");
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      std::smatch m;
      std::string err = process_->Stderr();
      if (std::regex_search(err, m, port_re)) {
        port_ = std::stoi(m[1]);
      } else if (process_->Wait(absl::Milliseconds(10)).has_value()) {
        break;
      }
    }
  }
  int port() const { return port_; }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  Subprocess& process() { return *process_; }

 private:
  std::unique_ptr<Subprocess> process_;
  int port_ = 0;
};

PosencClient::Options ClientTo(const std::string& target) {
  PosencClient::Options options;
  options.target = target;
  options.timeout = absl::Seconds(30);
  return options;
}

TableSpec Spec(uint32_t d, uint32_t max_len) {
  return ::posenc::testing::PlainSpec(d, max_len);
}

TEST(ServerProcessTest, SigtermWithSlowStream_NotServingDrainsExitsZero) {
  ServerProcess server(
      {"--lame_duck_seconds=0", "--grace_seconds=2", "--cache_bytes=1048576"});
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));

  // Watch health from before the signal to after it.
  absl::Mutex mu;
  std::vector<grpc::health::v1::HealthCheckResponse::ServingStatus> statuses;
  grpc::ClientContext watch_context;
  auto health = grpc::health::v1::Health::NewStub(client.channel());
  std::thread watcher([&] {
    grpc::health::v1::HealthCheckRequest request;
    auto reader = health->Watch(&watch_context, request);
    grpc::health::v1::HealthCheckResponse response;
    while (reader->Read(&response)) {
      absl::MutexLock lock(&mu);
      statuses.push_back(response.status());
    }
    reader->Finish();
  });

  // A slow reader of a stream far longer than the grace period; once the
  // signal is sent it drains what the client buffered at full speed.
  std::atomic<int> rows{0};
  std::atomic<bool> signalled{false};
  absl::Status stream_status;
  std::thread reader([&] {
    stream_status = client.StreamRows(
        Spec(1024, 1000000), 0, std::nullopt, [&](uint32_t, const Tensor&) {
          ++rows;
          if (!signalled) absl::SleepFor(absl::Milliseconds(20));
          return absl::OkStatus();
        });
  });
  for (int i = 0; i < 500 && rows < 5; ++i)
    absl::SleepFor(absl::Milliseconds(10));
  ASSERT_GE(rows.load(), 5);

  const absl::Time signal_time = absl::Now();
  server.process().Signal(SIGTERM);
  std::optional<int> exit_code = server.process().Wait(absl::Seconds(15));
  const absl::Duration took = absl::Now() - signal_time;
  signalled = true;
  reader.join();
  watch_context.TryCancel();
  watcher.join();

  ASSERT_TRUE(exit_code.has_value()) << "server did not exit";
  EXPECT_EQ(*exit_code, 0);
  EXPECT_GE(took, absl::Milliseconds(1500)) << "did not wait for the grace";
  EXPECT_LT(took, absl::Seconds(10));
  EXPECT_FALSE(stream_status.ok()) << "a 1M-row slow stream cannot finish";
  {
    absl::MutexLock lock(&mu);
    ASSERT_GE(statuses.size(), 2u);
    EXPECT_EQ(statuses.front(), grpc::health::v1::HealthCheckResponse::SERVING);
    EXPECT_EQ(statuses.back(),
              grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  }
  const std::string log = server.process().Stderr();
  EXPECT_THAT(log, HasSubstr("received SIGTERM: draining for up to 2s"));
  EXPECT_THAT(log, HasSubstr("posenc_server stopped after"));
  // Nothing answers any more.
  PosencClient::Options quick = ClientTo(server.target());
  quick.timeout = absl::Seconds(2);
  EXPECT_EQ(PosencClient(quick).GetTable(Spec(4, 4)).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ServerProcessTest, SigintWithShortStream_StreamCompletesThenExitZero) {
  ServerProcess server({"--lame_duck_seconds=0", "--grace_seconds=10"});
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  std::atomic<int> rows{0};
  absl::Status stream_status;
  std::thread reader([&] {
    stream_status = client.StreamRows(Spec(64, 40), 0, std::nullopt,
                                      [&](uint32_t, const Tensor&) {
                                        ++rows;
                                        absl::SleepFor(absl::Milliseconds(25));
                                        return absl::OkStatus();
                                      });
  });
  for (int i = 0; i < 500 && rows < 1; ++i)
    absl::SleepFor(absl::Milliseconds(10));
  server.process().Signal(SIGINT);
  std::optional<int> exit_code = server.process().Wait(absl::Seconds(15));
  reader.join();
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 0);
  EXPECT_TRUE(stream_status.ok()) << stream_status;
  EXPECT_EQ(rows.load(), 40);
  EXPECT_THAT(server.process().Stderr(), HasSubstr("received SIGINT"));
}

TEST(ServerProcessTest, SigtermWithIdleConnection_ExitsWithoutWaitingGrace) {
  ServerProcess server({"--lame_duck_seconds=0", "--grace_seconds=20"});
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  // A client whose connection stays open, idle, after its call.
  PosencClient client(ClientTo(server.target()));
  ASSERT_TRUE(client.GetTable(Spec(4, 4)).ok());
  const absl::Time signalled = absl::Now();
  server.process().Signal(SIGTERM);
  std::optional<int> exit_code = server.process().Wait(absl::Seconds(25));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 0);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(2))
      << "an idle connection held the drain";
}

TEST(ServerProcessTest, LargestMessageLimit_ServesAndStopsCleanly) {
  // 2^31 is --max_message_bytes' upper bound; gRPC's send limit is an int.
  ServerProcess server(
      {"--lame_duck_seconds=0", "--max_message_bytes=2147483648"});
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  absl::StatusOr<Tensor> table = client.GetTable(Spec(512, 4096));  // 8 MiB
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->data.size(), 512u * 4096 * 4);
  const absl::Time signalled = absl::Now();
  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(absl::Seconds(15)), 0);
  // Nothing is in flight: the process is gone at once (gRPC's own teardown
  // could otherwise wait ~10 s for a timer after a large response).
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(2));
}

TEST(ServerProcessTest, InvalidFlag_ExitTwoNamingFlag) {
  Subprocess server({POSENC_SERVER_PATH, "--max_d=1"}, Temp("bad.out"),
                    Temp("bad.err"));
  EXPECT_EQ(server.Wait(absl::Seconds(10)), 2);
  EXPECT_THAT(server.Stderr(), HasSubstr("--max_d must be 2..65536, got 1"));
}

TEST(ServerProcessTest, MalformedListen_ExitTwo) {
  Subprocess server({POSENC_SERVER_PATH, "--listen=nonsense"},
                    Temp("listen.out"), Temp("listen.err"));
  EXPECT_EQ(server.Wait(absl::Seconds(10)), 2);
  EXPECT_THAT(server.Stderr(), HasSubstr("--listen must be host:port"));
}

TEST(ServerProcessTest, PortInUse_ExitTwoCannotListen) {
  ServerProcess first({});
  ASSERT_NE(first.port(), 0);
  Subprocess second({POSENC_SERVER_PATH, "--listen=" + first.target()},
                    Temp("second.out"), Temp("second.err"));
  EXPECT_EQ(second.Wait(absl::Seconds(10)), 2);
  EXPECT_THAT(second.Stderr(), HasSubstr("cannot listen on"));
}

// The flags this test knows of; flags added to server/main.cc later show up
// by themselves, since --help lists every flag defined under server/.
constexpr const char* kServerFlags[] = {"--listen",
                                        "--cache_bytes",
                                        "--max_d",
                                        "--max_len_limit",
                                        "--max_rows_per_request",
                                        "--max_message_bytes",
                                        "--max_request_bytes",
                                        "--max_concurrent_streams",
                                        "--threads",
                                        "--lame_duck_seconds",
                                        "--grace_seconds",
                                        "--metrics_listen",
                                        "--tls_cert",
                                        "--tls_key",
                                        "--tls_client_ca",
                                        "--channelz"};

TEST(ServerProcessTest, Help_ListsOwnFlagsWithDefaultsOnly) {
  for (const char* help_flag : {"--help", "--helpshort"}) {
    Subprocess help({POSENC_SERVER_PATH, help_flag}, Temp("help.out"),
                    Temp("help.err"));
    help.Wait(absl::Seconds(10));
    const std::string text = help.Stdout() + help.Stderr();
    EXPECT_THAT(text, Not(HasSubstr("No flags matched"))) << help_flag;
    for (const char* flag : kServerFlags) {
      EXPECT_THAT(text, HasSubstr(flag)) << help_flag;
    }
    EXPECT_THAT(text, HasSubstr("default: \"127.0.0.1:50051\"")) << help_flag;
    EXPECT_THAT(text, HasSubstr("default: 536870912")) << help_flag;
    // Abseil's own flags stay in --helpfull.
    EXPECT_THAT(text, Not(HasSubstr("--flagfile"))) << help_flag;
  }
}

TEST(ServerProcessTest, HelpAndVersion_ExitZero) {
  for (const char* flag :
       {"--help", "--helpshort", "--helpfull", "-h", "--version"}) {
    Subprocess run({POSENC_SERVER_PATH, flag}, Temp("exit.out"),
                   Temp("exit.err"));
    EXPECT_EQ(run.Wait(absl::Seconds(10)), 0) << flag << run.Stderr();
  }
}

TEST(ServerProcessTest, Version_PrintsPosencCommitAndGrpcPatchSet) {
  Subprocess version({POSENC_SERVER_PATH, "--version"}, Temp("version.out"),
                     Temp("version.err"));
  EXPECT_EQ(version.Wait(absl::Seconds(10)), 0);
  const std::string text = version.Stdout();
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(^posenc_server \d+\.\d+\.\d+ \(git )"
                       R"(([0-9a-f]{12}(-dirty)?|unknown)\)\n)")))
      << text;
  EXPECT_THAT(text, HasSubstr("gRPC 1.51.1 + posenc patch set "));
  EXPECT_THAT(text, HasSubstr("CVE-2023-44487-rapid-reset.patch"));
  EXPECT_THAT(text, Not(HasSubstr("Debug build")));
}

TEST(ServerProcessTest, LogFormatJson_EveryLineOneObject) {
  ServerProcess server({"--log_format=json", "--lame_duck_seconds=0"});
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(absl::Seconds(30)), 0);
  const std::regex object(
      R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",)"
      R"("level":"[A-Z-]+","event":"([^"\\]|\\.)*","fields":\{.*\}\})");
  int lines = 0;
  std::string stderr_text = server.process().Stderr();
  size_t begin = 0;
  for (size_t end; (end = stderr_text.find('\n', begin)) != std::string::npos;
       begin = end + 1, ++lines) {
    const std::string line = stderr_text.substr(begin, end - begin);
    EXPECT_TRUE(std::regex_match(line, object)) << line;
  }
  EXPECT_GE(lines, 3) << stderr_text;  // listening, transport, ..., stopped
  EXPECT_THAT(stderr_text, HasSubstr(R"("fields":{"pid":")"));
}

TEST(ServerProcessTest, HelpFull_ListsOwnAndAbseilFlags) {
  Subprocess help({POSENC_SERVER_PATH, "--helpfull"}, Temp("help.out"),
                  Temp("help.err"));
  help.Wait(absl::Seconds(10));
  const std::string text = help.Stdout() + help.Stderr();
  for (const char* flag : kServerFlags) EXPECT_THAT(text, HasSubstr(flag));
  EXPECT_THAT(text, HasSubstr("--flagfile"));
}

}  // namespace
}  // namespace posenc::testing
