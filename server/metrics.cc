#include "server/metrics.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace posenc {
namespace {

constexpr const char* kCodeNames[kStatusCodeCount] = {"OK",
                                                      "CANCELLED",
                                                      "UNKNOWN",
                                                      "INVALID_ARGUMENT",
                                                      "DEADLINE_EXCEEDED",
                                                      "NOT_FOUND",
                                                      "ALREADY_EXISTS",
                                                      "PERMISSION_DENIED",
                                                      "RESOURCE_EXHAUSTED",
                                                      "FAILED_PRECONDITION",
                                                      "ABORTED",
                                                      "OUT_OF_RANGE",
                                                      "UNIMPLEMENTED",
                                                      "INTERNAL",
                                                      "UNAVAILABLE",
                                                      "DATA_LOSS",
                                                      "UNAUTHENTICATED"};

void Header(std::string& out, const char* name, const char* type,
            const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ",
                  type, "\n");
}

// A sample value: integers as integers, others with full precision.
std::string Num(double v) { return absl::StrFormat("%.17g", v); }

void Sample(std::string& out, const char* name, double value) {
  absl::StrAppend(&out, name, " ", Num(value), "\n");
}

// A metric with one unlabelled sample: its HELP and TYPE lines, then it.
void Single(std::string& out, const char* name, const char* type,
            const char* help, double value) {
  Header(out, name, type, help);
  Sample(out, name, value);
}

std::string MethodLabel(Method m) {
  return absl::StrCat("method=\"", EscapeLabelValue(MethodShortName(m)), "\"");
}

