// Hostile and failing clients: random cancellation, deadlines expiring
// mid-stream, streams that are never read, client processes killed
// mid-stream, and a stampede of identical cold requests. After each, the
// server has no call left in flight and still serves.
#include <grpcpp/client_context.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "convert/proto_conversion.h"
#include "gtest/gtest.h"
#include "tests/common/sanitizer_scale.h"
#include "tests/hardening/hardening_util.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

class FaultTest : public ServerTest {
 protected:
  // These tests open up to a few hundred cold streams on one connection at
  // once; the per-connection cap on misses has its own tests
  // (bounded_cost_test.cc), so here it is out of the way.
  void SetUp() override {
    ServerOptions options = DefaultOptions();
    options.max_misses_per_connection = 1024;
    StartServer(options);
  }

  double InflightStreams() {
    return MetricValue(server_->RenderMetrics(), "posenc_inflight_streams");
  }
  // Waits until the server has finished every stream (bounded).
  void ExpectStreamsDrain(absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (InflightStreams() != 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    EXPECT_EQ(InflightStreams(), 0);
  }
};

TEST_F(FaultTest, ManyConcurrentStreamsCancelledAtRandomPoints) {
#if defined(__SANITIZE_THREAD__)
  // A quarter of the streams under ThreadSanitizer: 192 took 37-130 s there
  // on 2 busy cores, past ctest's 180 s once; 8 clients still cancel at
  // once, from their own thread and from another.
  constexpr int kThreads = 8, kStreamsPerThread = 6;
#else
  constexpr int kThreads = 16, kStreamsPerThread = 12;
#endif
  std::atomic<int> unexpected{0}, cancelled{0}, ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      auto stub = v1::PositionalEncoding::NewStub(client_->channel());
      for (int s = 0; s < kStreamsPerThread; ++s) {
        // Cached (small) and uncached (large) tables, rows and batches.
        const bool large = rng() % 2;
        const TableSpec spec = Spec(large ? 1024 : 64, large ? 200000 : 2000);
        grpc::ClientContext context;
        const int cancel_after = rng() % 20;  // messages read before cancel
        const bool from_other_thread = rng() % 2;
        std::thread canceller;
        if (from_other_thread) {
          const auto delay = std::chrono::microseconds(rng() % 20000);
          canceller = std::thread([&context, delay] {
            std::this_thread::sleep_for(delay);
            context.TryCancel();
          });
        }
        grpc::Status status;
        if (rng() % 2) {
          v1::StreamRowsRequest request;
          *request.mutable_spec() = SpecToProto(spec);
          auto reader = stub->StreamRows(&context, request);
          v1::StreamRowsResponse response;
          for (int k = 0; reader->Read(&response); ++k) {
            if (k == cancel_after) context.TryCancel();
          }
          status = reader->Finish();
        } else {
          v1::StreamBatchesRequest request;
          *request.mutable_spec() = SpecToProto(spec);
          auto reader = stub->StreamBatches(&context, request);
          v1::StreamBatchesResponse response;
          for (int k = 0; reader->Read(&response); ++k) {
            if (k == cancel_after) context.TryCancel();
          }
          status = reader->Finish();
        }
        if (canceller.joinable()) canceller.join();
        if (status.error_code() == grpc::StatusCode::CANCELLED) {
          ++cancelled;
        } else if (status.ok()) {
          ++ok;  // a small stream may finish before its cancel point
        } else {
          ++unexpected;
          ADD_FAILURE() << status.error_code() << " " << status.error_message();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(cancelled.load(), kThreads * kStreamsPerThread / 2);
  ExpectStreamsDrain();
  ExpectStillServing(*client_);
}

TEST_F(FaultTest, DeadlinesExpireMidStream_DeadlineExceededAndDrained) {
  constexpr int kStreams = 16;
  std::vector<std::thread> threads;
  std::atomic<int> deadline_exceeded{0};
  for (int i = 0; i < kStreams; ++i) {
    threads.emplace_back([&, i] {
      PosencClient::Options options = ClientOptions();
      // Long enough for the first row on a busy machine (the check below
      // needs rows > 0); the reader needs 500 s for the whole stream.
      options.timeout = absl::Milliseconds(2000 + 20 * i) * kSanitizerTimeScale;
      PosencClient slow(options);
      int rows = 0;
      absl::Status status = slow.StreamRows(
          Spec(512, 100000), 0, std::nullopt, [&](uint32_t, const Tensor&) {
            ++rows;
            absl::SleepFor(absl::Milliseconds(5));  // a slow reader
            return absl::OkStatus();
          });
      if (status.code() == absl::StatusCode::kDeadlineExceeded && rows > 0) {
        ++deadline_exceeded;
      } else {
        ADD_FAILURE() << status << " after " << rows << " rows";
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(deadline_exceeded.load(), kStreams);
  ExpectStreamsDrain();
  ExpectStillServing(*client_);
}

TEST_F(FaultTest, ConcurrentIdenticalColdRequests_ComputedOnce) {
  constexpr int kCallers = 48;
  const TableSpec spec = Spec(512, 2048);  // 4 MiB, cold
  std::vector<std::thread> threads;
  std::vector<std::string> results(kCallers);
  std::atomic<int> failures{0};
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      if (i % 3 == 0) {
        absl::StatusOr<Tensor> t = client_->GetTable(spec);
        if (t.ok())
          results[i] = t->data.substr(512 * 4, 512 * 4);  // row 1
        else
          ++failures;
      } else if (i % 3 == 1) {
        absl::StatusOr<Tensor> t = client_->GetRows(spec, {1});
        if (t.ok())
          results[i] = t->data;
        else
          ++failures;
      } else {
        absl::Status s =
            client_->StreamRows(spec, 1, 2, [&](uint32_t, const Tensor& row) {
              results[i] = row.data;
              return absl::OkStatus();
            });
        if (!s.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (int i = 1; i < kCallers; ++i) EXPECT_TRUE(results[i] == results[0]) << i;
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cache().computations(), 1u);
  ExpectStillServing(*client_);
}

// Memory: streams of a table too large to cache, opened and never read.
// Each stream holds at most one message on the server (the next write
// starts only after the previous one completed), so the server's RSS stays
// within a fixed margin however much the clients fail to read.
TEST(FaultProcessTest, ManyStreamsNeverRead_ServerMemoryBounded) {
  ServerProcess server({"--cache_bytes=16777216", "--threads=2"}, "unread");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  ExpectStillServing(client);
  const uint64_t baseline = server.MemoryBytes();
  ASSERT_GT(baseline, 0u);

  constexpr int kConnections = 4, kStreamsPerConnection = 50;
  std::vector<std::unique_ptr<PosencClient>> clients;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::StreamBatchesResponse>>>
      readers;
  for (int c = 0; c < kConnections; ++c) {
    PosencClient::Options options = ClientTo(server.target());
    options.lb_policy = absl::StrCat("pick_first");
    options.max_receive_bytes = (1 << 30) - c;  // distinct args: own socket
    clients.push_back(std::make_unique<PosencClient>(options));
    auto stub = v1::PositionalEncoding::NewStub(clients.back()->channel());
    for (int s = 0; s < kStreamsPerConnection; ++s) {
      v1::StreamBatchesRequest request;
      // 4 GB per stream, 64 KiB per message, never cached.
      *request.mutable_spec() = SpecToProto(MakeSpec(1024, 1000000 - s));
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      readers.push_back(stub->StreamBatches(contexts.back().get(), request));
    }
  }
  // Let every stream fill its windows: wait until the server's memory has
  // grown by under 4 MiB in a second (at most 30 s). A fixed 3 s was too
  // short for 200 streams under ASan on 2 busy cores (still filling: +50 to
  // +80 MiB in the next 2 s; stable once the cores were free). A server that
  // keeps buffering never settles, and the check below still fails.
  uint64_t loaded = server.MemoryBytes();
  for (int waited = 0; waited < 30; ++waited) {
    absl::SleepFor(absl::Seconds(1));
    const uint64_t now = server.MemoryBytes();
    const bool settled = now < loaded + (uint64_t{4} << 20);
    loaded = now;
    if (settled && waited >= 2) break;
  }
  absl::SleepFor(absl::Seconds(2));
  const uint64_t later = server.MemoryBytes();
  const uint64_t peak = server.MemoryBytes("VmHWM");
  const uint64_t streams = readers.size();
  std::cout << "[ memory ] baseline " << (baseline >> 20) << " MiB; with "
            << streams << " unread streams " << (loaded >> 20) << " MiB, 2 s "
            << "later " << (later >> 20) << " MiB, peak " << (peak >> 20)
            << " MiB (" << ((peak - baseline) / streams >> 10)
            << " KiB per stream)\n";
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's shadow memory is part of RSS: only the streams are
  // checked there (parked, then cancelled below).
  (void)peak;
  (void)later;
#else
  // Per stream the server holds one message being written plus what HTTP/2
  // flow control lets it have in flight (the client's window and gRPC's
  // write buffer): under 1 MiB, not the 4 GB the stream would send.
  EXPECT_LT(peak, baseline + streams * (uint64_t{1} << 20));
  // And it has stopped growing: the streams are parked, not buffering.
  EXPECT_LT(later, loaded + (uint64_t{16} << 20));
#endif
  ExpectStillServing(client);
  for (auto& context : contexts) context->TryCancel();
  for (auto& reader : readers) reader->Finish();
  ExpectStillServing(client);
}

// Client processes (the posenc CLI streaming a large table into /dev/null)
// SIGKILLed mid-stream: the server sees the connections die, ends the
// streams and keeps serving.
TEST(FaultProcessTest, ClientProcessesKilledMidStream_ServerServes) {
  ServerProcess server(
      {"--cache_bytes=16777216", "--threads=2", "--metrics_listen=127.0.0.1:0"},
      "killed");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  ASSERT_NE(server.metrics_port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  const std::string sink = TestTempPath("sink.bin");
  ASSERT_EQ(symlink("/dev/null", sink.c_str()), 0);
  std::vector<std::unique_ptr<Subprocess>> clis;
  for (int i = 0; i < 4; ++i) {
    clis.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{POSENC_CLI_PATH, "rows", "--target",
                                 server.target(), "--d", "1024", "--max-len",
                                 absl::StrCat(4000000 + i), "-o", sink},
        TestTempPath(absl::StrCat("cli", i, ".out")),
        TestTempPath(absl::StrCat("cli", i, ".err"))));
  }
  auto metrics = [&] {
    httplib::Client http("127.0.0.1", server.metrics_port());
    auto result = http.Get("/metrics");
    return result ? result->body : std::string();
  };
  // Wait until all four streams are in flight, then kill the clients.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (MetricValue(metrics(), "posenc_inflight_streams") < 4 &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(MetricValue(metrics(), "posenc_inflight_streams"), 4);
  absl::SleepFor(absl::Milliseconds(300));
  for (auto& cli : clis) {
    cli->Signal(SIGKILL);
    EXPECT_EQ(cli->Wait(absl::Seconds(5)), 128 + SIGKILL);
  }
  const absl::Time drain = absl::Now() + absl::Seconds(10);
  while (MetricValue(metrics(), "posenc_inflight_streams") != 0 &&
         absl::Now() < drain) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(MetricValue(metrics(), "posenc_inflight_streams"), 0);
  EXPECT_EQ(MetricValue(metrics(),
                        "posenc_requests_total{method=\"StreamBatches\","
                        "code=\"CANCELLED\"}"),
            4);
  ExpectStillServing(client);
}

}  // namespace
}  // namespace posenc::testing
