// How streams end: cancelled by the client, cut by a deadline, or many cold
// callers at once; after each the server keeps serving.
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/sanitizer_scale.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

class StreamLifecycleTest : public ServerTest {
 protected:
  // Waits until the server has recorded `n` finished calls of `method`
  // (the server counts a call when it finishes, just after the client sees
  // the status).
  v1::MethodStats WaitForCalls(int method, uint64_t n) {
    v1::MethodStats m;
    for (int i = 0; i < 100; ++i) {
      absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
      if (stats.ok()) {
        m = stats->methods(method);
        if (m.ok() + m.errors() >= n) break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return m;
  }

  void ExpectStillServing() {
    absl::StatusOr<Tensor> table = client_->GetTable(Spec(4, 4));
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_NEAR(table->ValueAt(8), 0.9093, 1e-4);
    absl::StatusOr<bool> serving = client_->CheckHealth();
    ASSERT_TRUE(serving.ok());
    EXPECT_TRUE(*serving);
  }
};

TEST_F(StreamLifecycleTest, ClientCancelsMidStream_CancelledAndServerServes) {
  int batches = 0;
  absl::Status s = client_->StreamBatches(
      Spec(512, 100000), 0, std::nullopt, 0, [&](uint32_t, const Tensor&) {
        return ++batches == 3 ? absl::CancelledError("enough")
                              : absl::OkStatus();
      });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(batches, 3);
  v1::MethodStats stream = WaitForCalls(2, 1);
  EXPECT_EQ(stream.ok(), 0u);
  EXPECT_EQ(stream.errors(), 1u);
  ExpectStillServing();
}

TEST_F(StreamLifecycleTest, CancelUncachedStream_CancelledAndServerServes) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = 1 << 20;  // the table below is computed per message
  StartServer(options);
  int rows = 0;
  absl::Status s = client_->StreamRows(
      Spec(1024, 1000000), 0, std::nullopt, [&](uint32_t, const Tensor&) {
        return ++rows == 100 ? absl::CancelledError("enough")
                             : absl::OkStatus();
      });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(WaitForCalls(1, 1).errors(), 1u);
  ExpectStillServing();
}

TEST_F(StreamLifecycleTest, DeadlineExpiresMidStream_DeadlineExceeded) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = 1 << 20;
  StartServer(options);
  PosencClient::Options short_deadline = ClientOptions();
  short_deadline.timeout = absl::Milliseconds(500) * kSanitizerTimeScale;
  PosencClient slow_client(short_deadline);
  int batches = 0;
  absl::Status s = slow_client.StreamBatches(
      Spec(4096, 1000000), 0, std::nullopt, 0, [&](uint32_t, const Tensor&) {
        ++batches;
        absl::SleepFor(absl::Milliseconds(20));  // a slow reader
        return absl::OkStatus();
      });
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_GT(batches, 0);
  EXPECT_LT(batches, 1000000 / 4);
  WaitForCalls(2, 1);
  ExpectStillServing();
}

TEST_F(StreamLifecycleTest, ConcurrentColdRequests_ComputedOnce) {
  constexpr int kCallers = 16;
  const TableSpec spec = Spec(512, 16384);  // 32 MB
  auto* start = new absl::Barrier(kCallers);
  std::vector<std::string> payloads(kCallers);
  std::vector<std::thread> callers;
  // Each asks for an eighth of the table: enough for the cache to compute it
  // whole (and once) rather than rows per call.
  std::vector<uint32_t> positions(2048);
  for (uint32_t k = 0; k < positions.size(); ++k) positions[k] = 16383 - 8 * k;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      if (start->Block()) delete start;
      absl::StatusOr<Tensor> rows = client_->GetRows(spec, positions);
      ASSERT_TRUE(rows.ok()) << rows.status();
      payloads[i] = rows->data;
    });
  }
  for (auto& c : callers) c.join();
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cache().computations(), 1u);
  EXPECT_EQ(stats->cache().hits() + stats->cache().misses(),
            uint64_t{kCallers});
  for (const std::string& p : payloads) EXPECT_EQ(p, payloads[0]);
}

}  // namespace
}  // namespace posenc::testing