// Resident and peak resident set size of this process, from /proc.
void ProcessMemory(double* rss, double* hwm) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kb) == 1)
      *rss = kb * 1024.0;
    if (std::sscanf(line.c_str(), "VmHWM: %llu kB", &kb) == 1)
      *hwm = kb * 1024.0;
  }
}

}  // namespace

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderMetrics(const MetricsInput& in) {
  std::string out;
  MethodStats::Snapshot snap[kMethodCount];
  for (int m = 0; m < kMethodCount; ++m) {
    snap[m] = in.methods->GetSnapshot(static_cast<Method>(m));
  }

  Header(out, "posenc_requests_total", "counter",
         "Completed RPCs by method and gRPC status code.");
  for (int m = 0; m < kMethodCount; ++m) {
    for (int c = 0; c < kStatusCodeCount; ++c) {
      // OK always, so every method has a series; other codes once seen.
      if (c != 0 && snap[m].by_code[c] == 0) continue;
      absl::StrAppend(&out, "posenc_requests_total{",
                      MethodLabel(static_cast<Method>(m)), ",code=\"",
                      kCodeNames[c], "\"} ", snap[m].by_code[c], "\n");
    }
  }

  Header(out, "posenc_request_duration_seconds", "histogram",
         "Time from the start of an RPC to its status, by method.");
  for (int m = 0; m < kMethodCount; ++m) {
    const std::string label = MethodLabel(static_cast<Method>(m));
    uint64_t cumulative = 0;
    for (size_t b = 0; b < snap[m].latency_buckets.size(); ++b) {
      cumulative += snap[m].latency_buckets[b];
      const std::string le =
          b < kLatencyBuckets.size() ? Num(kLatencyBuckets[b]) : "+Inf";
      absl::StrAppend(&out, "posenc_request_duration_seconds_bucket{", label,
                      ",le=\"", le, "\"} ", cumulative, "\n");
    }
    absl::StrAppend(&out, "posenc_request_duration_seconds_sum{", label, "} ",
                    Num(snap[m].latency_sum_seconds), "\n");
    absl::StrAppend(&out, "posenc_request_duration_seconds_count{", label, "} ",
                    cumulative, "\n");
  }

  Header(out, "posenc_response_bytes_total", "counter",
         "Bytes of response messages handed to gRPC, by method.");
  for (int m = 0; m < kMethodCount; ++m) {
    absl::StrAppend(&out, "posenc_response_bytes_total{",
                    MethodLabel(static_cast<Method>(m)), "} ",
                    snap[m].bytes_sent, "\n");
  }

  Header(out, "posenc_inflight_calls", "gauge",
         "RPCs started and not yet finished, by method.");
  for (int m = 0; m < kMethodCount; ++m) {
    absl::StrAppend(&out, "posenc_inflight_calls{",
                    MethodLabel(static_cast<Method>(m)), "} ",
                    snap[m].in_flight, "\n");
  }
  const int64_t streams =
      snap[static_cast<int>(Method::kStreamRows)].in_flight +
      snap[static_cast<int>(Method::kStreamBatches)].in_flight;
  Single(out, "posenc_inflight_streams", "gauge",
         "Server streams (StreamRows and StreamBatches) in flight.",
         static_cast<double>(streams));

  const TableCache::Stats& c = in.cache;
  Single(out, "posenc_cache_hits_total", "counter",
         "Table lookups answered from a resident table.", c.hits);
  Single(out, "posenc_cache_misses_total", "counter",
         "Table lookups that computed or waited for a computation.", c.misses);
  Single(out, "posenc_cache_evictions_total", "counter",
         "Tables dropped to stay within the byte budget.", c.evictions);
  Single(out, "posenc_cache_computations_total", "counter",
         "Tables computed (each single-flight computation counts once).",
         c.computations);
  Single(out, "posenc_cache_resident_bytes", "gauge",
         "Bytes of table data resident in the cache.", c.resident_bytes);
  Single(out, "posenc_cache_entries", "gauge", "Tables resident in the cache.",
         c.entries);
  Single(out, "posenc_cache_budget_bytes", "gauge",
         "The cache's byte budget (--cache_bytes).", c.budget_bytes);
  Single(out, "posenc_cache_admissions_total", "counter",
         "Whole-table computations let into the cache.", c.admissions);
  Single(out, "posenc_cache_rejections_total", "counter",
         "Whole-table computations refused by the admission rule.",
         c.rejections);
  Single(out, "posenc_rows_computed_outside_cache_total", "counter",
         "Rows computed for calls outside the cache.", c.rows_computed_outside);

  const ComputePool::Stats& q = in.compute;
  Single(out, "posenc_compute_queue_tasks", "gauge",
         "Computations waiting for a compute thread.", q.queued_tasks);
  Single(out, "posenc_compute_queue_bytes", "gauge",
         "Bytes the queued computations will write "
         "(--max_queued_compute_bytes).",
         q.queued_bytes);
  Single(out, "posenc_compute_running_tasks", "gauge",
         "Computations running now.", q.running_tasks);
  Single(out, "posenc_inflight_bytes", "gauge",
         "Bytes calls in progress hold outside the cache.", in.inflight_bytes);
  Single(out, "posenc_inflight_limit_bytes", "gauge",
         "The limit of posenc_inflight_bytes (--max_inflight_bytes).",
         in.inflight_limit_bytes);
  if (in.refusals != nullptr) {
    Header(out, "posenc_refused_calls_total", "counter",
           "Calls refused before any work, by reason.");
    for (int r = 0; r < kRefusalReasonCount; ++r) {
      const RefusalReason reason = static_cast<RefusalReason>(r);
      absl::StrAppend(&out, "posenc_refused_calls_total{reason=\"",
                      RefusalReasonName(reason), "\"} ",
                      in.refusals->Get(reason), "\n");
    }
  }

  Single(out, "posenc_uptime_seconds", "gauge",
         "Seconds since the server started.", in.uptime_seconds);
  Header(out, "posenc_build_info", "gauge", "The posenc version; always 1.");
  absl::StrAppend(&out, "posenc_build_info{version=\"",
                  EscapeLabelValue(in.version), "\"} 1\n");

  double rss = 0, hwm = 0;
  ProcessMemory(&rss, &hwm);
  Single(out, "process_resident_memory_bytes", "gauge",
         "Resident memory size in bytes.", rss);
  Single(out, "posenc_process_peak_resident_memory_bytes", "gauge",
         "Peak resident memory size in bytes (VmHWM).", hwm);
  return out;
}

}  // namespace posenc
