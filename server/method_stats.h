// MethodStats: calls of each posenc RPC method: completed calls by status
// code, a latency histogram, response bytes sent, and calls in flight.
// Feeds GetStats and the Prometheus /metrics page.
//
// Thread-safe (relaxed atomic counters: each is exact, a snapshot of several
// is not atomic as a whole).
#ifndef POSENC_SERVER_METHOD_STATS_H_
#define POSENC_SERVER_METHOD_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace posenc {

enum class Method {
  kGetTable,
  kStreamRows,
  kStreamBatches,
  kGetRows,
  kEncode,
  kGetStats,
  kResolvePreset
};
inline constexpr int kMethodCount = 7;
// gRPC status codes 0 (OK) .. 16 (UNAUTHENTICATED).
inline constexpr int kStatusCodeCount = 17;

// "/posenc.v1.PositionalEncoding/GetTable", ...
const char* MethodName(Method method);
// "GetTable", ...
const char* MethodShortName(Method method);

// Upper bounds (seconds) of the latency histogram buckets; +Inf is implied.
inline constexpr std::array<double, 16> kLatencyBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

class MethodStats {
 public:
  struct Counts {
    uint64_t ok = 0;
    uint64_t errors = 0;
  };

  // A call has started (counts it in flight until End).
  void Begin(Method method) {
    At(method).in_flight.fetch_add(1, std::memory_order_relaxed);
  }
  // A call started with Begin has ended with `code` after `latency`, having
  // sent `bytes_sent` response message bytes.
  void End(Method method, absl::StatusCode code, absl::Duration latency,
           uint64_t bytes_sent);

  Counts Get(Method method) const;

  // Calls of every method started and not yet ended.
  int64_t TotalInFlight() const {
    int64_t total = 0;
    for (const PerMethod& m : methods_) {
      total += m.in_flight.load(std::memory_order_relaxed);
    }
    return total;
  }

  struct Snapshot {
    std::array<uint64_t, kStatusCodeCount> by_code{};
    // Non-cumulative counts per bucket; the last one is +Inf.
    std::array<uint64_t, kLatencyBuckets.size() + 1> latency_buckets{};
    double latency_sum_seconds = 0;
    uint64_t bytes_sent = 0;
    int64_t in_flight = 0;
  };
  Snapshot GetSnapshot(Method method) const;

 private:
  struct PerMethod {
    std::array<std::atomic<uint64_t>, kStatusCodeCount> by_code{};
    std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> buckets{};
    std::atomic<uint64_t> latency_sum_ns{0};
    std::atomic<uint64_t> bytes_sent{0};
    std::atomic<int64_t> in_flight{0};
  };
  PerMethod& At(Method m) { return methods_[static_cast<int>(m)]; }
  const PerMethod& At(Method m) const { return methods_[static_cast<int>(m)]; }

  std::array<PerMethod, kMethodCount> methods_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_METHOD_STATS_H_
