#include "server/posenc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace posenc {
namespace {

// Headroom for a response's non-tensor fields above --max_message_bytes.
constexpr int kResponseHeaderBytes = 4096;

}  // namespace

PosencServer::PosencServer(const ServerOptions& options) : options_(options) {}

absl::StatusOr<std::unique_ptr<PosencServer>> PosencServer::Create(
    const ServerOptions& options) {
  if (absl::Status s = ValidateServerOptions(options); !s.ok()) return s;
  std::unique_ptr<PosencServer> server(new PosencServer(options));

  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  server->cache_ = std::make_unique<TableCache>(TableCache::Options{
      .budget_bytes = options.cache_bytes, .compute_threads = threads});
  server->pool_ = std::make_unique<ComputePool>(threads);
  ServiceLimits limits;
  limits.spec.max_d = options.max_d;
  limits.spec.max_len_limit = options.max_len_limit;
  limits.max_rows_per_request = options.max_rows_per_request;
  limits.max_message_bytes = options.max_message_bytes;
  server->service_ = std::make_unique<PositionalEncodingService>(
      limits, server->cache_.get(), server->pool_.get(), &server->stats_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &server->port_);
  builder.RegisterService(server->service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_request_bytes));
  builder.SetMaxSendMessageSize(
      static_cast<int>(options.max_message_bytes + kResponseHeaderBytes));
  // gRPC enables SO_REUSEPORT by default, which lets a second server bind the
  // same port and silently take half the connections: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(options.max_concurrent_streams));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (address in use, or not an address of this host)"));
  }
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

void PosencServer::Shutdown() {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  // Health first, so load balancers stop routing here; grpc::Server's
  // Shutdown then refuses new calls and drains the rest until the deadline.
  server_->GetHealthCheckService()->SetServingStatus(false);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::microseconds(
                            static_cast<int64_t>(options_.grace_seconds * 1e6));
  server_->Shutdown(deadline);
  server_->Wait();
}

void PosencServer::Wait() { server_->Wait(); }

PosencServer::~PosencServer() {
  // Members then go in reverse order: the server before the service, the
  // pool and the cache it used; no call is left holding a pool task.
  if (server_ != nullptr) Shutdown();
}

}  // namespace posenc
