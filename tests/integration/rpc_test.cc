// Every RPC of posenc.v1.PositionalEncoding against a real server, with the
// exact status code and message of every validation error.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "convert/proto_conversion.h"
#include "core/plan/encoding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/table_specs.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class RpcTest : public ServerTest {};

void ExpectRow(const Tensor& t, uint32_t row, std::vector<double> want,
               double tolerance) {
  const uint32_t d = t.shape.back();
  for (uint32_t c = 0; c < want.size(); ++c) {
    EXPECT_NEAR(t.ValueAt(row * d + c), want[c], tolerance)
        << "row " << row << " column " << c;
  }
}

TEST_F(RpcTest, GetTable_WorkedExample) {
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(4, 4));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->dtype, DType::kFloat32);
  EXPECT_EQ(table->shape, (std::vector<uint32_t>{4, 4}));
  ASSERT_EQ(table->data.size(), 4u * 4 * 4);
  ExpectRow(*table, 0, {0, 1, 0, 1}, 0);
  ExpectRow(*table, 2, {0.9093, -0.4161, 0.0200, 0.9998}, 1e-4);
  ExpectRow(*table, 3, {0.1411, -0.9900, 0.0300, 0.9996}, 1e-4);
}

TEST_F(RpcTest, GetTable_EveryDType_SameValuesAtItsPrecision) {
  const std::vector<std::pair<DType, double>> cases = {
      {DType::kFloat64, 1e-4},
      {DType::kFloat16, 1e-3},
      {DType::kBFloat16, 1e-2}};
  for (auto [dtype, tolerance] : cases) {
    TableSpec spec = Spec(4, 4);
    spec.dtype = dtype;
    absl::StatusOr<Tensor> table = client_->GetTable(spec);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ(table->dtype, dtype);
    EXPECT_EQ(table->data.size(), 16 * DTypeSize(dtype));
    ExpectRow(*table, 2, {0.9093, -0.4161, 0.0200, 0.9998}, tolerance);
  }
}

TEST_F(RpcTest, GetTable_Layouts_PermuteChannels) {
  TableSpec spec = Spec(4, 4);
  spec.layout = Layout::kConcatSinCos;
  absl::StatusOr<Tensor> sin_cos = client_->GetTable(spec);
  ASSERT_TRUE(sin_cos.ok());
  ExpectRow(*sin_cos, 2, {0.9093, 0.0200, -0.4161, 0.9998}, 1e-4);
  spec.layout = Layout::kConcatCosSin;
  absl::StatusOr<Tensor> cos_sin = client_->GetTable(spec);
  ASSERT_TRUE(cos_sin.ok());
  ExpectRow(*cos_sin, 2, {-0.4161, 0.9998, 0.9093, 0.0200}, 1e-4);
}

TEST_F(RpcTest, StreamRows_UnsetEnd_EveryRowInOrderMatchingTable) {
  const TableSpec spec = Spec(8, 20);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok());
  std::vector<uint32_t> seen;
  absl::Status s = client_->StreamRows(
      spec, 5, std::nullopt, [&](uint32_t position, const Tensor& row) {
        EXPECT_EQ(row.shape, (std::vector<uint32_t>{8}));
        EXPECT_EQ(row.data, table->data.substr(position * 32, 32));
        seen.push_back(position);
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(seen.size(), 15u);
  for (uint32_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], 5 + k);
}

TEST_F(RpcTest, StreamRows_ExplicitEnd_StopsBeforeIt) {
  int rows = 0;
  absl::Status s =
      client_->StreamRows(Spec(8, 20), 0, 3, [&](uint32_t, const Tensor&) {
        ++rows;
        return absl::OkStatus();
      });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(rows, 3);
}

