// Prometheus metrics of a posenc server, on prometheus-cpp: per-method calls
// by gRPC status code, latency histograms, response bytes, calls in flight,
// the table cache, and the process's memory.
//
// The counts live where the server keeps them (MethodStats, the TableCache's
// Stats); at each scrape a prometheus::Collectable reads one MetricsInput and
// turns it into metric families. prometheus-cpp writes the text format and
// its Exposer serves GET /metrics.
//
// Adding a metric: a value that is one number of MetricsInput is one line in
// kScalarMetrics (metrics.cc); add the field to MetricsInput first if it is
// new, and fill it in PosencServer::Metrics().
#ifndef POSENC_SERVER_METRICS_H_
#define POSENC_SERVER_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cache/table_cache.h"
#include "core/runtime/buffer_reserve.h"
#include "core/runtime/compute_pool.h"
#include "prometheus/metric_family.h"
#include "server/method_stats.h"
#include "server/refusal_stats.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace posenc {

// Everything one scrape reports.
struct MetricsInput {
  const MethodStats* methods = nullptr;
  TableCache::Stats cache;
  ComputePool::Stats compute;
  uint64_t skipped_tasks = 0;  // ComputeStats.skipped_tasks
  uint64_t inflight_bytes = 0;
  uint64_t inflight_limit_bytes = 0;
  BufferReserve::Stats warm_reserve;
  const RefusalStats* refusals = nullptr;
  double uptime_seconds = 0;
  const char* version = "";
};

// The metric families of one scrape.
std::vector<prometheus::MetricFamily> CollectMetrics(const MetricsInput& input);

// The text exposition (format 0.0.4) of CollectMetrics(input).
std::string RenderMetrics(const MetricsInput& input);

// MetricsExposer: serves GET /metrics on its own address with
// prometheus::Exposer, reading `snapshot()` at each scrape. Other paths are
// 404. Thread-safe; the destructor stops serving.
class MetricsExposer {
 public:
  // Binds `listen` (host:port; port 0 picks one). INVALID_ARGUMENT when it
  // is not host:port, UNAVAILABLE when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      const std::string& listen, std::function<MetricsInput()> snapshot);
  ~MetricsExposer();

  int port() const { return port_; }

 private:
  MetricsExposer() = default;

  std::shared_ptr<prometheus::Collectable> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace posenc

#endif  // POSENC_SERVER_METRICS_H_
