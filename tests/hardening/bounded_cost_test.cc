// What a call costs follows what it asks for (issue 10), against a real
// server on 127.0.0.1: a cold one-row call computes one row, not the table;
// rows rented one by one buy the table once they cost as much; a flood of
// one-off specs leaves a hot table resident; the compute queue, the
// per-connection miss cap and the inflight byte budget refuse with
// RESOURCE_EXHAUSTED naming their flag; limits outside the proven range are
// refused at start; cold answers past a full cache reuse the warm reserve's
// buffers within its bound (none when it is 0); and the real process's peak
// RSS stays within cache + inflight + 64 MiB (the default 32 MiB warm
// reserve included) after budget-sized tables streamed back to back.
#include <grpcpp/client_context.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "convert/proto_conversion.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class BoundedCostTest : public ServerTest {
 protected:
  // A client on its own connection (distinct channel arguments).
  std::unique_ptr<PosencClient> OwnConnection(int n) {
    PosencClient::Options options = ClientOptions();
    options.max_receive_bytes = (1 << 30) - 1 - n;
    options.timeout = absl::Seconds(120);  // heavy work, sanitizer builds
    return std::make_unique<PosencClient>(options);
  }
  // A float64 table of 32 MiB with a base nobody asked for: seconds of
  // per-call work on one thread.
  static TableSpec Heavy(int k) {
    TableSpec spec = Spec(4096, 1024);
    spec.dtype = DType::kFloat64;
    spec.base = 5000.5 + k;
    return spec;
  }
};

TEST_F(BoundedCostTest, ColdOneRowOfLargeAdmissibleSpec_ComputesNoTable) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = uint64_t{1} << 30;
  StartServer(options);
  const TableSpec spec = Spec(1024, 131072);  // 512 MiB: the cache admits it
  absl::StatusOr<Tensor> row = client_->GetRows(spec, {100000});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->shape, (std::vector<uint32_t>{1, 1024}));
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 0u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), 1u);
  EXPECT_EQ(stats.cache().resident_bytes(), 0u);
  EXPECT_EQ(stats.cache().misses(), 1u);
  // The same row from the whole table, computed another way, is identical.
  absl::StatusOr<Tensor> from_stream;
  ASSERT_TRUE(client_
                  ->StreamRows(spec, 100000, 100001,
                               [&](uint32_t, const Tensor& t) {
                                 from_stream = t;
                                 return absl::OkStatus();
                               })
                  .ok());
  ASSERT_TRUE(from_stream.ok());
  EXPECT_EQ(from_stream->data, row->data);
}

TEST_F(BoundedCostTest, RowsRentedUpToAnEighth_ThenTableComputedOnce) {
  const TableSpec spec = Spec(64, 1024);  // buys after 1024 / 8 = 128 rows
  for (uint32_t call = 0; call < 127; ++call) {
    ASSERT_TRUE(client_->GetRows(spec, {call}).ok());
  }
  EXPECT_EQ(Stats().cache().computations(), 0u);
  ASSERT_TRUE(client_->GetRows(spec, {127}).ok());
  v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 1u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), 127u);
  // From now on the rows are hits.
  const uint64_t hits = stats.cache().hits();
  ASSERT_TRUE(client_->GetRows(spec, {1000, 3}).ok());
  EXPECT_EQ(Stats().cache().hits(), hits + 1);
}

TEST_F(BoundedCostTest, StreamOverUncacheableTable_ComputedInChunksNotRows) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = kMiB;  // the 2 MiB table below is never cached
  StartServer(options);
  const TableSpec spec = Spec(512, 1024);  // float32: 2 KiB rows
  std::vector<std::string> rows;
  absl::Status status = client_->StreamRows(
      spec, 0, std::nullopt, [&](uint32_t position, const Tensor& row) {
        EXPECT_EQ(position, rows.size());
        rows.push_back(row.data);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(rows.size(), 1024u);
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 0u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), 1024u);
  // 256 KiB chunks of 128 rows: 8 pool tasks, not 1024.
  EXPECT_EQ(stats.compute().started_tasks(), 8u);
  // Rows on both sides of a chunk boundary match the gather path's.
  absl::StatusOr<Tensor> gathered = client_->GetRows(spec, {0, 127, 128, 1023});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  const size_t row_bytes = spec.row_bytes();
  const uint32_t positions[] = {0, 127, 128, 1023};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(rows[positions[k]],
              gathered->data.substr(k * row_bytes, row_bytes))
        << "row " << positions[k];
  }
}

