// Observability: the Prometheus page on --metrics_listen (validated by
// Debian's `promtool check metrics` against a live scrape), channelz, and an
// audit that the server's log never carries table payloads.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <httplib.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Scrape(int port, int* status = nullptr) {
  httplib::Client http("127.0.0.1", port);
  auto result = http.Get("/metrics");
  if (status != nullptr) *status = result ? result->status : -1;
  return result ? result->body : std::string();
}

// Runs `promtool check metrics` on `page`; returns its exit code and output.
std::pair<int, std::string> Promtool(const std::string& page) {
  const std::string in = TestTempPath("metrics.txt");
  const std::string out = TestTempPath("promtool.txt");
  std::ofstream(in) << page;
  const int rc = std::system(
      absl::StrCat("promtool check metrics < '", in, "' > '", out, "' 2>&1")
          .c_str());
  std::ifstream o(out);
  std::stringstream text;
  text << o.rdbuf();
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text.str()};
}

grpc::Status RawUnary(const std::string& target, const std::string& method) {
  auto channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status result;
  generic.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                    [&](grpc::Status status) {
                      std::lock_guard<std::mutex> lock(mu);
                      result = status;
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return result;
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--metrics_listen=127.0.0.1:0", "--channelz",
                                 "--cache_bytes=1048576", "--threads=2"},
        "metrics-server");
    ASSERT_NE(server_->port(), 0) << server_->process().Stderr();
    ASSERT_NE(server_->metrics_port(), 0) << server_->process().Stderr();
    client_ = std::make_unique<PosencClient>(ClientTo(server_->target()));
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<PosencClient> client_;
};

