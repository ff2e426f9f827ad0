// MetricsHttpServer: serves GET /metrics (Prometheus text format) on its own
// address with cpp-httplib, on a thread of its own. Other paths are 404.
//
// Thread-safe; the destructor stops the server and joins its thread.
#ifndef POSENC_SERVER_METRICS_SERVER_H_
#define POSENC_SERVER_METRICS_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace posenc {

class MetricsHttpServer {
 public:
  // Binds `listen` (host:port; port 0 picks one) and starts serving
  // `render()` at /metrics. UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::function<std::string()> render);
  ~MetricsHttpServer();

  int port() const { return port_; }

 private:
  MetricsHttpServer();

  std::unique_ptr<httplib::Server> http_;
  std::atomic<bool> returned_{false};  // listen_after_bind has returned
  std::thread thread_;
  int port_ = 0;
};

}  // namespace posenc

#endif  // POSENC_SERVER_METRICS_SERVER_H_
