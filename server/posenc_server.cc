#include "server/posenc_server.h"

#include <grpcpp/ext/channelz_service_plugin.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/runtime/buffer_reserve.h"
#include "grpc/health/v1/health.pb.h"
#include "server/grpc_log_sink.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/unary_call.h"

namespace posenc {
namespace {

// At the end of a drain, how long gRPC may take to flush and close the
// connections (never past the grace period).
constexpr double kShutdownTailSeconds = 0.5;

// Headroom for a response's non-tensor fields above --max_message_bytes.
constexpr int kResponseHeaderBytes = 4096;

// A validated duration option (seconds) as gRPC's int milliseconds, at
// least 1 ms when positive.
int Millis(double seconds) {
  return static_cast<int>(std::clamp<double>(std::llround(seconds * 1000),
                                             seconds > 0 ? 1 : 0,
                                             std::numeric_limits<int>::max()));
}

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  if (!in || contents.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read '", path, "'"));
  }
  return contents.str();
}

// Plaintext, TLS, or mutual TLS, from the tls_* options.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& options) {
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  absl::StatusOr<std::string> cert =
      ReadPemFile(options.tls_cert, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile(options.tls_key, "--tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca =
        ReadPemFile(options.tls_client_ca, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

PosencServer::PosencServer(const ServerOptions& options)
    : options_(options), start_time_(absl::Now()) {}

absl::StatusOr<std::unique_ptr<PosencServer>> PosencServer::Create(
    const ServerOptions& options) {
  // Process-wide, and first: the error of an invalid option is logged in
  // the format asked for.
  SetLogFormat(options.log_format == "json" ? LogFormat::kJson
                                            : LogFormat::kText);
  if (absl::Status s = ValidateServerOptions(options); !s.ok()) return s;
  std::unique_ptr<PosencServer> server(new PosencServer(options));

  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  server->inflight_ = std::make_unique<ByteBudget>(options.max_inflight_bytes);
  // Process-wide (AllocateLargeBuffer and CallScope have no server to ask).
  FailureLogLimiter().set_max_lines(options.failure_log_lines_per_second);
  GrpcLogLimiter().set_max_lines(options.failure_log_lines_per_second);
  RouteGrpcLogsThroughLimit();
  WarmReserve().SetBound(options.warm_reserve_bytes);
  WarmReserve().SetRefill(options.warm_reserve_bytes > 0);
  ComputePool::Options pool_options;
  pool_options.threads = threads;
  pool_options.max_queued_bytes = options.max_queued_compute_bytes;
  // Computations yield the CPU to the gRPC threads that serve cache hits,
  // so a flood of misses slows itself before it slows hot tables.
  pool_options.nice = 10;
  server->pool_ = std::make_unique<ComputePool>(pool_options);
  if (!options.shm_dir.empty()) {
    absl::StatusOr<std::shared_ptr<SharedMemoryDirectory>> shm =
        SharedMemoryDirectory::Open(options.shm_dir);
    if (!shm.ok()) {
      return absl::Status(shm.status().code(),
                          absl::StrCat("--shm_dir ", shm.status().message()));
    }
    server->shm_ = std::move(*shm);
  }
  TableCache::Options cache_options;
  cache_options.budget_bytes = options.cache_bytes;
  cache_options.pool = server->pool_.get();
  cache_options.pinned = server->inflight_.get();
  cache_options.shm = server->shm_.get();
  server->cache_ = std::make_unique<TableCache>(cache_options);
  ServiceLimits limits;
  limits.spec.max_d = options.max_d;
  limits.spec.max_len_limit = options.max_len_limit;
  limits.max_rows_per_request = options.max_rows_per_request;
  limits.max_message_bytes = options.max_message_bytes;
  limits.max_misses_per_connection = options.max_misses_per_connection;
  limits.shm_directory = server->shm_directory();
  server->service_ = std::make_unique<PositionalEncodingService>(
      limits, server->cache_.get(), server->pool_.get(),
      server->inflight_.get(), &server->stats_, &server->calls_);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();

  grpc::EnableDefaultHealthCheckService(true);
  // gRPC's health service is built on upb, so grpc.health.v1 is not in
  // protobuf's generated pool and reflection lists Health but cannot resolve
  // it. Using the generated C++ of proto/grpc/health/v1/health.proto here
  // links it in and registers its descriptor.
  grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  // A process-wide plugin: once enabled, every server built later has it.
  if (options.channelz) grpc::channelz::experimental::InitChannelzService();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *credentials, &server->port_);
  builder.RegisterService(server->service_.get());
  // The service's unary calls keep their CallScope in their context.
  builder.SetContextAllocator(std::make_unique<CallContextAllocator>());
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_request_bytes));
  // gRPC takes an int; --max_message_bytes may be 2^31 itself.
  builder.SetMaxSendMessageSize(static_cast<int>(
      std::min<uint64_t>(options.max_message_bytes + kResponseHeaderBytes,
                         std::numeric_limits<int>::max())));
  // gRPC enables SO_REUSEPORT by default, which lets a second server bind the
  // same port and silently take half the connections: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // The transport's limits on what one client may make the server hold or
  // answer (server_options.h says why each default).
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(options.max_concurrent_streams));
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                             static_cast<int>(options.max_metadata_bytes));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES,
                             static_cast<int>(options.max_ping_strikes));
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      Millis(options.min_ping_interval_seconds));
  if (options.max_connection_idle_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                               Millis(options.max_connection_idle_seconds));
  }
  if (options.max_connection_age_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               Millis(options.max_connection_age_seconds));
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
        Millis(options.max_connection_age_grace_seconds));
  }
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             Millis(options.handshake_timeout_seconds));
  grpc::ResourceQuota quota("posenc");
  quota.Resize(options.grpc_memory_bytes);
  quota.SetMaxThreads(options.grpc_max_threads);
  builder.SetResourceQuota(quota);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (address in use, or not an address of this host)"));
  }
  if (!options.metrics_listen.empty()) {
    PosencServer* self = server.get();
    absl::StatusOr<std::unique_ptr<MetricsExposer>> metrics =
        MetricsExposer::Start(options.metrics_listen,
                              [self] { return self->Metrics(); });
    if (!metrics.ok()) return metrics.status();
    server->metrics_ = std::move(*metrics);
  }
  // Failed calls past the log limit are reported once a second.
  PosencServer* self = server.get();
  server->log_reporter_ = std::thread([self] {
    while (!self->stop_log_reporter_.WaitForNotificationWithTimeout(
        absl::Seconds(1))) {
      ReportSuppressedFailureLogLines();
      ReportSuppressedGrpcLogLines();
    }
  });
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

