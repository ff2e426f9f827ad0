// The gRPC transport knobs of ServerOptions take effect on the real
// posenc_server: metadata size, ping strikes, connection idle and age,
// handshake timeout, the thread quota of the synchronous services; and a bad
// value of each flag is refused with a message naming the flag.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"
#include "tests/hardening/raw_h2.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

const std::string kGetRows = "/posenc.v1.PositionalEncoding/GetRows";
// A valid GetRows request body: d=4, max_len=8, positions {1}.
const std::string kGetRowsRequest("\x0a\x04\x08\x04\x18\x08\x12\x01\x01", 9);

std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags) {
  flags.push_back("--metrics_listen=127.0.0.1:0");
  flags.push_back("--threads=2");
  flags.push_back("--cache_bytes=8388608");
  auto server = std::make_unique<ServerProcess>(flags, "knobs");
  EXPECT_NE(server->port(), 0) << server->process().Stderr();
  return server;
}

double GetRowsOk(const ServerProcess& server) {
  httplib::Client http("127.0.0.1", server.metrics_port());
  auto result = http.Get("/metrics");
  if (!result) return -1;
  return MetricValue(result->body,
                     R"(posenc_requests_total{method="GetRows",code="OK"})");
}

// One GetRows over raw HTTP/2 with an extra header of `pad_bytes` bytes;
// returns how the server ended the stream and whether it sent a message.
std::pair<RawH2Client::StreamEnd, bool> GetRowsWithPadding(int port,
                                                           size_t pad_bytes) {
  RawH2Client h2(port);
  EXPECT_TRUE(h2.connected());
  // Stock gRPC 1.51 checks the limit it advertised only once the client
  // has acknowledged it (before that, HTTP/2's default of 16 MiB holds); the
  // patched gRPC at once. After the acknowledgement both must refuse.
  EXPECT_TRUE(h2.WaitSettingsAcked(absl::Seconds(10)));
  std::string out;
  RawH2Client::AppendHeaders(
      out, 1,
      RawH2Client::GrpcRequest(kGetRows,
                               {{"x-padding", std::string(pad_bytes, 'p')}}),
      false);
  RawH2Client::AppendGrpcMessage(out, 1, kGetRowsRequest, true);
  h2.Send(out);
  const RawH2Client::StreamEnd end = h2.WaitStreamEnd(1, absl::Seconds(10));
  return {end, h2.GotData(1)};
}

TEST(GrpcKnobsTest, OversizedMetadata_RefusedBeforeTheHandler) {
  auto server = StartServer({"--max_metadata_bytes=4096"});
  // Under the limit: answered.
  auto [small_end, small_data] = GetRowsWithPadding(server->port(), 2000);
  EXPECT_EQ(small_end, RawH2Client::StreamEnd::kEndStream);
  EXPECT_TRUE(small_data);
  EXPECT_EQ(GetRowsOk(*server), 1);
  // Over it (still under gRPC's default of 8 KiB): the stream is ended
  // without an answer and posenc's handler never runs.
  auto [big_end, big_data] = GetRowsWithPadding(server->port(), 6000);
  EXPECT_NE(big_end, RawH2Client::StreamEnd::kOpen);
  EXPECT_FALSE(big_data);
  EXPECT_EQ(GetRowsOk(*server), 1);
  PosencClient client(ClientTo(server->target()));
  ExpectStillServing(client);
}

TEST(GrpcKnobsTest, IdleConnection_GoAwayAfterMaxIdle) {
  auto server = StartServer({"--max_connection_idle_seconds=0.3"});
  RawH2Client h2(server->port());
  ASSERT_TRUE(h2.connected());
  const absl::Time start = absl::Now();
  const std::optional<uint32_t> goaway = h2.WaitGoAway(absl::Seconds(10));
  // (gRPC 1.51 closes an idle connection with error code INTERNAL_ERROR;
  // no call is affected, and clients reconnect on their next call.)
  ASSERT_TRUE(goaway.has_value());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(h2.WaitClosed(absl::Seconds(10)));
}

TEST(GrpcKnobsTest, DefaultIdleLimit_IdleConnectionStaysOpenForSeconds) {
  auto server = StartServer({});
  RawH2Client h2(server->port());
  ASSERT_TRUE(h2.connected());
  EXPECT_FALSE(h2.WaitGoAway(absl::Seconds(1.5)).has_value());
}

// A connection past its age gets GOAWAY even with a call open on it, and is
// closed after the grace period.
TEST(GrpcKnobsTest, OldConnection_GoAwayAfterMaxAgeThenClosedAfterGrace) {
  auto server = StartServer({"--max_connection_age_seconds=0.3",
                             "--max_connection_age_grace_seconds=0.5"});
  RawH2Client h2(server->port());
  ASSERT_TRUE(h2.connected());
  std::string out;
  // A call whose request never comes keeps the connection busy.
  RawH2Client::AppendHeaders(out, 1, RawH2Client::GrpcRequest(kGetRows), false);
  ASSERT_TRUE(h2.Send(out));
  const std::optional<uint32_t> goaway = h2.WaitGoAway(absl::Seconds(10));
  ASSERT_TRUE(goaway.has_value());
  EXPECT_TRUE(h2.WaitClosed(absl::Seconds(10)));
}

// Sends PINGs 0..n-1 one by one until a send fails; returns how many went.
uint64_t SendPings(RawH2Client& h2, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    std::string out;
    RawH2Client::AppendPing(out, i);
    if (!h2.Send(out)) return i;
  }
  return n;
}

