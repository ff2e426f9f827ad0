// Graceful stop of the posenc_server binary under SIGTERM, with streams in
// flight: health flips to NOT_SERVING (seen on a Watch opened before the
// signal), calls made during the grace period are refused, in-flight streams
// that can finish do, the rest are cancelled when the grace period ends, and
// the process exits 0. tests/integration/server_process_test.cc covers the
// simpler cases (exit codes, log lines, SIGINT with a short stream).
#include <grpcpp/client_context.h>
#include <signal.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"

namespace posenc::testing {
namespace {

using HealthStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

TEST(LifecycleTest, Sigterm_NotServingRefusesNewCallsDrainsThenExitsZero) {
  ServerProcess server(
      {"--lame_duck_seconds=0", "--grace_seconds=3", "--cache_bytes=8388608"},
      "lifecycle");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  ExpectStillServing(client);

  // A health Watch opened before the signal.
  absl::Mutex mu;
  std::vector<HealthStatus> statuses;
  grpc::ClientContext watch_context;
  auto health = grpc::health::v1::Health::NewStub(client.channel());
  std::thread watcher([&] {
    auto reader =
        health->Watch(&watch_context, grpc::health::v1::HealthCheckRequest());
    grpc::health::v1::HealthCheckResponse response;
    while (reader->Read(&response)) {
      absl::MutexLock lock(&mu);
      statuses.push_back(response.status());
    }
    reader->Finish();
  });

  // Stream A: a slow reader of 1M rows, which cannot finish in the grace
  // period. Stream B: 60 rows read at 20 ms each (~1.2 s), which can.
  std::atomic<int> rows_a{0}, rows_b{0};
  std::atomic<bool> exited{false};  // then stream A drains its buffer fast
  absl::Status status_a, status_b;
  std::thread stream_a([&] {
    status_a = client.StreamRows(MakeSpec(1024, 1000000), 0, std::nullopt,
                                 [&](uint32_t, const Tensor&) {
                                   ++rows_a;
                                   if (exited) return absl::OkStatus();
                                   absl::SleepFor(absl::Milliseconds(20));
                                   return absl::OkStatus();
                                 });
  });
  std::thread stream_b([&] {
    status_b = client.StreamRows(MakeSpec(16, 60), 0, std::nullopt,
                                 [&](uint32_t, const Tensor&) {
                                   ++rows_b;
                                   absl::SleepFor(absl::Milliseconds(20));
                                   return absl::OkStatus();
                                 });
  });
  for (int i = 0; i < 500 && (rows_a < 3 || rows_b < 3); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GE(rows_a.load(), 3);
  ASSERT_GE(rows_b.load(), 3);

  const absl::Time signal_time = absl::Now();
  server.process().Signal(SIGTERM);

  // Health flips to NOT_SERVING on the open Watch.
  const absl::Time flip_deadline = signal_time + absl::Seconds(2);
  for (;;) {
    {
      absl::MutexLock lock(&mu);
      if (!statuses.empty() &&
          statuses.back() == grpc::health::v1::HealthCheckResponse::NOT_SERVING)
        break;
    }
    ASSERT_LT(absl::Now(), flip_deadline) << "health never went NOT_SERVING";
    absl::SleepFor(absl::Milliseconds(5));
  }

  // New calls during the grace period are refused, on the open connection
  // and on a new one, while the process is still draining.
  absl::SleepFor(absl::Milliseconds(200));
  PosencClient::Options quick_options =
      ClientTo(server.target(), absl::Seconds(2));
  PosencClient fresh(quick_options);
  const absl::StatusCode on_open =
      client.GetTable(MakeSpec(4, 4)).status().code();
  const absl::StatusCode on_new =
      fresh.GetTable(MakeSpec(4, 4)).status().code();
  const absl::Duration refused_at = absl::Now() - signal_time;
  EXPECT_FALSE(server.process().Wait(absl::ZeroDuration()).has_value())
      << "the server must still be draining when the calls are refused";
  EXPECT_LT(refused_at, absl::Seconds(3));
  EXPECT_EQ(on_open, absl::StatusCode::kUnavailable);
  EXPECT_EQ(on_new, absl::StatusCode::kUnavailable);

  std::optional<int> exit_code = server.process().Wait(absl::Seconds(15));
  const absl::Duration took = absl::Now() - signal_time;
  exited = true;
  stream_a.join();
  stream_b.join();
  watch_context.TryCancel();
  watcher.join();

  ASSERT_TRUE(exit_code.has_value()) << "server did not exit";
  EXPECT_EQ(*exit_code, 0);
  EXPECT_GE(took, absl::Milliseconds(2800)) << "stopped before the grace";
  EXPECT_LT(took, absl::Seconds(8)) << "did not cancel at the grace";
  EXPECT_TRUE(status_b.ok()) << status_b;
  EXPECT_EQ(rows_b.load(), 60);
  EXPECT_FALSE(status_a.ok()) << "a 1M-row slow stream cannot finish";
  EXPECT_LT(rows_a.load(), 1000000);
  {
    absl::MutexLock lock(&mu);
    ASSERT_GE(statuses.size(), 2u);
    EXPECT_EQ(statuses.front(), grpc::health::v1::HealthCheckResponse::SERVING);
    EXPECT_EQ(statuses.back(),
              grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  }
}

// With no call in flight the drain ends well before the grace period. (An
// idle client that stays connected holds gRPC's graceful GOAWAY handshake
// open for ~5 s on gRPC 1.51; still within the grace, and exit 0.)
TEST(LifecycleTest, SigtermWithNothingInFlight_ExitsBeforeTheGrace) {
  ServerProcess server({"--lame_duck_seconds=0", "--grace_seconds=10"}, "idle");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  // An idle client stays connected through the signal.
  PosencClient client(ClientTo(server.target()));
  ExpectStillServing(client);
  const absl::Time signal_time = absl::Now();
  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(absl::Seconds(15)), 0);
  const absl::Duration took = absl::Now() - signal_time;
  EXPECT_LT(took, absl::Seconds(8)) << server.process().Stderr();
  std::cout << "[ drain ] idle connected client: exit after " << took << "\n";
}

}  // namespace
}  // namespace posenc::testing
