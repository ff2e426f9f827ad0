// PosencServer: a running posenc gRPC server (service, health checking,
// reflection, cache and compute pool) built from validated ServerOptions.
//
// Thread-safe. Shutdown may be called from any thread, once or many times;
// the destructor shuts down too.
#ifndef POSENC_SERVER_POSENC_SERVER_H_
#define POSENC_SERVER_POSENC_SERVER_H_

#include <grpcpp/channel.h>
#include <grpcpp/server.h>
#include <grpcpp/support/channel_arguments.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/cache/table_cache.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "core/runtime/shared_memory_directory.h"
#include "server/method_stats.h"
#include "server/metrics.h"
#include "server/posenc_service.h"
#include "server/server_options.h"

namespace posenc {

class PosencServer {
 public:
  // Validates `options` (INVALID_ARGUMENT naming the bad one), then starts
  // listening; UNAVAILABLE when the address cannot be bound. Health reports
  // SERVING once this returns.
  static absl::StatusOr<std::unique_ptr<PosencServer>> Create(
      const ServerOptions& options);
  ~PosencServer();

  // The bound port (useful with a :0 listen address).
  int port() const { return port_; }
  // The bound metrics port; 0 when metrics_listen is empty.
  int metrics_port() const;
  const ServerOptions& options() const { return options_; }
  // What the Prometheus /metrics page reports now.
  MetricsInput Metrics() const;
  // The Prometheus /metrics page, as served on metrics_listen.
  std::string RenderMetrics() const;
  TableCache& cache() { return *cache_; }
  // The server's own subdirectory of options().shm_dir; empty without it.
  std::string shm_directory() const {
    return shm_ != nullptr ? shm_->path() : std::string();
  }

  // Test-only: a channel to this server through gRPC's in-process transport
  // (no socket, no HTTP/2), for the fuzz harness's long-lived server. Its
  // calls reach the same service; the peer is "inproc". Valid until
  // Shutdown.
  std::shared_ptr<grpc::Channel> InProcessChannel(
      const grpc::ChannelArguments& args) {
    return server_->InProcessChannel(args);
  }

  // Graceful stop that a proxy can follow: health goes NOT_SERVING, the
  // server keeps serving every call for options().lame_duck_seconds (so
  // health checks and proxies move traffic away), then refuses new table
  // calls (UNAVAILABLE) and gives in-flight calls options().grace_seconds to
  // finish, sending every queued message and the trailers to slow readers;
  // what remains then is cancelled. Blocks until every call is done.
  void Shutdown();

  // Blocks until Shutdown has completed.
  void Wait();

 private:
  explicit PosencServer(const ServerOptions& options);
  // Shutdown, with or without the lame-duck period.
  void Stop(bool lame_duck);
  // Stops log_reporter_ (if running) and reports what it had left.
  void StopLogReporter();

  const ServerOptions options_;
  const absl::Time start_time_;
  // posenc.v1 calls alive in gRPC, and started (see server/call_scope.h);
  // outlives the gRPC server, whose teardown may delete the last reactors.
  CallCounters calls_;
  // Destroyed in reverse: the pool (running any task left) before the cache
  // its tasks use, both before the budget that evicted tables release to;
  // the shared-memory directory last (its files hold it too).
  std::shared_ptr<SharedMemoryDirectory> shm_;
  std::unique_ptr<ByteBudget> inflight_;
  std::unique_ptr<TableCache> cache_;
  std::unique_ptr<ComputePool> pool_;
  MethodStats stats_;
  std::unique_ptr<PositionalEncodingService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  // Reset first by the destructor, so a scrape never sees a dead cache.
  std::unique_ptr<MetricsExposer> metrics_;
  // Reports the failed-call log lines held back by FailureLogLimiter()
  // once a second, until stop_log_reporter_.
  absl::Notification stop_log_reporter_;
  std::thread log_reporter_;
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace posenc

#endif  // POSENC_SERVER_POSENC_SERVER_H_