// PINGs without data: the third strike past --max_ping_strikes=2 gets
// GOAWAY ENHANCE_YOUR_CALM and the connection is closed.
TEST(GrpcKnobsTest, PingFlood_GoAwayEnhanceYourCalm) {
  auto server = StartServer({});
  RawH2Client h2(server->port());
  ASSERT_TRUE(h2.connected());
  absl::SleepFor(absl::Milliseconds(100));
  SendPings(h2, 10);  // stops early once the connection is closed
  const std::optional<uint32_t> goaway = h2.WaitGoAway(absl::Seconds(10));
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(*goaway, RawH2Client::kEnhanceYourCalm);
  EXPECT_TRUE(h2.WaitClosed(absl::Seconds(10)));
}

TEST(GrpcKnobsTest, RaisedPingStrikes_SamePingsTolerated) {
  auto server = StartServer({"--max_ping_strikes=1000"});
  RawH2Client h2(server->port());
  ASSERT_TRUE(h2.connected());
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_EQ(SendPings(h2, 10), 10u);
  EXPECT_FALSE(h2.WaitGoAway(absl::Seconds(1)).has_value());
}

// A TCP connection that never sends the HTTP/2 preface is closed after
// --handshake_timeout_seconds.
TEST(GrpcKnobsTest, SilentConnection_ClosedAfterHandshakeTimeout) {
  auto server = StartServer({"--handshake_timeout_seconds=0.5"});
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const absl::Time start = absl::Now();
  bool closed = false;
  while (!closed && absl::Now() - start < absl::Seconds(10)) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[256];
      closed = recv(fd, buf, sizeof(buf), 0) <= 0;
    }
  }
  close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

// Reflection is a synchronous service: each open call holds one of gRPC's
// threads. Past --grpc_max_threads a new one is refused RESOURCE_EXHAUSTED.
TEST(GrpcKnobsTest, ReflectionStreams_PastMaxThreadsResourceExhausted) {
  auto server = StartServer({"--grpc_max_threads=3"});
  auto channel =
      grpc::CreateChannel(server->target(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  auto wait = [&](void* want) {
    void* tag = nullptr;
    bool ok = false;
    EXPECT_EQ(cq.AsyncNext(
                  &tag, &ok,
                  std::chrono::system_clock::now() + std::chrono::seconds(10)),
              grpc::CompletionQueue::GOT_EVENT);
    EXPECT_EQ(tag, want);
    return ok;
  };
  // ServerReflectionRequest{list_services: ""}.
  const std::string list_services("\x3a\x00", 2);
  struct Call {
    grpc::ClientContext context;
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream;
    grpc::ByteBuffer response;
  };
  std::vector<std::unique_ptr<Call>> calls;
  int served = 0;
  grpc::Status refused;
  for (int i = 0; i < 6 && refused.ok(); ++i) {
    calls.push_back(std::make_unique<Call>());
    Call& call = *calls.back();
    call.stream = stub.PrepareCall(
        &call.context,
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
    call.stream->StartCall(&call);
    ASSERT_TRUE(wait(&call));
    grpc::Slice slice(list_services);
    grpc::ByteBuffer request(&slice, 1);
    call.stream->Write(request, &call);
    wait(&call);
    call.stream->Read(&call.response, &call);
    if (wait(&call)) {
      ++served;  // the stream stays open, holding its thread
    } else {
      call.stream->Finish(&refused, &call);
      wait(&call);
      EXPECT_FALSE(refused.ok());
    }
  }
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_GE(served, 1);
  EXPECT_LE(served, 3);
  for (auto& call : calls) call->context.TryCancel();
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

TEST(GrpcKnobsTest, InvalidFlagValues_RefusedNamingTheFlag) {
  const std::pair<const char*, const char*> cases[] = {
      {"--max_metadata_bytes=100",
       "--max_metadata_bytes must be 1024..1048576"},
      {"--max_ping_strikes=0", "--max_ping_strikes must be 1..1000"},
      {"--min_ping_interval_seconds=0",
       "--min_ping_interval_seconds must be 1..86400 seconds"},
      {"--max_connection_idle_seconds=-1",
       "--max_connection_idle_seconds must be 0 (off) or 0.001..2147483"},
      {"--max_connection_age_seconds=nan",
       "--max_connection_age_seconds must be 0 (off) or"},
      {"--max_connection_age_grace_seconds=-5",
       "--max_connection_age_grace_seconds must be 0..2147483 seconds"},
      {"--handshake_timeout_seconds=0",
       "--handshake_timeout_seconds must be 0.1..3600 seconds"},
      {"--grpc_max_threads=1", "--grpc_max_threads must be 2..1024, got 1"},
      {"--failure_log_lines_per_second=2000000",
       "--failure_log_lines_per_second must be 0..1000000"},
      {"--max_concurrent_streams=0",
       "--max_concurrent_streams must be 1..2147483647, got 0"},
  };
  for (const auto& [flag, message] : cases) {
    Subprocess server({POSENC_SERVER_PATH, flag}, TestTempPath("invalid.out"),
                      TestTempPath("invalid.err"));
    EXPECT_EQ(server.Wait(absl::Seconds(10)), 2) << flag;
    EXPECT_THAT(server.Stderr(), HasSubstr(message)) << flag;
  }
}

}  // namespace
}  // namespace posenc::testing
