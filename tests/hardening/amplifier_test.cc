// posenc's own amplifiers (issue 21): a call whose request never arrives
// must end CANCELLED with no work and no log line, and failed calls are
// logged within a rate limit, with a count of the lines held back.
//
// With posenc's patched gRPC (third_party/grpc/patches, CVE-2023-44487), a
// call whose stream ends before its request arrives ends inside gRPC and never
// reaches posenc at all: the tests assert that posenc counted none of them,
// after a real call sent behind them on the same connection was answered
// (so they were handled first). With stock gRPC 1.51 they reach the handler,
// which ends them CANCELLED before any work (server/posenc_service.cc): then
// these tests fail on the CANCELLED counts.
//
// Every test runs the real posenc_server on 127.0.0.1 and sends raw HTTP/2
// frames (tests/hardening/raw_h2.h) or real gRPC calls; outcomes are read as
// the server saw them, from its Prometheus page, and from its log (stderr).
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <httplib.h>

#include <atomic>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"
#include "tests/hardening/raw_h2.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTableMethods[] = {"GetTable", "GetRows", "StreamRows",
                                         "StreamBatches"};

std::string MethodPath(const std::string& method) {
  return absl::StrCat("/posenc.v1.PositionalEncoding/", method);
}

std::string Scrape(int port) {
  httplib::Client http("127.0.0.1", port);
  auto result = http.Get("/metrics");
  return result && result->status == 200 ? result->body : std::string();
}

// The lines of `log` after its first `skip` bytes.
std::vector<std::string> LinesAfter(const std::string& log, size_t skip) {
  std::vector<std::string> lines;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(log).substr(skip), '\n')) {
    if (!line.empty()) lines.emplace_back(line);
  }
  return lines;
}

// A valid GetRows request body: d=4, max_len=8, positions {1}.
const std::string kGetRowsRequest("\x0a\x04\x08\x04\x18\x08\x12\x01\x01", 9);
const std::string& kFollowUpRequest = kGetRowsRequest;

class AmplifierTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    flags.push_back("--metrics_listen=127.0.0.1:0");
    flags.push_back("--threads=2");
    flags.push_back("--cache_bytes=8388608");
    server_ = std::make_unique<ServerProcess>(flags, "amplifier");
    ASSERT_NE(server_->port(), 0) << server_->process().Stderr();
    ASSERT_NE(server_->metrics_port(), 0) << server_->process().Stderr();
    log_start_ = server_->process().Stderr().size();
  }
  void SetUp() override { Start(); }

  double Metric(const std::string& series) {
    return MetricValue(Scrape(server_->metrics_port()), series);
  }
  double Requests(const std::string& method, const std::string& code) {
    return std::max(
        0.0, Metric(absl::StrCat("posenc_requests_total{method=\"", method,
                                 "\",code=\"", code, "\"}")));
  }
  // Waits (at most 10 s) until the server counts `want` calls of `method`
  // ending `code`; returns the count then.
  double WaitRequests(const std::string& method, const std::string& code,
                      double want) {
    double got = 0;
    for (int i = 0; i < 500; ++i) {
      got = Requests(method, code);
      if (got >= want) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return got;
  }
  // Sends a valid GetRows on `stream` of `h2` (behind the streams under
  // test) and waits for the server to answer and count it: the streams sent
  // before it on the same connection have been handled by then.
  void ExpectFollowUpCallServed(RawH2Client& h2, uint32_t stream) {
    std::string out;
    RawH2Client::AppendHeaders(
        out, stream, RawH2Client::GrpcRequest(MethodPath("GetRows")), false);
    RawH2Client::AppendGrpcMessage(out, stream, kFollowUpRequest, true);
    ASSERT_TRUE(h2.Send(out));
    EXPECT_EQ(h2.WaitStreamEnd(stream, absl::Seconds(10)),
              RawH2Client::StreamEnd::kEndStream);
    EXPECT_EQ(WaitRequests("GetRows", "OK", 1), 1);
  }
  // None of the calls under test reached posenc: not one table call was
  // counted, with any status but the follow-up's OK.
  void ExpectNoneReachedPosenc() {
    for (const char* method : kTableMethods) {
      EXPECT_EQ(Requests(method, "CANCELLED"), 0) << method;
    }
    ExpectOnlyCancelled();
  }
  // Lines the server logged since Start.
  std::vector<std::string> NewLogLines() {
    return LinesAfter(server_->process().Stderr(), log_start_);
  }
  // Asserts the server did no table work but the follow-up call's (one
  // cache lookup, and at most one computation of its table or its row).
  void ExpectNoTableWork() {
    const std::string page = Scrape(server_->metrics_port());
    EXPECT_EQ(MetricValue(page, "posenc_cache_hits_total") +
                  MetricValue(page, "posenc_cache_misses_total"),
              1);
    EXPECT_LE(MetricValue(page, "posenc_cache_computations_total") +
                  MetricValue(page, "posenc_rows_computed_outside_cache_total"),
              1);
  }
  // None of the calls under test reached posenc or did table work (but the
  // follow-up call), and the server logged nothing.
  void ExpectNoTraceButTheFollowUp() {
    ExpectNoneReachedPosenc();
    ExpectNoTableWork();
    EXPECT_THAT(NewLogLines(), ::testing::IsEmpty());
  }
  // The follow-up call on `stream` of `h2` served, then
  // ExpectNoTraceButTheFollowUp.
  void ExpectServedOnlyTheFollowUp(RawH2Client& h2, uint32_t stream) {
    ExpectFollowUpCallServed(h2, stream);
    ExpectNoTraceButTheFollowUp();
  }
  // No status but CANCELLED (and OK) was counted for any table method.
  void ExpectOnlyCancelled() {
    const std::string page = Scrape(server_->metrics_port());
    for (const char* method : kTableMethods) {
      for (const char* code : {"INVALID_ARGUMENT", "OUT_OF_RANGE",
                               "RESOURCE_EXHAUSTED", "INTERNAL", "UNKNOWN"}) {
        EXPECT_LE(
            MetricValue(page, absl::StrCat("posenc_requests_total{"
                                           "method=\"",
                                           method, "\",code=\"", code, "\"}")),
            0)
            << method << " " << code;
      }
    }
  }

  std::unique_ptr<ServerProcess> server_;
  size_t log_start_ = 0;
};