TEST_F(BoundedCostTest, FloodOfOneOffSpecs_HotTableStaysResident) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = 8 * kMiB;
  StartServer(options);
  const TableSpec hot = Spec(512, 1024);  // 2 MiB
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(client_->GetTable(hot).ok());
  for (int i = 0; i < 100; ++i) {
    TableSpec once = Spec(64, 1024);  // 256 KiB, asked for once
    once.base = 3000.25 + i;
    ASSERT_TRUE(client_->GetTable(once).ok());
    TableSpec row = Spec(512, 1 << 20);
    row.base = 7000.5 + i;
    ASSERT_TRUE(client_->GetRows(row, {uint32_t(i * 1000)}).ok());
  }
  const v1::GetStatsResponse before = Stats();
  EXPECT_GT(before.cache().rejections(), 0u);
  ASSERT_TRUE(client_->GetTable(hot).ok());
  const v1::GetStatsResponse after = Stats();
  EXPECT_EQ(after.cache().hits(), before.cache().hits() + 1);
  EXPECT_EQ(after.cache().computations(), before.cache().computations());
  EXPECT_LE(after.cache().resident_bytes(), 8 * kMiB);
}

TEST_F(BoundedCostTest, FullComputeQueue_ResourceExhaustedNamingFlag) {
  ServerOptions options = DefaultOptions();
  options.threads = 1;
  options.cache_bytes = kMiB;  // nothing heavy is cached: all is work
  options.max_queued_compute_bytes = 32 * kMiB;
  options.max_inflight_bytes = uint64_t{2} << 30;
  StartServer(options);
  constexpr int kCalls = 12;
  std::vector<std::unique_ptr<PosencClient>> clients;
  for (int c = 0; c < 4; ++c) clients.push_back(OwnConnection(c));
  std::vector<absl::Status> results(kCalls);
  auto* start = new absl::Barrier(kCalls);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCalls; ++i) {
    callers.emplace_back([&, i] {
      if (start->Block()) delete start;
      results[i] = clients[i % 4]->GetTable(Heavy(i)).status();
    });
  }
  for (auto& t : callers) t.join();
  int ok = 0, refused = 0;
  for (const absl::Status& s : results) {
    if (s.ok()) {
      ++ok;
    } else {
      ++refused;
      EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
      EXPECT_THAT(std::string(s.message()),
                  HasSubstr("over the limit 33554432; retry with backoff "
                            "(posenc_server --max_queued_compute_bytes)"));
    }
  }
  // At least the first call to reach the queue; a second one only if the
  // first had left the queue for the thread before the rest arrived.
  EXPECT_GE(ok, 1);
  EXPECT_GE(refused, 1);
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.refusals().queue_full(), uint64_t(refused));
  EXPECT_EQ(stats.compute().queued_tasks(), 0u);
  ExpectStillServing(*client_);
}

TEST_F(BoundedCostTest, CallsCancelledWhileQueued_DroppedUnrun) {
  ServerOptions options = DefaultOptions();
  options.threads = 1;
  options.cache_bytes = kMiB;  // nothing heavy is cached: all is work
  options.max_queued_compute_bytes = uint64_t{1} << 30;
  options.max_inflight_bytes = uint64_t{2} << 30;
  StartServer(options);
  // Eight heavy GetTables on one connection wait for the only compute
  // thread; once the server holds them all, the client cancels every one.
  constexpr int kCalls = 8;
  std::unique_ptr<PosencClient> heavy = OwnConnection(0);
  auto stub = v1::PositionalEncoding::NewStub(heavy->channel());
  struct Call {
    grpc::ClientContext context;
    v1::GetTableRequest request;
    v1::GetTableResponse response;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  absl::Mutex mu;
  int done = 0;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(std::make_unique<Call>());
    Call* call = calls.back().get();
    *call->request.mutable_spec() = SpecToProto(Heavy(i));
    stub->async()->GetTable(&call->context, &call->request, &call->response,
                            [&mu, &done, call](grpc::Status status) {
                              call->status = std::move(status);
                              absl::MutexLock lock(&mu);
                              ++done;
                            });
  }
  uint64_t queued = 0;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(30);
       absl::Now() < give_up; absl::SleepFor(absl::Microseconds(200))) {
    const v1::GetStatsResponse s = Stats();
    queued = s.compute().queued_tasks();
    if (queued + s.compute().started_tasks() >= kCalls) break;
  }
  // Each heavy table takes milliseconds (seconds under sanitizers), so
  // most are still queued.
  ASSERT_GE(queued, 2u);
  for (auto& call : calls) call->context.TryCancel();
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == kCalls; }, &done));
  }
  for (const auto& call : calls) {
    EXPECT_EQ(call->status.error_code(), grpc::StatusCode::CANCELLED);
  }
  v1::GetStatsResponse stats = Stats();
  for (const absl::Time give_up = absl::Now() + absl::Seconds(60);
       absl::Now() < give_up && (stats.compute().queued_tasks() != 0 ||
                                 stats.compute().running_tasks() != 0 ||
                                 stats.compute().inflight_bytes() != 0);
       stats = Stats()) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(stats.compute().queued_tasks(), 0u);
  EXPECT_EQ(stats.compute().started_tasks(), uint64_t{kCalls});
  // Every call still queued when its cancellation arrived was dropped unrun
  // (one more may have started in between). The one taken from the queue
  // may be dropped too: in one ASan run its thread had not yet made its
  // check when the cancellation landed, and all 8 were.
  EXPECT_GE(stats.compute().skipped_tasks(), queued - 1);
  EXPECT_LE(stats.compute().skipped_tasks(), uint64_t{kCalls});
  EXPECT_EQ(stats.compute().inflight_bytes(), 0u);
  ExpectStillServing(*heavy);
}

