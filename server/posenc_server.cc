#include "server/posenc_server.h"

#include <grpcpp/ext/channelz_service_plugin.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.pb.h"
#include "server/log.h"
#include "server/metrics.h"

namespace posenc {
namespace {

// Headroom for a response's non-tensor fields above --max_message_bytes.
constexpr int kResponseHeaderBytes = 4096;

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
  if (absl::Status s = ValidateServerOptions(options); !s.ok()) return s;
  std::unique_ptr<PosencServer> server(new PosencServer(options));

  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Large buffers (answers, tables) come straight from mmap and go back to
  // the system when freed: glibc's default threshold adapts upward and then
  // keeps freed multi-megabyte buffers in the heap, where peak memory could
  // pass cache + inflight bounds by their fragments.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  server->inflight_ = std::make_unique<ByteBudget>(options.max_inflight_bytes);
  ComputePool::Options pool_options;
  pool_options.threads = threads;
  pool_options.max_queued_bytes = options.max_queued_compute_bytes;
  server->pool_ = std::make_unique<ComputePool>(pool_options);
  TableCache::Options cache_options;
  cache_options.budget_bytes = options.cache_bytes;
  cache_options.pool = server->pool_.get();
  cache_options.pinned = server->inflight_.get();
  server->cache_ = std::make_unique<TableCache>(cache_options);
  ServiceLimits limits;
  limits.spec.max_d = options.max_d;
  limits.spec.max_len_limit = options.max_len_limit;
  limits.max_rows_per_request = options.max_rows_per_request;
  limits.max_message_bytes = options.max_message_bytes;
  limits.max_misses_per_connection = options.max_misses_per_connection;
  server->service_ = std::make_unique<PositionalEncodingService>(
      limits, server->cache_.get(), server->pool_.get(),
      server->inflight_.get(), &server->stats_);
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
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_request_bytes));
  // gRPC takes an int; --max_message_bytes may be 2^31 itself.
  builder.SetMaxSendMessageSize(static_cast<int>(
      std::min<uint64_t>(options.max_message_bytes + kResponseHeaderBytes,
                         std::numeric_limits<int>::max())));
  // gRPC enables SO_REUSEPORT by default, which lets a second server bind the
  // same port and silently take half the connections: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(options.max_concurrent_streams));
  grpc::ResourceQuota quota("posenc");
  quota.Resize(options.grpc_memory_bytes);
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
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

void PosencServer::Shutdown() {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  // Health first, so load balancers stop routing here; new table calls get
  // UNAVAILABLE while the ones in flight have up to the grace period.
  server_->GetHealthCheckService()->SetServingStatus(false);
  service_->StartDraining();
  const absl::Time deadline =
      absl::Now() + absl::Seconds(options_.grace_seconds);
  while (stats_.TotalInFlight() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  // grpc::Server::Shutdown waits for every client connection to close until
  // its deadline, even idle ones, so it gets a deadline that has passed: it
  // cancels what is left and closes the connections now.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
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
  input.inflight_bytes = inflight_->used();
  input.inflight_limit_bytes = inflight_->limit();
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
  if (server_ != nullptr) Shutdown();
  metrics_.reset();
}

}  // namespace posenc
