// TableStream (server/table_stream.h) against a real server on 127.0.0.1:
// its chunking, its two modes (cached: sent from the cache's bytes;
// computed: chunks computed on the pool while the previous one is written),
// and its admission (three chunks of inflight bytes, refused up front).
// Cancellation and deadlines: stream_lifecycle_test.
#include "server/table_stream.h"

#include <cstdint>
#include <string>

#include "absl/time/clock.h"
#include "core/plan/encoding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

class TableStreamTest : public ServerTest {
 protected:
  // Waits (bounded) until every inflight byte is back: gRPC lets go of the
  // last chunk just after the client has it.
  uint64_t InflightBytesOnceSettled() {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (Stats().compute().inflight_bytes() != 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    return Stats().compute().inflight_bytes();
  }

  static std::string Rows(const TableSpec& spec, uint32_t first,
                          uint32_t count) {
    std::string rows(size_t{count} * spec.row_bytes(), '\0');
    ComputeRows(spec, first, count, reinterpret_cast<std::byte*>(rows.data()));
    return rows;
  }
};

RangeQuery Plan(uint32_t d, uint32_t start, uint32_t end,
                uint32_t rows_per_message) {
  RangeQuery query;
  query.spec.d = d;
  query.spec.max_len = end;
  query.start = start;
  query.end = end;
  query.rows_per_message = rows_per_message;
  return query;
}

TEST(TableStreamChunkTest, ChunkRows_WholeMessagesFillingUpTo256KiB) {
  // 256-byte rows, one per message: 1024 messages make 256 KiB.
  EXPECT_EQ(TableStream::ChunkRows(Plan(64, 0, 100000, 1)), 1024u);
  // 250,000-byte messages: one message per chunk, never a part of one.
  EXPECT_EQ(TableStream::ChunkRows(Plan(64, 0, 100000, 1000)), 1000u);
  // 99,840-byte messages: the two whole ones that fit in 256 KiB.
  EXPECT_EQ(TableStream::ChunkRows(Plan(64, 0, 100000, 390)), 780u);
  // Never more rows than the stream asks for, never none.
  EXPECT_EQ(TableStream::ChunkRows(Plan(64, 10, 20, 1)), 10u);
  EXPECT_EQ(TableStream::ChunkRows(Plan(64, 20, 20, 1)), 1u);
}

TEST_F(TableStreamTest, ComputedMode_EveryRowInOrderAndChargeReturned) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = kMiB;  // the 5 MB table below is not cached
  StartServer(options);
  const TableSpec spec = Spec(256, 5000);
  // Not aligned to the 256-row chunks: the last chunk is partial.
  constexpr uint32_t kStart = 3, kEnd = 4999;
  std::string streamed;
  uint32_t expected = kStart;
  absl::Status s = client_->StreamRows(
      spec, kStart, kEnd, [&](uint32_t first, const Tensor& row) {
        EXPECT_EQ(first, expected) << "rows out of order";
        expected = first + 1;
        streamed += row.data;
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(expected, kEnd);
  EXPECT_TRUE(streamed == Rows(spec, kStart, kEnd - kStart));
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().entries(), 0u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), kEnd - kStart);
  EXPECT_EQ(stats.methods(1).ok(), 1u);  // StreamRows
  EXPECT_EQ(InflightBytesOnceSettled(), 0u);
}

TEST_F(TableStreamTest, CachedMode_ResidentTableSentWithoutComputing) {
  const TableSpec spec = Spec(64, 1000);
  ASSERT_TRUE(client_->GetTable(spec).ok());  // resident now
  std::string streamed;
  absl::Status s = client_->StreamBatches(spec, 0, std::nullopt, 100,
                                          [&](uint32_t, const Tensor& batch) {
                                            EXPECT_EQ(batch.shape[0], 100u);
                                            streamed += batch.data;
                                            return absl::OkStatus();
                                          });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(streamed == Rows(spec, 0, 1000));
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 1u);  // the GetTable's only
  EXPECT_EQ(stats.cache().hits(), 1u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), 0u);
  EXPECT_EQ(stats.compute().inflight_bytes(), 0u);  // nothing charged
}

TEST_F(TableStreamTest, ComputedOverInflightBudget_ResourceExhaustedNoRows) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = kMiB;
  options.max_inflight_bytes = kMiB;
  StartServer(options);
  // 4 KiB rows, 128 a message: a 512 KiB chunk, three of them 1.5 MiB.
  int messages = 0;
  absl::Status refused = client_->StreamBatches(
      Spec(1024, 100000), 0, std::nullopt, 128, [&](uint32_t, const Tensor&) {
        ++messages;
        return absl::OkStatus();
      });
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr("this answer needs 1572864, over the limit "
                        "--max_inflight_bytes=1048576"));
  EXPECT_EQ(messages, 0);
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.refusals().inflight_bytes(), 1u);
  EXPECT_EQ(stats.compute().inflight_bytes(), 0u);
  EXPECT_EQ(stats.methods(2).errors(), 1u);  // StreamBatches
  // A stream whose chunks fit is served.
  EXPECT_TRUE(client_
                  ->StreamBatches(
                      Spec(1024, 100), 0, std::nullopt, 16,
                      [](uint32_t, const Tensor&) { return absl::OkStatus(); })
                  .ok());
}

}  // namespace
}  // namespace posenc::testing