TEST_F(RpcTest, StreamBatches_UnsetBatch_About64KiBAndConcatenatesToTable) {
  const TableSpec spec = Spec(512, 200);  // 2 KiB rows: 32 rows per batch
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok());
  std::string joined;
  std::vector<uint32_t> starts, sizes;
  absl::Status s = client_->StreamBatches(
      spec, 0, std::nullopt, 0, [&](uint32_t start, const Tensor& batch) {
        starts.push_back(start);
        sizes.push_back(batch.shape[0]);
        joined += batch.data;
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(joined, table->data);
  ASSERT_EQ(sizes.size(), 7u);  // 6 full batches and one of 8 rows
  EXPECT_EQ(sizes.front(), 32u);
  EXPECT_EQ(sizes.back(), 200u % 32);
  EXPECT_EQ(starts[1], 32u);
}

TEST_F(RpcTest, StreamBatches_RequestedBatchAndRange_Honoured) {
  std::vector<uint32_t> starts;
  absl::Status s = client_->StreamBatches(
      Spec(8, 100), 10, 30, 7, [&](uint32_t start, const Tensor& batch) {
        starts.push_back(start);
        EXPECT_EQ(batch.shape[0], start == 24 ? 6u : 7u);
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(starts, (std::vector<uint32_t>{10, 17, 24}));
}

TEST_F(RpcTest, StreamBatches_TableLargerThanCache_StreamedWithoutCaching) {
  ServerOptions options = DefaultOptions();
  options.cache_bytes = 1 << 20;
  StartServer(options);
  const TableSpec spec = Spec(512, 4000);  // 8 MB, over the 1 MiB budget
  uint64_t bytes = 0;
  std::string row_3999, streamed;
  uint32_t expected_start = 0;
  absl::Status s = client_->StreamBatches(
      spec, 0, std::nullopt, 0, [&](uint32_t start, const Tensor& batch) {
        EXPECT_EQ(start, expected_start) << "batches out of order";
        expected_start = start + batch.shape[0];
        bytes += batch.data.size();
        streamed += batch.data;
        if (start + batch.shape[0] == 4000) {
          row_3999 = batch.data.substr(batch.data.size() - 2048);
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(bytes, spec.table_bytes());
  // Computed message by message (the next while the current one is
  // written), the stream is the table, byte for byte.
  std::string table(spec.table_bytes(), '\0');
  ComputeRows(spec, 0, spec.max_len,
              reinterpret_cast<std::byte*>(table.data()));
  EXPECT_TRUE(streamed == table);
  absl::StatusOr<Tensor> gathered = client_->GetRows(spec, {3999});
  ASSERT_TRUE(gathered.ok());
  EXPECT_EQ(gathered->data, row_3999);
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cache().entries(), 0u);
  EXPECT_EQ(stats->cache().resident_bytes(), 0u);
}

TEST_F(RpcTest, GetRows_RepeatedUnsortedPositions_InRequestOrder) {
  const TableSpec spec = Spec(8, 10);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok());
  absl::StatusOr<Tensor> rows = client_->GetRows(spec, {5, 0, 5, 9});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (std::vector<uint32_t>{4, 8}));
  const std::vector<uint32_t> want = {5, 0, 5, 9};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(rows->data.substr(k * 32, 32),
              table->data.substr(want[k] * 32, 32));
  }
}

TEST_F(RpcTest, GetStats_CountsHitsMissesAndCalls) {
  ASSERT_TRUE(client_->GetTable(Spec(16, 64)).ok());
  ASSERT_TRUE(client_->GetTable(Spec(16, 64)).ok());
  ASSERT_TRUE(client_->GetTable(Spec(16, 32)).ok());  // served by the longer
  EXPECT_FALSE(client_->GetTable(Spec(15, 64)).ok());
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->cache().misses(), 1u);
  EXPECT_EQ(stats->cache().hits(), 2u);
  EXPECT_EQ(stats->cache().computations(), 1u);
  EXPECT_EQ(stats->cache().entries(), 1u);
  EXPECT_EQ(stats->cache().resident_bytes(), 16u * 64 * 4);
  EXPECT_EQ(stats->cache().budget_bytes(), uint64_t{64} << 20);
  ASSERT_EQ(stats->methods_size(), 7);
  EXPECT_EQ(stats->methods(0).method(),
            "/posenc.v1.PositionalEncoding/GetTable");
  EXPECT_EQ(stats->methods(0).ok(), 3u);
  EXPECT_EQ(stats->methods(0).errors(), 1u);
  EXPECT_EQ(stats->methods(5).method(),
            "/posenc.v1.PositionalEncoding/GetStats");
  EXPECT_EQ(stats->methods(5).ok(), 1u);  // this GetStats
  EXPECT_EQ(stats->server().version(), "0.1.0");
  EXPECT_EQ(stats->server().max_d(), 65536u);
}

TEST_F(RpcTest, Health_ServingWhileUp) {
  absl::StatusOr<bool> serving = client_->CheckHealth();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving);
}

