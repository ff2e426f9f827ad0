// ServerTest: a fixture that runs a real PosencServer on 127.0.0.1 with a
// free port and hands tests a real PosencClient connected to it.
#ifndef POSENC_TESTS_INTEGRATION_SERVER_FIXTURE_H_
#define POSENC_TESTS_INTEGRATION_SERVER_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/posenc_client.h"
#include "gtest/gtest.h"
#include "server/posenc_server.h"
#include "tests/common/subprocess.h"
#include "tests/common/table_specs.h"

namespace posenc::testing {

class ServerTest : public ::testing::Test {
 protected:
  // Restarts the server with `options` (listen is forced to a free
  // loopback port).
  void StartServer(ServerOptions options = DefaultOptions()) {
    client_.reset();
    server_.reset();
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<PosencServer>> server =
        PosencServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client_ = std::make_unique<PosencClient>(ClientOptions());
  }

  static ServerOptions DefaultOptions() {
    ServerOptions options;
    options.cache_bytes = uint64_t{64} << 20;
    options.threads = 2;
    options.grace_seconds = 1;
    return options;
  }

  PosencClient::Options ClientOptions() const {
    PosencClient::Options options;
    options.target = absl::StrCat("127.0.0.1:", server_->port());
    options.timeout = kCallTimeout;
    return options;
  }

  // Each call's deadline. Under ThreadSanitizer every memory access of the
  // server, the client and gRPC is checked, and a client reading a stream
  // of megabytes on 2 busy cores can take tens of seconds (seen in CI as a
  // 2 MiB StreamBatches at DEADLINE_EXCEEDED after 20 s, 3 runs in 40).
#if defined(__SANITIZE_THREAD__)
  static constexpr absl::Duration kCallTimeout = absl::Seconds(100);
#else
  static constexpr absl::Duration kCallTimeout = absl::Seconds(20);
#endif

  void SetUp() override { StartServer(); }

  // The server's GetStats; an empty response (and a failure) if it fails.
  v1::GetStatsResponse Stats() {
    absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : v1::GetStatsResponse();
  }

  static TableSpec Spec(uint32_t d, uint32_t max_len) {
    return PlainSpec(d, max_len);
  }

#ifdef POSENC_CLI_PATH
  // The posenc CLI's argv: POSENC_CLI_PATH, `args`, then this server's
  // --target unless with_target is false.
  std::vector<std::string> CliArgs(std::vector<std::string> args,
                                   bool with_target = true) const {
    args.insert(args.begin(), POSENC_CLI_PATH);
    if (with_target) {
      args.push_back("--target");
      args.push_back(ClientOptions().target);
    }
    return args;
  }

  // Runs the CLI (CliArgs) with stdout and stderr captured to files.
  ProgramResult RunCli(std::vector<std::string> args,
                       bool with_target = true) const {
    return RunProgram(CliArgs(std::move(args), with_target));
  }
#endif

  std::unique_ptr<PosencServer> server_;
  std::unique_ptr<PosencClient> client_;
};

}  // namespace posenc::testing

#endif  // POSENC_TESTS_INTEGRATION_SERVER_FIXTURE_H_