TEST_F(BoundedCostTest, ConnectionOverMissCap_RefusedWhileOthersServed) {
  ServerOptions options = DefaultOptions();
  options.threads = 1;
  options.cache_bytes = kMiB;
  options.max_misses_per_connection = 2;
  options.max_inflight_bytes = uint64_t{2} << 30;
  StartServer(options);
  constexpr int kBurst = 8;
  std::unique_ptr<PosencClient> greedy = OwnConnection(0);
  std::unique_ptr<PosencClient> polite = OwnConnection(1);
  std::vector<absl::Status> results(kBurst);
  absl::Status polite_result;
  auto* start = new absl::Barrier(kBurst + 1);
  std::vector<std::thread> callers;
  for (int i = 0; i < kBurst; ++i) {
    callers.emplace_back([&, i] {
      if (start->Block()) delete start;
      results[i] = greedy->GetTable(Heavy(i)).status();
    });
  }
  callers.emplace_back([&] {
    if (start->Block()) delete start;
    absl::SleepFor(absl::Milliseconds(50));  // after the burst arrived
    polite_result = polite->GetTable(Heavy(100)).status();
  });
  for (auto& t : callers) t.join();
  int refused = 0;
  for (const absl::Status& s : results) {
    if (s.ok()) continue;
    ++refused;
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("--max_misses_per_connection=2"));
  }
  EXPECT_GE(refused, 1);
  EXPECT_LE(refused, kBurst - 2);
  EXPECT_TRUE(polite_result.ok()) << polite_result;
  EXPECT_EQ(Stats().refusals().connection_misses(), uint64_t(refused));
}

TEST_F(BoundedCostTest, HitsWhilePoolIsBusy_AnsweredWithoutWaiting) {
  ServerOptions options = DefaultOptions();
  options.threads = 1;
  options.max_inflight_bytes = uint64_t{2} << 30;
  StartServer(options);
  const TableSpec hot = Spec(512, 2048);
  ASSERT_TRUE(client_->GetTable(hot).ok());
  // Heavy misses (4 MiB of float64 each) keep the only compute thread busy
  // (in sanitizer builds each takes seconds: 6 of them stay well inside
  // the client's deadline).
  constexpr int kHeavy = 6;
  std::unique_ptr<PosencClient> heavy = OwnConnection(0);
  std::atomic<int> heavy_done{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kHeavy; ++i) {
    callers.emplace_back([&, i] {
      TableSpec spec = Heavy(i);
      spec.max_len = 128;
      EXPECT_TRUE(heavy->GetTable(spec).ok());
      ++heavy_done;
    });
  }
  while (Stats().compute().running_tasks() == 0) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  // Hits of every kind, while the misses wait for the pool.
  EXPECT_TRUE(client_->GetTable(hot).ok());
  EXPECT_TRUE(client_->GetRows(hot, {7, 2047}).ok());
  EXPECT_TRUE(client_
                  ->StreamBatches(
                      hot, 0, std::nullopt, 0,
                      [](uint32_t, const Tensor&) { return absl::OkStatus(); })
                  .ok());
  EXPECT_LT(heavy_done.load(), kHeavy) << "the hits waited for every miss";
  for (auto& t : callers) t.join();
}

