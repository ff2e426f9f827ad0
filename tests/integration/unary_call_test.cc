// UnaryCall (server/unary_call.h) against a real server on 127.0.0.1: a
// unary call's bookkeeping, now held in its context (CallContextAllocator)
// beside gRPC's DefaultReactor, still echoes the routing key, counts the
// call once, and ends when gRPC is done with the call, so a drain after
// unary calls of every outcome has nothing left to wait for.
#include "server/unary_call.h"

#include <grpcpp/client_context.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "convert/proto_conversion.h"
#include "convert/routing_key.h"
#include "gtest/gtest.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

class UnaryCallTest : public ServerTest {};

std::string EchoedKey(const grpc::ClientContext& context) {
  const auto& metadata = context.GetServerInitialMetadata();
  auto it = metadata.find(kRoutingKeyHeader);
  return it == metadata.end()
             ? "(none)"
             : std::string(it->second.data(), it->second.size());
}

TEST_F(UnaryCallTest, RoutingKey_EchoedOnSuccessAndOnError) {
  auto stub = v1::PositionalEncoding::NewStub(client_->channel());
  v1::GetTableRequest request;
  *request.mutable_spec() = SpecToProto(Spec(8, 16));
  {
    grpc::ClientContext context;
    context.AddMetadata(kRoutingKeyHeader, "d8-len16");
    v1::GetTableResponse response;
    grpc::Status status = stub->GetTable(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(EchoedKey(context), "d8-len16");
  }
  {
    grpc::ClientContext context;
    context.AddMetadata(kRoutingKeyHeader, "odd-d");
    request.mutable_spec()->set_d(7);  // odd: INVALID_ARGUMENT
    v1::GetTableResponse response;
    grpc::Status status = stub->GetTable(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(EchoedKey(context), "odd-d");
  }
  {
    grpc::ClientContext context;  // no key: none echoed
    v1::GetStatsResponse response;
    ASSERT_TRUE(
        stub->GetStats(&context, v1::GetStatsRequest(), &response).ok());
    EXPECT_EQ(EchoedKey(context), "(none)");
    EXPECT_EQ(response.methods(0).ok(), 1u);  // the GetTable
    EXPECT_EQ(response.methods(0).errors(), 1u);
  }
}

TEST_F(UnaryCallTest, EveryOutcomeEnded_DrainDoesNotWaitForTheGrace) {
  ServerOptions options = DefaultOptions();
  options.lame_duck_seconds = 0;
  options.grace_seconds = 30;  // a call left counted would hold the drain
  StartServer(options);
  // Hits, misses computed whole and per call, errors, and every unary
  // method.
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(client_->GetTable(Spec(16, 64)).ok());
    EXPECT_TRUE(client_->GetRows(Spec(32, 100000 + i), {1, 2, 3}).ok());
    EXPECT_EQ(client_->GetRows(Spec(16, 64), {64}).status().code(),
              absl::StatusCode::kOutOfRange);
    EXPECT_TRUE(client_->GetStats().ok());
  }
  EncodingSpec real;
  real.dim = 8;
  EXPECT_TRUE(client_->Encode(real, {0.5, 1.5}).ok());
  client_.reset();  // no idle connection either
  const absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

}  // namespace
}  // namespace posenc::testing
