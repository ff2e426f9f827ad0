#include "server/method_stats.h"

#include <algorithm>

namespace posenc {

const char* MethodName(Method method) {
  switch (method) {
    case Method::kGetTable:
      return "/posenc.v1.PositionalEncoding/GetTable";
    case Method::kStreamRows:
      return "/posenc.v1.PositionalEncoding/StreamRows";
    case Method::kStreamBatches:
      return "/posenc.v1.PositionalEncoding/StreamBatches";
    case Method::kGetRows:
      return "/posenc.v1.PositionalEncoding/GetRows";
    case Method::kEncode:
      return "/posenc.v1.PositionalEncoding/Encode";
    case Method::kGetStats:
      return "/posenc.v1.PositionalEncoding/GetStats";
    case Method::kResolvePreset:
      return "/posenc.v1.PositionalEncoding/ResolvePreset";
  }
  return "?";
}

const char* MethodShortName(Method method) {
  switch (method) {
    case Method::kGetTable:
      return "GetTable";
    case Method::kStreamRows:
      return "StreamRows";
    case Method::kStreamBatches:
      return "StreamBatches";
    case Method::kGetRows:
      return "GetRows";
    case Method::kEncode:
      return "Encode";
    case Method::kGetStats:
      return "GetStats";
    case Method::kResolvePreset:
      return "ResolvePreset";
  }
  return "?";
}

void MethodStats::End(Method method, absl::StatusCode code,
                      absl::Duration latency, uint64_t bytes_sent) {
  PerMethod& m = At(method);
  const int c = static_cast<int>(code);
  m.by_code[c >= 0 && c < kStatusCodeCount ? c : 2 /* UNKNOWN */].fetch_add(
      1, std::memory_order_relaxed);
  const double seconds = absl::ToDoubleSeconds(latency);
  const size_t bucket = std::lower_bound(kLatencyBuckets.begin(),
                                         kLatencyBuckets.end(), seconds) -
                        kLatencyBuckets.begin();
  m.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  m.latency_sum_ns.fetch_add(static_cast<uint64_t>(std::max<int64_t>(
                                 0, absl::ToInt64Nanoseconds(latency))),
                             std::memory_order_relaxed);
  m.bytes_sent.fetch_add(bytes_sent, std::memory_order_relaxed);
  m.in_flight.fetch_sub(1, std::memory_order_relaxed);
}

MethodStats::Counts MethodStats::Get(Method method) const {
  const PerMethod& m = At(method);
  Counts counts;
  for (int c = 0; c < kStatusCodeCount; ++c) {
    const uint64_t n = m.by_code[c].load(std::memory_order_relaxed);
    (c == 0 ? counts.ok : counts.errors) += n;
  }
  return counts;
}

MethodStats::Snapshot MethodStats::GetSnapshot(Method method) const {
  const PerMethod& m = At(method);
  Snapshot s;
  for (int c = 0; c < kStatusCodeCount; ++c) {
    s.by_code[c] = m.by_code[c].load(std::memory_order_relaxed);
  }
  for (size_t b = 0; b < s.latency_buckets.size(); ++b) {
    s.latency_buckets[b] = m.buckets[b].load(std::memory_order_relaxed);
  }
  s.latency_sum_seconds =
      m.latency_sum_ns.load(std::memory_order_relaxed) * 1e-9;
  s.bytes_sent = m.bytes_sent.load(std::memory_order_relaxed);
  s.in_flight = m.in_flight.load(std::memory_order_relaxed);
  return s;
}

}  // namespace posenc