// HEADERS, then RST_STREAM before any DATA: in one write (the rapid-reset
// pattern) and in two, for every table method. gRPC 1.51 still runs the
// handler (with no request); posenc ends the call CANCELLED, with no cache
// lookup, no error text and no log line.
TEST_F(AmplifierTest, ResetBeforeData_EndsCancelledWithoutWorkOrLogLine) {
  RawH2Client h2(server_->port());
  ASSERT_TRUE(h2.connected());
  uint32_t stream = 1;
  for (const char* method : kTableMethods) {
    for (bool one_write : {true, false}) {
      std::string out;
      RawH2Client::AppendHeaders(
          out, stream, RawH2Client::GrpcRequest(MethodPath(method)), false);
      if (!one_write) {
        ASSERT_TRUE(h2.Send(out));
        out.clear();
        absl::SleepFor(absl::Milliseconds(50));  // the server has the stream
      }
      RawH2Client::AppendRstStream(out, stream);
      ASSERT_TRUE(h2.Send(out));
      stream += 2;
    }
  }
  // HEADERS, a whole request and RST_STREAM in one write: the reset stream
  // drops the message before the handler runs.
  std::string out;
  RawH2Client::AppendHeaders(
      out, stream, RawH2Client::GrpcRequest(MethodPath("GetRows")), false);
  RawH2Client::AppendGrpcMessage(out, stream, kGetRowsRequest, true);
  RawH2Client::AppendRstStream(out, stream);
  ASSERT_TRUE(h2.Send(out));
  ExpectServedOnlyTheFollowUp(h2, stream + 2);
  // The connection still serves a real call.
  PosencClient client(ClientTo(server_->target()));
  ExpectStillServing(client);
}

// HEADERS with END_STREAM and no message: the client still waits for an
// answer; it gets CANCELLED (the server counts it so), and nothing is logged.
TEST_F(AmplifierTest, HalfClosedWithoutMessage_EndsCancelledWithoutLogLine) {
  RawH2Client h2(server_->port());
  ASSERT_TRUE(h2.connected());
  uint32_t stream = 1;
  for (const char* method : kTableMethods) {
    std::string out;
    RawH2Client::AppendHeaders(
        out, stream, RawH2Client::GrpcRequest(MethodPath(method)), true);
    ASSERT_TRUE(h2.Send(out));
    EXPECT_NE(h2.WaitStreamEnd(stream, absl::Seconds(10)),
              RawH2Client::StreamEnd::kOpen)
        << method;
    stream += 2;
  }
  ExpectServedOnlyTheFollowUp(h2, stream);
}