TEST_F(BoundedCostTest, AnswerOverInflightBudget_ResourceExhaustedNamingFlag) {
  ServerOptions options = DefaultOptions();
  options.max_inflight_bytes = kMiB;
  StartServer(options);
  std::vector<uint32_t> positions(300);  // 300 x 4 KiB: 1.2 MB > 1 MiB
  for (uint32_t k = 0; k < positions.size(); ++k) positions[k] = k * 3;
  absl::Status refused = client_->GetRows(Spec(1024, 1000), positions).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr("--max_inflight_bytes=1048576"));
  positions.resize(200);  // 800 KiB fits
  EXPECT_TRUE(client_->GetRows(Spec(1024, 1000), positions).ok());
  EXPECT_EQ(Stats().refusals().inflight_bytes(), 1u);
  // Every byte goes back once gRPC lets go of the answer (which may be just
  // after the client has it).
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Stats().compute().inflight_bytes() != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(Stats().compute().inflight_bytes(), 0u);
}

// Steady state: a full cache refuses one-off tables, which are computed for
// the call alone; each such answer, once sent, goes to the warm reserve and
// the next cold answer is written into it (same pages, already faulted in).
class WarmReserveTest : public BoundedCostTest {
 protected:
  // 4 MiB tables; the cache holds two: `hot` (asked for three times) and one
  // asked for once, so every new family is refused admission.
  static TableSpec Table(double base) {
    TableSpec spec = Spec(512, 2048);
    spec.base = base;
    return spec;
  }
  void FillCache() {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(client_->GetTable(hot_).ok());
    ASSERT_TRUE(client_->GetTable(Table(17000.5)).ok());
    ASSERT_EQ(Stats().cache().resident_bytes(), 8 * kMiB);
  }
  // Waits until gRPC has let go of every answer (then freed to the reserve).
  void AwaitAnswersFreed() {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (Stats().compute().inflight_bytes() != 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    ASSERT_EQ(Stats().compute().inflight_bytes(), 0u);
  }
  static ServerOptions WithReserve(uint64_t bytes) {
    ServerOptions options = DefaultOptions();
    options.cache_bytes = 8 * kMiB;
    options.warm_reserve_bytes = bytes;
    return options;
  }
  const TableSpec hot_ = Table(16000.5);
};

TEST_F(WarmReserveTest, ColdAnswersPastFullCache_ReuseReserveWithinBound) {
  StartServer(WithReserve(6 * kMiB));  // room for one 4 MiB answer
  FillCache();
  const v1::GetStatsResponse before = Stats();
  EXPECT_EQ(before.server().max_warm_reserve_bytes(), 6 * kMiB);
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(client_->GetTable(Table(18000.5 + k)).ok());
    AwaitAnswersFreed();
    const v1::GetStatsResponse now = Stats();
    // The freed answer, plus what the background refill added.
    EXPECT_GE(now.compute().warm_reserve_bytes(), 4 * kMiB) << k;
    EXPECT_LE(now.compute().warm_reserve_bytes(), 6 * kMiB) << k;
  }
  const v1::GetStatsResponse after = Stats();
  EXPECT_EQ(after.cache().rejections() - before.cache().rejections(), 5u);
  // The first cold answer was mapped fresh (or took a buffer FillCache's
  // calls left); each later one took the answer freed before it.
  EXPECT_GE(after.compute().warm_reserve_reuses() -
                before.compute().warm_reserve_reuses(),
            4u);
  EXPECT_EQ(after.cache().resident_bytes(), 8 * kMiB);
  ExpectStillServing(*client_);
}

TEST_F(WarmReserveTest, ReusedBuffer_AnswerMatchesRowsComputedApart) {
  StartServer(WithReserve(32 * kMiB));
  FillCache();
  ASSERT_TRUE(client_->GetTable(Table(19000.5)).ok());  // leaves its buffer
  AwaitAnswersFreed();
  const uint64_t reuses = Stats().compute().warm_reserve_reuses();
  const TableSpec spec = Table(19001.5);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(Stats().compute().warm_reserve_reuses(), reuses + 1);
  // Every row of the answer is this table's, none the previous user's.
  const std::vector<uint32_t> positions = {0, 1, 1024, 2047};
  absl::StatusOr<Tensor> rows = client_->GetRows(spec, positions);
  ASSERT_TRUE(rows.ok()) << rows.status();
  const size_t row_bytes = spec.row_bytes();
  for (size_t i = 0; i < positions.size(); ++i) {
    EXPECT_EQ(table->data.substr(positions[i] * row_bytes, row_bytes),
              rows->data.substr(i * row_bytes, row_bytes))
        << "row " << positions[i];
  }
}