TEST_F(RpcTest, GetTable_OverMessageLimit_ResourceExhaustedPointingToStream) {
  ServerOptions options = DefaultOptions();
  options.max_message_bytes = 1 << 20;
  StartServer(options);
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(512, 1000));  // 2 MB
  EXPECT_EQ(table.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(table.status().message(), HasSubstr("StreamBatches"));
  EXPECT_THAT(table.status().message(),
              HasSubstr("over the limit of 1048576 bytes a message"));
  EXPECT_THAT(table.status().message(),
              HasSubstr("(posenc_server --max_message_bytes)"));
  EXPECT_TRUE(client_->GetTable(Spec(512, 500)).ok());  // exactly 1 MiB
}

struct InvalidCase {
  std::string name;
  TableSpec spec;
  absl::StatusCode code;
  std::string message;
};

class SpecValidationTest : public RpcTest,
                           public ::testing::WithParamInterface<InvalidCase> {};

TEST_P(SpecValidationTest, EveryTableRpc_ReturnsCodeNamingField) {
  const InvalidCase& c = GetParam();
  ServerOptions options = DefaultOptions();
  options.max_d = 1024;
  options.max_len_limit = 100000;
  StartServer(options);
  auto ok = [](uint32_t, const Tensor&) { return absl::OkStatus(); };
  std::vector<absl::Status> results = {
      client_->GetTable(c.spec).status(),
      client_->StreamRows(c.spec, 0, std::nullopt, ok),
      client_->StreamBatches(c.spec, 0, std::nullopt, 0, ok),
      client_->GetRows(c.spec, {0}).status()};
  for (const absl::Status& s : results) {
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
}

TableSpec With(uint32_t d, uint32_t max_len, double base = kDefaultBase,
               Frequency frequency = Frequency::kPaper) {
  return ::posenc::testing::PlainSpec(d, max_len, base, DType::kFloat32,
                                      Layout::kInterleaved, frequency);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, SpecValidationTest,
    ::testing::Values(
        InvalidCase{"OddD", With(5, 10), absl::StatusCode::kInvalidArgument,
                    "spec.d must be even (sin/cos pairs), got 5"},
        InvalidCase{"ZeroD", With(0, 10), absl::StatusCode::kInvalidArgument,
                    "spec.d is required"},
        InvalidCase{
            "DOverLimit", With(1026, 10), absl::StatusCode::kInvalidArgument,
            "spec.d is 1026, over the limit 1024 (posenc_server --max_d)"},
        InvalidCase{"T2TWithD2", With(2, 10, 1e4, Frequency::kT2T),
                    absl::StatusCode::kInvalidArgument, "FREQUENCY_T2T"},
        InvalidCase{"BaseOne", With(4, 10, 1.0),
                    absl::StatusCode::kInvalidArgument,
                    "spec.base must be finite and > 1"},
        InvalidCase{"BaseNan", With(4, 10, std::nan("")),
                    absl::StatusCode::kInvalidArgument,
                    "spec.base must be finite and > 1"},
        InvalidCase{"BaseInfinite", With(4, 10, INFINITY),
                    absl::StatusCode::kInvalidArgument,
                    "spec.base must be finite and > 1"},
        InvalidCase{"MaxLenZero", With(4, 0),
                    absl::StatusCode::kInvalidArgument,
                    "spec.max_len is required"},
        InvalidCase{"MaxLenOverLimit", With(4, 100001),
                    absl::StatusCode::kInvalidArgument,
                    "spec.max_len is 100001, over the limit 100000 "
                    "(posenc_server --max_len_limit)"}),
    [](const auto& info) { return info.param.name; });

TEST_F(RpcTest, StreamRanges_InvalidArgumentOrOutOfRange) {
  auto ok = [](uint32_t, const Tensor&) { return absl::OkStatus(); };
  absl::Status empty = client_->StreamRows(Spec(4, 10), 5, 5, ok);
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("start must be < end"));
  absl::Status past = client_->StreamBatches(Spec(4, 10), 0, 11, 0, ok);
  EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(past.message(), HasSubstr("end is 11, past spec.max_len=10"));
  absl::Status start = client_->StreamRows(Spec(4, 10), 10, std::nullopt, ok);
  EXPECT_EQ(start.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(start.message(), HasSubstr("start is 10"));
}

TEST_F(RpcTest, RowsPerBatchOverLimit_InvalidArgumentNamingLimit) {
  ServerOptions options = DefaultOptions();
  options.max_message_bytes = 1 << 20;
  StartServer(options);
  auto ok = [](uint32_t, const Tensor&) { return absl::OkStatus(); };
  absl::Status s =
      client_->StreamBatches(Spec(512, 10000), 0, std::nullopt, 513, ok);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("rows_per_batch is 513, over the limit 512"));
}

