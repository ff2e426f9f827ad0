// Every server limit, at the limit (accepted) and one past it (refused with
// the documented status), against a real in-process server on 127.0.0.1.
// Each test ends by checking the server still serves.
#include <grpcpp/client_context.h>

#include <string>
#include <thread>
#include <vector>

#include "convert/proto_conversion.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

class LimitsTest : public ServerTest {
 protected:
  // Small limits, so every edge is cheap to reach.
  static ServerOptions SmallLimits() {
    ServerOptions options = DefaultOptions();
    options.max_d = 64;
    options.max_len_limit = 1000;
    options.max_rows_per_request = 16;
    options.max_message_bytes = 4096;
    options.max_request_bytes = 1024;
    return options;
  }
  void SetUp() override { StartServer(SmallLimits()); }
  void TearDown() override {
    if (client_ != nullptr) ExpectStillServing(*client_);
  }
  absl::StatusCode Batches(const TableSpec& spec, uint32_t start, uint32_t end,
                           uint32_t rows_per_batch,
                           uint32_t* first_batch_rows = nullptr) {
    return client_
        ->StreamBatches(spec, start, end, rows_per_batch,
                        [&](uint32_t, const Tensor& t) {
                          if (first_batch_rows && *first_batch_rows == 0) {
                            *first_batch_rows = t.shape[0];
                          }
                          return absl::OkStatus();
                        })
        .code();
  }
};

TEST_F(LimitsTest, D_AtMaxOk_PastMaxInvalidArgument) {
  EXPECT_TRUE(client_->GetTable(Spec(64, 4)).ok());
  absl::Status past = client_->GetTable(Spec(66, 4)).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument) << past;
  EXPECT_NE(past.message().find("over the limit 64 (posenc_server --max_d)"),
            std::string::npos)
      << past;
}

TEST_F(LimitsTest, MaxLen_AtLimitOk_PastLimitInvalidArgument) {
  EXPECT_EQ(Batches(Spec(2, 1000), 990, 1000, 0), absl::StatusCode::kOk);
  EXPECT_EQ(Batches(Spec(2, 1001), 990, 1000, 0),
            absl::StatusCode::kInvalidArgument);
  // end == max_len is the last valid end; one more is out of range.
  EXPECT_EQ(
      client_
          ->StreamRows(Spec(2, 10), 0, 10,
                       [](uint32_t, const Tensor&) { return absl::OkStatus(); })
          .code(),
      absl::StatusCode::kOk);
  EXPECT_EQ(
      client_
          ->StreamRows(Spec(2, 10), 0, 11,
                       [](uint32_t, const Tensor&) { return absl::OkStatus(); })
          .code(),
      absl::StatusCode::kOutOfRange);
}

TEST_F(LimitsTest, RowsPerBatch_AtLimitOk_PastLimitInvalidArgument) {
  // d=8 float32: 32 bytes per row, 4096 / 32 = 128 rows per message.
  uint32_t rows = 0;
  EXPECT_EQ(Batches(Spec(8, 1000), 0, 1000, 128, &rows), absl::StatusCode::kOk);
  EXPECT_EQ(rows, 128u);
  EXPECT_EQ(Batches(Spec(8, 1000), 0, 1000, 129),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LimitsTest, PositionsCount_AtLimitOk_PastLimitInvalidArgument) {
  EXPECT_TRUE(
      client_->GetRows(Spec(4, 100), std::vector<uint32_t>(16, 7)).ok());
  EXPECT_EQ(client_->GetRows(Spec(4, 100), std::vector<uint32_t>(17, 7))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LimitsTest, GetTableResponse_AtMessageLimitOk_PastResourceExhausted) {
  // d=8 float32, 128 rows = 4096 bytes = --max_message_bytes exactly.
  absl::StatusOr<Tensor> at = client_->GetTable(Spec(8, 128));
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->data.size(), 4096u);
  EXPECT_EQ(client_->GetTable(Spec(8, 129)).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(LimitsTest, GetRowsResponse_AtMessageLimitOk_PastResourceExhausted) {
  TableSpec spec = Spec(64, 100);
  spec.dtype = DType::kFloat64;  // 512 bytes per row: 8 rows = 4096 bytes
  EXPECT_TRUE(client_->GetRows(spec, std::vector<uint32_t>(8, 1)).ok());
  EXPECT_EQ(client_->GetRows(spec, std::vector<uint32_t>(9, 1)).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(LimitsTest, RequestSize_AtLimitReachesServer_PastResourceExhausted) {
  // A GetRows request of exactly --max_request_bytes (1024) is received
  // and judged by the service (too many positions: INVALID_ARGUMENT); one
  // byte more is refused by gRPC before the service sees it.
  const TableSpec spec = Spec(4, 100);
  auto request_bytes = [&](size_t n) {
    v1::GetRowsRequest request;
    *request.mutable_spec() = SpecToProto(spec);
    for (size_t k = 0; k < n; ++k) request.add_positions(1);
    return request.ByteSizeLong();
  };
  size_t n = 900;
  while (request_bytes(n) < 1024) ++n;
  ASSERT_EQ(request_bytes(n), 1024u);
  ASSERT_EQ(request_bytes(n + 1), 1025u);
  EXPECT_EQ(client_->GetRows(spec, std::vector<uint32_t>(n, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status past =
      client_->GetRows(spec, std::vector<uint32_t>(n + 1, 1)).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kResourceExhausted) << past;
}

TEST_F(LimitsTest, ClientReceiveLimit_ResponseTooLargeResourceExhausted) {
  PosencClient::Options options = ClientOptions();
  options.max_receive_bytes = 1024;
  PosencClient small(options);
  EXPECT_TRUE(small.GetTable(Spec(8, 16)).ok());  // 512 bytes + header
  EXPECT_EQ(small.GetTable(Spec(8, 128)).status().code(),
            absl::StatusCode::kResourceExhausted);
}

// --max_concurrent_streams is HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS: gRPC
// clients honour it by queueing the (n+1)th call on that connection until a
// stream ends; the server never sees it, so it is neither refused nor
// served while n streams are open.
TEST_F(LimitsTest, MaxConcurrentStreams_ExtraCallWaitsUntilAStreamEnds) {
  ServerOptions options = DefaultOptions();
  options.max_concurrent_streams = 2;
  StartServer(options);
  auto stub = v1::PositionalEncoding::NewStub(client_->channel());
  v1::StreamBatchesRequest request;
  *request.mutable_spec() = SpecToProto(Spec(256, 1000000));  // 1 GB: never
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::StreamBatchesResponse>>>
      readers;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    readers.push_back(stub->StreamBatches(contexts.back().get(), request));
    v1::StreamBatchesResponse first;
    ASSERT_TRUE(readers.back()->Read(&first));  // the stream is open
  }
  // Both streams are open and unread. A third call waits for a slot.
  {
    // The same connection: queued until the deadline.
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(1500));
    v1::GetTableRequest get;
    *get.mutable_spec() = SpecToProto(Spec(4, 4));
    v1::GetTableResponse response;
    grpc::Status status = stub->GetTable(&context, get, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
  }
  // End one stream: the next call on the connection goes through.
  contexts[0]->TryCancel();
  EXPECT_EQ(readers[0]->Finish().error_code(), grpc::StatusCode::CANCELLED);
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    v1::GetTableRequest get;
    *get.mutable_spec() = SpecToProto(Spec(4, 4));
    v1::GetTableResponse response;
    EXPECT_TRUE(stub->GetTable(&context, get, &response).ok());
  }
  contexts[1]->TryCancel();
  readers[1]->Finish();
}

}  // namespace
}  // namespace posenc::testing