// The same from a real gRPC client: a streaming call on the generic API,
// half-closed (WritesDone) without a message. Every method answers CANCELLED
// (GetStats too: the patched gRPC ends the call before any handler; stock
// 1.51 answered UNIMPLEMENTED for typed GetStats).
TEST_F(AmplifierTest, HalfClosedByGrpcClient_SeesCancelled) {
  auto channel = grpc::CreateChannel(server_->target(),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  auto half_closed_call = [&](const std::string& method) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    auto call = stub.PrepareCall(&context, MethodPath(method), &cq);
    void* tag;
    bool ok;
    auto next = [&] {
      return cq.AsyncNext(
                 &tag, &ok,
                 std::chrono::system_clock::now() + std::chrono::seconds(10)) ==
             grpc::CompletionQueue::GOT_EVENT;
    };
    call->StartCall(nullptr);
    EXPECT_TRUE(next());
    call->WritesDone(nullptr);
    EXPECT_TRUE(next());
    grpc::Status status;
    call->Finish(&status, nullptr);
    EXPECT_TRUE(next());
    return status.error_code();
  };
  for (const char* method : kTableMethods) {
    EXPECT_EQ(half_closed_call(method), grpc::StatusCode::CANCELLED) << method;
  }
  EXPECT_EQ(half_closed_call("GetStats"), grpc::StatusCode::CANCELLED);
  PosencClient client(ClientTo(server_->target()));
  ExpectStillServing(client);  // the follow-up call
  ExpectNoneReachedPosenc();
  ExpectNoTableWork();
  EXPECT_EQ(Requests("GetStats", "OK"), 0);
  EXPECT_THAT(NewLogLines(), ::testing::IsEmpty());
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

// HEADERS with a 200 ms grpc-timeout and no message: the server's deadline
// passes first; the call ends CANCELLED, with no log line.
TEST_F(AmplifierTest, DeadlineBeforeMessage_EndsCancelledWithoutLogLine) {
  RawH2Client h2(server_->port());
  ASSERT_TRUE(h2.connected());
  uint32_t stream = 1;
  for (const char* method : kTableMethods) {
    std::string out;
    RawH2Client::AppendHeaders(
        out, stream,
        RawH2Client::GrpcRequest(MethodPath(method),
                                 {{"grpc-timeout", "200m"}}),
        false);
    ASSERT_TRUE(h2.Send(out));
    stream += 2;
  }
  for (uint32_t sent = 1; sent < stream; sent += 2) {
    EXPECT_NE(h2.WaitStreamEnd(sent, absl::Seconds(10)),
              RawH2Client::StreamEnd::kOpen);
  }
  ExpectServedOnlyTheFollowUp(h2, stream);
}

// A real gRPC client whose deadline passes before it writes its request:
// gRPC sends the HEADERS, then cancels the stream at the deadline.
TEST_F(AmplifierTest, ClientDeadlineBeforeWrite_EndsCancelledWithoutLogLine) {
  auto channel = grpc::CreateChannel(server_->target(),
                                     grpc::InsecureChannelCredentials());
  ASSERT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() +
                                        std::chrono::seconds(10)));
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  constexpr int kCalls = 8;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::GenericClientAsyncReaderWriter>> calls;
  for (int i = 0; i < kCalls; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(std::chrono::system_clock::now() +
                                  std::chrono::milliseconds(300));
    calls.push_back(
        stub.PrepareCall(contexts.back().get(), MethodPath("GetRows"), &cq));
    calls.back()->StartCall(reinterpret_cast<void*>(i));
  }
  // Each call's start completes; then nothing is written until the deadline.
  for (int i = 0; i < kCalls; ++i) {
    void* tag;
    bool ok;
    ASSERT_EQ(cq.AsyncNext(
                  &tag, &ok,
                  std::chrono::system_clock::now() + std::chrono::seconds(10)),
              grpc::CompletionQueue::GOT_EVENT);
  }
  std::vector<grpc::Status> statuses(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    calls[i]->Finish(&statuses[i], reinterpret_cast<void*>(100 + i));
  }
  for (int i = 0; i < kCalls; ++i) {
    void* tag;
    bool ok;
    ASSERT_EQ(cq.AsyncNext(
                  &tag, &ok,
                  std::chrono::system_clock::now() + std::chrono::seconds(10)),
              grpc::CompletionQueue::GOT_EVENT);
  }
  for (const grpc::Status& status : statuses) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  // A call on the same channel, after the deadlines: answered and counted.
  PosencClient client(ClientTo(server_->target()));
  ExpectStillServing(client);
  EXPECT_GE(WaitRequests("GetTable", "OK", 1), 1);
  ExpectNoTraceButTheFollowUp();
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