TEST_F(RpcTest, GetRows_BadPositions_OutOfRangeOrInvalidArgument) {
  ServerOptions options = DefaultOptions();
  options.max_rows_per_request = 3;
  StartServer(options);
  absl::Status past = client_->GetRows(Spec(4, 10), {1, 10}).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(past.message(),
              HasSubstr("positions[1] is 10, past spec.max_len=10"));
  absl::Status many = client_->GetRows(Spec(4, 10), {1, 2, 3, 4}).status();
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(many.message(),
              HasSubstr("positions has 4 entries, over the limit 3 "
                        "(posenc_server --max_rows_per_request)"));
  absl::Status none = client_->GetRows(Spec(4, 10), {}).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.message(), HasSubstr("positions is empty"));
}

TEST_F(RpcTest, UnknownEnumOrGarbageRequest_InvalidArgument) {
  auto channel = grpc::CreateChannel(ClientOptions().target,
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::PositionalEncoding::NewStub(channel);
  v1::GetTableRequest request;
  request.mutable_spec()->set_d(4);
  request.mutable_spec()->set_max_len(4);
  request.mutable_spec()->set_dtype(static_cast<v1::DType>(99));
  v1::GetTableResponse response;
  grpc::ClientContext context;
  grpc::Status s = stub->GetTable(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("spec.dtype 99"));

  // Bytes that are not a GetRowsRequest, sent through the generic stub.
  grpc::GenericStub generic(channel);
  grpc::ClientContext raw_context;
  const char garbage[] = "\xff\xff\xff\xff";
  grpc::Slice slice(garbage, 4);
  grpc::ByteBuffer raw_request(&slice, 1), raw_response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status raw_status;
  generic.UnaryCall(&raw_context, "/posenc.v1.PositionalEncoding/GetRows",
                    grpc::StubOptions(), &raw_request, &raw_response,
                    [&](grpc::Status status) {
                      std::lock_guard<std::mutex> lock(mu);
                      raw_status = status;
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  EXPECT_EQ(raw_status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(raw_status.error_message(), HasSubstr("GetRowsRequest"));
}

// Found by fuzz_get_table: gRPC 1.51 hands the context of a call to an
// unregistered method (its own UNIMPLEMENTED answer) to the server's
// ContextAllocator too; the allocator deleted one it had not made, and the
// first such call aborted the server ("free(): invalid pointer").
TEST_F(RpcTest, UnknownMethod_UnimplementedAndServerStaysUp) {
  auto channel = grpc::CreateChannel(ClientOptions().target,
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  for (const char* method :
       {"/posenc.v1.PositionalEncoding/NoSuchMethod", "/no.such.Service/Call",
        "/posenc.v1.PositionalEncoding/NoSuchMethod"}) {
    grpc::ClientContext context;
    grpc::Slice slice("", 0);
    grpc::ByteBuffer request(&slice, 1), response;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        std::lock_guard<std::mutex> lock(mu);
                        status = s;
                        done = true;
                        cv.notify_one();
                      });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
  }
  // The server still answers its own methods.
  absl::StatusOr<Tensor> table = client_->GetTable(Spec(4, 4));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->shape, (std::vector<uint32_t>{4, 4}));
}

}  // namespace
}  // namespace posenc::testing
