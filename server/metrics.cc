#include "server/metrics.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"
#include "prometheus/text_serializer.h"

namespace posenc {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Resident and peak resident set size of this process, from /proc.
struct ProcessMemory {
  double rss = 0;
  double hwm = 0;
};
ProcessMemory ReadProcessMemory() {
  ProcessMemory memory;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kb) == 1) {
      memory.rss = kb * 1024.0;
    }
    if (std::sscanf(line.c_str(), "VmHWM: %llu kB", &kb) == 1) {
      memory.hwm = kb * 1024.0;
    }
  }
  return memory;
}

// What a scrape reads once and several metrics share.
struct Scrape {
  const MetricsInput& in;
  MethodStats::Snapshot methods[kMethodCount];
  ProcessMemory memory;
};

// A metric with one unlabelled sample, read from the scrape.
struct ScalarMetric {
  const char* name;
  MetricType type;
  const char* help;
  double (*value)(const Scrape&);
};

// A metric with one sample per method (label method="GetTable", ...).
struct MethodMetric {
  const char* name;
  MetricType type;
  const char* help;
  double (*value)(const MethodStats::Snapshot&);
};

constexpr MetricType kCounter = MetricType::Counter;
constexpr MetricType kGauge = MetricType::Gauge;

const MethodMetric kMethodMetrics[] = {
    {"posenc_response_bytes_total", kCounter,
     "Bytes of response messages handed to gRPC, by method.",
     [](const MethodStats::Snapshot& m) -> double { return m.bytes_sent; }},
    {"posenc_inflight_calls", kGauge,
     "RPCs started and not yet finished, by method.",
     [](const MethodStats::Snapshot& m) -> double { return m.in_flight; }},
};