void PosencServer::Shutdown() { Stop(/*lame_duck=*/true); }

void PosencServer::Stop(bool lame_duck) {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  // Health first, so health checks and load balancers stop routing here,
  // while every call is still served for the lame-duck period.
  server_->GetHealthCheckService()->SetServingStatus(false);
  // A handler still running (a stream sending) makes the drain wait for its
  // connection to flush; a call whose handler is done and whose answer is
  // already out (an idle client right after its call) does not.
  const bool busy_at_signal = stats_.TotalInFlight() > 0;
  const uint64_t started_at_signal =
      calls_.started.load(std::memory_order_relaxed);
  if (lame_duck && options_.lame_duck_seconds > 0) {
    absl::SleepFor(absl::Seconds(options_.lame_duck_seconds));
  }
  // Then stop taking table calls (UNAVAILABLE: by now health checks and
  // proxies route elsewhere) and let the calls in flight finish within the
  // grace period. A call counts until gRPC is done with it (calls_.live), well
  // after its handler called Finish; shutting down as soon as the handlers
  // had finished cancelled the last messages and trailers still queued for
  // slow readers (the drain bug).
  service_->StartDraining();
  const absl::Time deadline =
      absl::Now() + absl::Seconds(options_.grace_seconds);
  while ((stats_.TotalInFlight() > 0 ||
          calls_.live.load(std::memory_order_relaxed) > 0) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  // grpc::Server::Shutdown closes the listener, sends GOAWAY and waits until
  // its deadline for calls (none of ours are left, unless the grace period
  // ran out: they are cancelled then) and for every connection to close; at
  // the deadline it closes them, dropping what the transport has not written
  // yet. A call gRPC has destroyed may still have its last messages and
  // trailers in the transport's buffers, waiting for a slow reader (a proxy
  // forwarding at its client's pace), so when calls ran during the drain the
  // connections get the rest of the grace period to flush and close. With
  // none, only a short tail: an idle client's graceful GOAWAY handshake
  // would otherwise hold the exit for seconds.
  const bool had_calls =
      busy_at_signal ||
      calls_.started.load(std::memory_order_relaxed) != started_at_signal;
  const absl::Time end =
      had_calls ? deadline
                : std::min(deadline,
                           absl::Now() + absl::Seconds(kShutdownTailSeconds));
  server_->Shutdown(absl::ToChronoTime(end));
  server_->Wait();
  // No call is left: take the tables' files and the subdirectory away now,
  // since main() exits without running destructors. Clients keep what they
  // mapped.
  if (shm_ != nullptr) shm_->RemoveAll();
  StopLogReporter();
}

void PosencServer::StopLogReporter() {
  if (!log_reporter_.joinable()) return;
  stop_log_reporter_.Notify();
  log_reporter_.join();
  ReportSuppressedFailureLogLines();  // the last second's
  ReportSuppressedGrpcLogLines();
}

void PosencServer::Wait() { server_->Wait(); }

int PosencServer::metrics_port() const {
  return metrics_ != nullptr ? metrics_->port() : 0;
}

MetricsInput PosencServer::Metrics() const {
  MetricsInput input;
  input.methods = &stats_;
  input.cache = cache_->GetStats();
  input.compute = pool_->GetStats();
  input.skipped_tasks = service_->skipped_tasks();
  input.inflight_bytes = inflight_->used();
  input.inflight_limit_bytes = inflight_->limit();
  input.warm_reserve = WarmReserve().GetStats();
  input.refusals = &service_->refusals();
  input.uptime_seconds = absl::ToDoubleSeconds(absl::Now() - start_time_);
  input.version = POSENC_VERSION;
  return input;
}

std::string PosencServer::RenderMetrics() const {
  return posenc::RenderMetrics(Metrics());
}

PosencServer::~PosencServer() {
  // Members then go in reverse order: the metrics page, the server before
  // the service, the pool and the cache it used; no call is left holding a
  // pool task.
  if (server_ != nullptr) Stop(/*lame_duck=*/false);
  StopLogReporter();  // if Create failed after starting it
  metrics_.reset();
}

}  // namespace posenc