TEST_F(WarmReserveTest, ZeroWarmReserve_NothingKeptNothingReused) {
  StartServer(WithReserve(0));
  FillCache();
  const uint64_t reuses = Stats().compute().warm_reserve_reuses();
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(client_->GetTable(Table(20000.5 + k)).ok());
    AwaitAnswersFreed();
  }
  const v1::GetStatsResponse after = Stats();
  EXPECT_EQ(after.compute().warm_reserve_bytes(), 0u);
  EXPECT_EQ(after.compute().warm_reserve_reuses(), reuses);
  EXPECT_EQ(after.server().max_warm_reserve_bytes(), 0u);
}

TEST(BoundedCostOptionsTest, WarmReserveOutOfRange_RefusedNamingFlag) {
  ServerOptions options;
  EXPECT_EQ(options.warm_reserve_bytes, 32 * kMiB);
  for (uint64_t bad : {kMiB, (uint64_t{1} << 30) + 1}) {
    options.warm_reserve_bytes = bad;
    absl::Status s = ValidateServerOptions(options);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--warm_reserve_bytes"));
  }
  for (uint64_t good : {uint64_t{0}, 2 * kMiB, uint64_t{1} << 30}) {
    options.warm_reserve_bytes = good;
    EXPECT_TRUE(ValidateServerOptions(options).ok()) << good;
  }
}

TEST(BoundedCostOptionsTest, LimitsPastProvenRange_RefusedNamingWhy) {
  ServerOptions options;
  options.max_len_limit = (1u << 24) + 1;
  absl::Status len = ValidateServerOptions(options);
  EXPECT_EQ(len.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(len.message()),
              HasSubstr("--max_len_limit must be 1..16777216, got 16777217"));
  options = ServerOptions();
  options.max_d = 65538;
  absl::Status d = ValidateServerOptions(options);
  EXPECT_EQ(d.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.message()),
              HasSubstr("proven and tested only up to d=65536"));
  options = ServerOptions();
  options.max_len_limit = 1u << 24;
  options.max_d = 65536;
  EXPECT_TRUE(ValidateServerOptions(options).ok());
}

TEST(BoundedCostProcessTest, MaxLenLimitPastProvenRange_ExitTwoSayingWhy) {
  Subprocess server(
      {POSENC_SERVER_PATH, "--listen=127.0.0.1:0", "--max_len_limit=16777217"},
      TestTempPath("proven.out"), TestTempPath("proven.err"));
  EXPECT_EQ(server.Wait(absl::Seconds(10)), 2);
  EXPECT_THAT(server.Stderr(), HasSubstr("positions up to 2^24"));
}

TEST(BoundedCostProcessTest, BudgetSizedTablesBackToBack_PeakRssWithinBound) {
  constexpr uint64_t kCache = 64 * kMiB, kInflight = 32 * kMiB;
  ServerProcess server(
      {absl::StrCat("--cache_bytes=", kCache),
       absl::StrCat("--max_inflight_bytes=", kInflight), "--threads=2"},
      "rss");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  PosencClient client(ClientTo(server.target()));
  auto noop = [](uint32_t, const Tensor&) { return absl::OkStatus(); };
  // Budget-sized tables (1024 x 16384 float32 = 64 MiB), each a new base,
  // streamed whole back to back.
  for (int k = 0; k < 3; ++k) {
    TableSpec spec = MakeSpec(1024, 16384);
    spec.base = 9000.5 + k;
    ASSERT_TRUE(client.StreamBatches(spec, 0, std::nullopt, 0, noop).ok());
  }
  // A flood of one-off specs, then one-row calls on budget-sized specs.
  for (int k = 0; k < 40; ++k) {
    TableSpec once = MakeSpec(512, 1024);
    once.base = 11000.5 + k;
    ASSERT_TRUE(client.GetTable(once).ok());
  }
  for (int k = 0; k < 5; ++k) {
    TableSpec spec = MakeSpec(1024, 16384);
    spec.base = 13000.5 + k;
    ASSERT_TRUE(client.GetRows(spec, {16000}).ok());
  }
  const uint64_t peak = server.MemoryBytes("VmHWM");
  std::cout << "[ rss ] VmHWM " << (peak >> 20) << " MiB, bound "
            << ((kCache + kInflight + 64 * kMiB) >> 20) << " MiB\n";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)peak;  // sanitizer builds hold freed memory in quarantine
#else
  EXPECT_LE(peak, kCache + kInflight + 64 * kMiB);
#endif
  ExpectStillServing(client);
}

}  // namespace
}  // namespace posenc::testing