TEST_F(MetricsTest, LiveScrape_PassesPromtoolAndCountsCalls) {
  // Calls of every kind and outcome.
  ExpectStillServing(*client_);                                  // 1 OK
  EXPECT_FALSE(client_->GetTable(MakeSpec(3, 4)).ok());          // INVALID
  EXPECT_TRUE(client_->GetRows(MakeSpec(4, 100), {1, 2}).ok());  // OK
  EXPECT_EQ(client_->GetRows(MakeSpec(4, 100), {100}).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(client_
                  ->StreamBatches(
                      MakeSpec(8, 64), 0, std::nullopt, 16,
                      [](uint32_t, const Tensor&) { return absl::OkStatus(); })
                  .ok());
  EXPECT_TRUE(
      client_
          ->StreamRows(MakeSpec(8, 64), 0, 3,
                       [](uint32_t, const Tensor&) { return absl::OkStatus(); })
          .ok());
  // Evictions: two 768 KiB tables cannot both fit a 1 MiB cache.
  EXPECT_TRUE(client_->GetTable(MakeSpec(256, 768)).ok());
  EXPECT_TRUE(client_->GetTable(MakeSpec(256, 769)).ok());
  ASSERT_TRUE(client_->GetStats().ok());

  int http_status = 0;
  const std::string page = Scrape(server_->metrics_port(), &http_status);
  EXPECT_EQ(http_status, 200);
  auto [rc, promtool] = Promtool(page);
  EXPECT_EQ(rc, 0) << promtool << "\n" << page;
  EXPECT_EQ(promtool, "") << "promtool lint findings";

  auto value = [&](const std::string& series) {
    return MetricValue(page, series);
  };
  EXPECT_EQ(value(R"(posenc_requests_total{method="GetTable",code="OK"})"), 3);
  EXPECT_EQ(
      value(
          R"(posenc_requests_total{method="GetTable",code="INVALID_ARGUMENT"})"),
      1);
  EXPECT_EQ(
      value(R"(posenc_requests_total{method="GetRows",code="OUT_OF_RANGE"})"),
      1);
  EXPECT_EQ(value(R"(posenc_requests_total{method="StreamBatches",code="OK"})"),
            1);
  EXPECT_EQ(value(R"(posenc_requests_total{method="StreamRows",code="OK"})"),
            1);
  EXPECT_EQ(value(R"(posenc_requests_total{method="GetStats",code="OK"})"), 1);
  EXPECT_EQ(
      value(R"(posenc_request_duration_seconds_count{method="GetTable"})"), 4);
  EXPECT_EQ(
      value(
          R"(posenc_request_duration_seconds_bucket{method="GetTable",le="+Inf"})"),
      4);
  EXPECT_GT(value(R"(posenc_request_duration_seconds_sum{method="GetTable"})"),
            0);
  // 4x4 float32 = 64 bytes of table plus the message framing, and more.
  EXPECT_GT(value(R"(posenc_response_bytes_total{method="GetTable"})"),
            2 * 256 * 768 * 4);
  EXPECT_EQ(value(R"(posenc_response_bytes_total{method="StreamBatches"})") >
                8 * 64 * 4,
            true);
  EXPECT_EQ(value("posenc_inflight_streams"), 0);
  EXPECT_EQ(value(R"(posenc_inflight_calls{method="GetTable"})"), 0);
  EXPECT_EQ(value("posenc_cache_budget_bytes"), 1048576);
  EXPECT_GE(value("posenc_cache_evictions_total"), 1);
  EXPECT_GE(value("posenc_cache_computations_total"), 4);
  EXPECT_GE(value("posenc_cache_hits_total"), 0);
  EXPECT_GE(value("posenc_cache_misses_total"), 4);
  EXPECT_GE(value("posenc_cache_entries"), 1);
  EXPECT_GT(value("posenc_cache_resident_bytes"), 0);
  EXPECT_LE(value("posenc_cache_resident_bytes"), 1048576);
  EXPECT_GT(value("process_resident_memory_bytes"), 1 << 20);
  EXPECT_THAT(page, HasSubstr("posenc_build_info{version=\""));
  // Served by prometheus-cpp's Exposer, which counts its own scrapes.
  EXPECT_THAT(page, HasSubstr("# TYPE exposer_scrapes_total counter"));

  httplib::Client http("127.0.0.1", server_->metrics_port());
  auto other = http.Get("/");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  ExpectStillServing(*client_);
}

TEST_F(MetricsTest, InflightStreamGaugeSeesOpenStream) {
  grpc::ClientContext context;
  auto stub = v1::PositionalEncoding::NewStub(client_->channel());
  v1::StreamRowsRequest request;
  request.mutable_spec()->set_d(64);
  request.mutable_spec()->set_max_len(1000000);
  auto reader = stub->StreamRows(&context, request);
  v1::StreamRowsResponse response;
  ASSERT_TRUE(reader->Read(&response)) << reader->Finish().error_message();
  const std::string page = Scrape(server_->metrics_port());
  EXPECT_EQ(MetricValue(page, "posenc_inflight_streams"), 1);
  EXPECT_EQ(MetricValue(page, R"(posenc_inflight_calls{method="StreamRows"})"),
            1);
  context.TryCancel();
  reader->Finish();
  ExpectStillServing(*client_);
}

TEST_F(MetricsTest, Channelz_ServedOnlyWithTheFlag) {
  EXPECT_TRUE(
      RawUnary(server_->target(), "/grpc.channelz.v1.Channelz/GetServers")
          .ok());
  ServerProcess plain({}, "no-channelz");
  ASSERT_NE(plain.port(), 0);
  EXPECT_EQ(RawUnary(plain.target(), "/grpc.channelz.v1.Channelz/GetServers")
                .error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(MetricsTest, MetricsPortInUse_ServerExitsTwo) {
  Subprocess second(
      {POSENC_SERVER_PATH, "--listen=127.0.0.1:0",
       absl::StrCat("--metrics_listen=127.0.0.1:", server_->metrics_port())},
      TestTempPath("busy.out"), TestTempPath("busy.err"));
  EXPECT_EQ(second.Wait(absl::Seconds(10)), 2);
  EXPECT_THAT(second.Stderr(), HasSubstr("for metrics"));
}

// The log carries one line per event: start-up, failed calls (whose status
// may quote the offending field values, like "d is 3"), shutdown. It never
// carries a table: no value of any served row appears, in text or binary.
TEST_F(MetricsTest, LogNeverContainsTablePayloads) {
  const TableSpec spec = MakeSpec(8, 16);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(client_->GetRows(spec, {3, 5, 7}).ok());
  ASSERT_TRUE(
      client_
          ->StreamRows(spec, 0, std::nullopt,
                       [](uint32_t, const Tensor&) { return absl::OkStatus(); })
          .ok());
  // Failures are logged with their status.
  EXPECT_FALSE(client_->GetTable(MakeSpec(3, 4)).ok());
  EXPECT_FALSE(client_->GetRows(spec, {16}).ok());
  server_->process().Signal(SIGTERM);
  ASSERT_EQ(server_->process().Wait(absl::Seconds(20)), 0);
  const std::string log = server_->process().Stderr();
  EXPECT_THAT(log, HasSubstr("spec.d must be even"));
  EXPECT_THAT(log, HasSubstr("positions[0] is 16"));
  // ...with the method and the routing key the client sent.
  EXPECT_THAT(log, HasSubstr("/posenc.v1.PositionalEncoding/GetRows -> "));
  EXPECT_THAT(log, HasSubstr("x-posenc-table=d=8;"));

  // Every line is a posenc log line or a gRPC library line.
  const std::regex line_re(
      R"(^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARN|ERROR) .*|[EWID]\d{4} .*)$)");
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(std::regex_match(std::string(line), line_re)) << line;
  }
  // No table value, printed with 4 significant digits or more...
  for (size_t k = 0; k < table->size(); ++k) {
    const double v = table->ValueAt(k);
    if (v == 0 || v == 1 || v == -1) continue;
    for (const std::string& text :
         {absl::StrFormat("%.4f", v), absl::StrFormat("%.6g", v)}) {
      if (text.size() >= 6) {
        EXPECT_THAT(log, Not(HasSubstr(text)));
      }
    }
  }
  // ...nor any row's raw bytes.
  for (uint32_t r = 1; r < 16; ++r) {
    EXPECT_THAT(log, Not(HasSubstr(table->data.substr(r * 32, 32))));
  }
}

}  // namespace
}  // namespace posenc::testing