// One line per metric: add new ones here.
const ScalarMetric kScalarMetrics[] = {
    {"posenc_inflight_streams", kGauge,
     "Server streams (StreamRows and StreamBatches) in flight.",
     [](const Scrape& s) -> double {
       return s.methods[static_cast<int>(Method::kStreamRows)].in_flight +
              s.methods[static_cast<int>(Method::kStreamBatches)].in_flight;
     }},
    {"posenc_cache_hits_total", kCounter,
     "Table lookups answered from a resident table.",
     [](const Scrape& s) -> double { return s.in.cache.hits; }},
    {"posenc_cache_misses_total", kCounter,
     "Table lookups that computed or waited for a computation.",
     [](const Scrape& s) -> double { return s.in.cache.misses; }},
    {"posenc_cache_evictions_total", kCounter,
     "Tables dropped to stay within the byte budget.",
     [](const Scrape& s) -> double { return s.in.cache.evictions; }},
    {"posenc_cache_computations_total", kCounter,
     "Tables computed (each single-flight computation counts once).",
     [](const Scrape& s) -> double { return s.in.cache.computations; }},
    {"posenc_cache_resident_bytes", kGauge,
     "Bytes of table data resident in the cache.",
     [](const Scrape& s) -> double { return s.in.cache.resident_bytes; }},
    {"posenc_cache_entries", kGauge, "Tables resident in the cache.",
     [](const Scrape& s) -> double { return s.in.cache.entries; }},
    {"posenc_cache_budget_bytes", kGauge,
     "The cache's byte budget (--cache_bytes).",
     [](const Scrape& s) -> double { return s.in.cache.budget_bytes; }},
    {"posenc_cache_admissions_total", kCounter,
     "Whole-table computations let into the cache.",
     [](const Scrape& s) -> double { return s.in.cache.admissions; }},
    {"posenc_cache_rejections_total", kCounter,
     "Whole-table computations refused by the admission rule.",
     [](const Scrape& s) -> double { return s.in.cache.rejections; }},
    {"posenc_rows_computed_outside_cache_total", kCounter,
     "Rows computed for calls outside the cache.",
     [](const Scrape& s) -> double {
       return s.in.cache.rows_computed_outside;
     }},
    {"posenc_cache_shm_files", kGauge,
     "Cached tables held as files of the shared-memory directory (--shm_dir).",
     [](const Scrape& s) -> double { return s.in.cache.shm_files; }},
    {"posenc_cache_shm_fallbacks_total", kCounter,
     "Whole tables computed in ordinary memory because the shared-memory "
     "directory refused a file (full).",
     [](const Scrape& s) -> double { return s.in.cache.shm_fallbacks; }},
    {"posenc_compute_queue_tasks", kGauge,
     "Computations waiting for a compute thread.",
     [](const Scrape& s) -> double { return s.in.compute.queued_tasks; }},
    {"posenc_compute_queue_bytes", kGauge,
     "Bytes the queued computations will write (--max_queued_compute_bytes).",
     [](const Scrape& s) -> double { return s.in.compute.queued_bytes; }},
    {"posenc_compute_running_tasks", kGauge, "Computations running now.",
     [](const Scrape& s) -> double { return s.in.compute.running_tasks; }},
    {"posenc_compute_tasks_started_total", kCounter,
     "Computations taken from the queue.",
     [](const Scrape& s) -> double { return s.in.compute.started_tasks; }},
    {"posenc_compute_tasks_skipped_total", kCounter,
     "Computations dropped unrun because their call ended while queued.",
     [](const Scrape& s) -> double { return s.in.skipped_tasks; }},
    {"posenc_inflight_bytes", kGauge,
     "Bytes calls in progress hold outside the cache.",
     [](const Scrape& s) -> double { return s.in.inflight_bytes; }},
    {"posenc_inflight_limit_bytes", kGauge,
     "The limit of posenc_inflight_bytes (--max_inflight_bytes).",
     [](const Scrape& s) -> double { return s.in.inflight_limit_bytes; }},
    {"posenc_warm_reserve_bytes", kGauge,
     "Bytes of freed large buffers kept mapped (pages faulted in) for reuse.",
     [](const Scrape& s) -> double { return s.in.warm_reserve.held_bytes; }},
    {"posenc_warm_reserve_limit_bytes", kGauge,
     "The limit of posenc_warm_reserve_bytes (--warm_reserve_bytes).",
     [](const Scrape& s) -> double { return s.in.warm_reserve.bound_bytes; }},
    {"posenc_warm_reserve_reuses_total", kCounter,
     "Allocations of 2 MiB or more served from the warm reserve.",
     [](const Scrape& s) -> double { return s.in.warm_reserve.reuses; }},
    {"posenc_warm_reserve_refilled_bytes_total", kCounter,
     "Fresh bytes the background refill faulted into the warm reserve.",
     [](const Scrape& s) -> double {
       return s.in.warm_reserve.refilled_bytes;
     }},
    {"posenc_uptime_seconds", kGauge, "Seconds since the server started.",
     [](const Scrape& s) { return s.in.uptime_seconds; }},
    {"process_resident_memory_bytes", kGauge, "Resident memory size in bytes.",
     [](const Scrape& s) { return s.memory.rss; }},
    {"posenc_process_peak_resident_memory_bytes", kGauge,
     "Peak resident memory size in bytes (VmHWM).",
     [](const Scrape& s) { return s.memory.hwm; }},
};