// A message that did arrive, but is empty, is a real client error: it stays
// INVALID_ARGUMENT and is logged.
TEST_F(AmplifierTest, EmptyMessage_StaysInvalidArgumentAndLogged) {
  RawH2Client h2(server_->port());
  ASSERT_TRUE(h2.connected());
  std::string out;
  RawH2Client::AppendHeaders(
      out, 1, RawH2Client::GrpcRequest(MethodPath("GetRows")), false);
  RawH2Client::AppendGrpcMessage(out, 1, "", true);
  ASSERT_TRUE(h2.Send(out));
  EXPECT_EQ(h2.WaitStreamEnd(1, absl::Seconds(10)),
            RawH2Client::StreamEnd::kEndStream);
  EXPECT_EQ(WaitRequests("GetRows", "INVALID_ARGUMENT", 1), 1);
  EXPECT_EQ(Requests("GetRows", "CANCELLED"), 0);
  std::vector<std::string> lines;
  for (int i = 0; i < 100 && lines.empty(); ++i) {
    lines = NewLogLines();
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("WARN /posenc.v1.PositionalEncoding/GetRows "
                                  "-> INVALID_ARGUMENT: spec.d is required"));
}

// 10,000 calls that fail for real (INVALID_ARGUMENT), from 4 threads: at
// most --failure_log_lines_per_second lines per second (plus one second's
// worth of slack at each end), and "suppressed K" lines whose K add up with
// the logged lines to exactly the 10,000 failures.
TEST_F(AmplifierTest, FailureFlood_LogsAtMostTheLimitPlusSuppressedCount) {
  constexpr int kLimit = 5;
  Start({absl::StrCat("--failure_log_lines_per_second=", kLimit)});
  constexpr int kThreads = 4, kCallsPerThread = 2500;
  constexpr int kCalls = kThreads * kCallsPerThread;
  PosencClient client(ClientTo(server_->target()));
  const absl::Time start = absl::Now();
  std::atomic<int> unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        if (client.GetTable(MakeSpec(3, 4)).status().code() !=
            absl::StatusCode::kInvalidArgument) {
          unexpected.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(WaitRequests("GetTable", "INVALID_ARGUMENT", kCalls), kCalls);

  // Lines of failed calls, and the sum of the suppressed counts; the last
  // summary comes within a second or two of the flood's end.
  const std::regex suppressed_re(
      R"(WARN suppressed (\d+) failed-call log lines in the last [0-9.]+ s)");
  int failure_lines = 0, summaries = 0;
  int64_t suppressed = 0;
  std::vector<std::string> other_lines;
  for (int i = 0; i < 250; ++i) {
    failure_lines = summaries = 0;
    suppressed = 0;
    other_lines.clear();
    for (const std::string& line : NewLogLines()) {
      std::smatch m;
      if (std::regex_search(line, m, suppressed_re)) {
        ++summaries;
        suppressed += std::stoll(m[1]);
      } else if (line.find("GetTable -> INVALID_ARGUMENT: spec.d must be "
                           "even") != std::string::npos) {
        ++failure_lines;
      } else {
        other_lines.push_back(line);
      }
    }
    if (failure_lines + suppressed >= kCalls) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT(other_lines, ::testing::IsEmpty());
  EXPECT_EQ(failure_lines + suppressed, kCalls);
  EXPECT_GE(failure_lines, kLimit);  // the first second's lines at least
  EXPECT_LE(failure_lines, kLimit * (static_cast<int>(seconds) + 2))
      << "in " << seconds << " s";
  // One summary a second at most, from the flood's first second to the
  // one after it.
  EXPECT_GE(summaries, 1);
  EXPECT_LE(summaries, static_cast<int>(seconds) + 3);
  ExpectStillServing(client);
}

}  // namespace
}  // namespace posenc::testing
