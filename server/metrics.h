// Prometheus text exposition (format 0.0.4) of a posenc server's counters:
// per-method calls by gRPC status code, latency histograms, response bytes,
// calls in flight, the table cache, and the process's memory.
//
// Written by hand (not prometheus-cpp) so the server needs no build
// dependency beyond Debian's libcpp-httplib-dev for the HTTP side.
#ifndef POSENC_SERVER_METRICS_H_
#define POSENC_SERVER_METRICS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/compute_pool.h"
#include "core/table_cache.h"
#include "server/method_stats.h"
#include "server/refusal_stats.h"

namespace posenc {

// A label value escaped for the text format: \ " and newline.
std::string EscapeLabelValue(absl::string_view value);

struct MetricsInput {
  const MethodStats* methods = nullptr;
  TableCache::Stats cache;
  ComputePool::Stats compute;
  uint64_t inflight_bytes = 0;
  uint64_t inflight_limit_bytes = 0;
  const RefusalStats* refusals = nullptr;
  double uptime_seconds = 0;
  const char* version = "";
};

// The whole /metrics page.
std::string RenderMetrics(const MetricsInput& input);

}  // namespace posenc

#endif  // POSENC_SERVER_METRICS_H_