ClientMetric WithValue(MetricType type, double value,
                       std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  if (type == kCounter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

ClientMetric::Label MethodLabel(int m) {
  return {"method", MethodShortName(static_cast<Method>(m))};
}

class Collector : public prometheus::Collectable {
 public:
  explicit Collector(std::function<MetricsInput()> snapshot)
      : snapshot_(std::move(snapshot)) {}
  std::vector<MetricFamily> Collect() const override {
    return CollectMetrics(snapshot_());
  }

 private:
  const std::function<MetricsInput()> snapshot_;
};

}  // namespace

std::vector<MetricFamily> CollectMetrics(const MetricsInput& in) {
  Scrape scrape{in, {}, ReadProcessMemory()};
  for (int m = 0; m < kMethodCount; ++m) {
    scrape.methods[m] = in.methods->GetSnapshot(static_cast<Method>(m));
  }
  std::vector<MetricFamily> families;

  MetricFamily& requests = families.emplace_back(
      MetricFamily{"posenc_requests_total",
                   "Completed RPCs by method and gRPC status code.",
                   kCounter,
                   {}});
  for (int m = 0; m < kMethodCount; ++m) {
    for (int c = 0; c < kStatusCodeCount; ++c) {
      const uint64_t count = scrape.methods[m].by_code[c];
      // OK always, so every method has a series; other codes once seen.
      if (c != 0 && count == 0) continue;
      requests.metric.push_back(WithValue(
          kCounter, count,
          {MethodLabel(m),
           {"code",
            absl::StatusCodeToString(static_cast<absl::StatusCode>(c))}}));
    }
  }

  MetricFamily& latency = families.emplace_back(
      MetricFamily{"posenc_request_duration_seconds",
                   "Time from the start of an RPC to its status, by method.",
                   MetricType::Histogram,
                   {}});
  for (int m = 0; m < kMethodCount; ++m) {
    const MethodStats::Snapshot& snap = scrape.methods[m];
    ClientMetric metric;
    metric.label = {MethodLabel(m)};
    uint64_t cumulative = 0;
    for (size_t b = 0; b < snap.latency_buckets.size(); ++b) {
      cumulative += snap.latency_buckets[b];
      metric.histogram.bucket.push_back(
          {cumulative, b < kLatencyBuckets.size()
                           ? kLatencyBuckets[b]
                           : std::numeric_limits<double>::infinity()});
    }
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = snap.latency_sum_seconds;
    latency.metric.push_back(std::move(metric));
  }

  for (const MethodMetric& def : kMethodMetrics) {
    MetricFamily& family =
        families.emplace_back(MetricFamily{def.name, def.help, def.type, {}});
    for (int m = 0; m < kMethodCount; ++m) {
      family.metric.push_back(
          WithValue(def.type, def.value(scrape.methods[m]), {MethodLabel(m)}));
    }
  }
  for (const ScalarMetric& def : kScalarMetrics) {
    families.push_back(MetricFamily{def.name,
                                    def.help,
                                    def.type,
                                    {WithValue(def.type, def.value(scrape))}});
  }
  if (in.refusals != nullptr) {
    MetricFamily& refused = families.emplace_back(
        MetricFamily{"posenc_refused_calls_total",
                     "Calls refused before any work, by reason.",
                     kCounter,
                     {}});
    for (int r = 0; r < kRefusalReasonCount; ++r) {
      const RefusalReason reason = static_cast<RefusalReason>(r);
      refused.metric.push_back(
          WithValue(kCounter, in.refusals->Get(reason),
                    {{"reason", RefusalReasonName(reason)}}));
    }
  }
  families.push_back(
      MetricFamily{"posenc_build_info",
                   "The posenc version; always 1.",
                   kGauge,
                   {WithValue(kGauge, 1, {{"version", in.version}})}});
  return families;
}

std::string RenderMetrics(const MetricsInput& input) {
  return prometheus::TextSerializer().Serialize(CollectMetrics(input));
}

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    const std::string& listen, std::function<MetricsInput()> snapshot) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address must be host:port, got '", listen, "'"));
  }
  std::unique_ptr<MetricsExposer> exposer(new MetricsExposer());
  try {
    // One serving thread is plenty for a scraper or two.
    exposer->exposer_ = std::make_unique<prometheus::Exposer>(listen, 1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen,
                     " for metrics (address in use?): ", e.what()));
  }
  const std::vector<int> ports = exposer->exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen, " for metrics"));
  }
  exposer->port_ = ports[0];
  exposer->collector_ = std::make_shared<Collector>(std::move(snapshot));
  exposer->exposer_->RegisterCollectable(exposer->collector_);
  return exposer;
}

MetricsExposer::~MetricsExposer() {
  // Stop serving before the collector (and what it reads) goes away.
  exposer_.reset();
}

}  // namespace posenc
