// RefusalStats: calls refused before any work was done, by reason. Feeds
// GetStats and the posenc_refused_calls_total metric.
//
// Thread-safe (relaxed atomic counters).
#ifndef POSENC_SERVER_REFUSAL_STATS_H_
#define POSENC_SERVER_REFUSAL_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>

namespace posenc {

enum class RefusalReason {
  kQueueFull,         // --max_queued_compute_bytes
  kConnectionMisses,  // --max_misses_per_connection
  kInflightBytes,     // --max_inflight_bytes
  kDraining,          // shutting down
};
inline constexpr int kRefusalReasonCount = 4;

// "queue_full", "connection_misses", "inflight_bytes", "draining": the
// metric's reason label and the GetStats field name.
inline const char* RefusalReasonName(RefusalReason reason) {
  static constexpr const char* kNames[kRefusalReasonCount] = {
      "queue_full", "connection_misses", "inflight_bytes", "draining"};
  return kNames[static_cast<int>(reason)];
}

class RefusalStats {
 public:
  void Count(RefusalReason reason) {
    counts_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t Get(RefusalReason reason) const {
    return counts_[static_cast<int>(reason)].load(std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<uint64_t>, kRefusalReasonCount> counts_{};
};

}  // namespace posenc

#endif  // POSENC_SERVER_REFUSAL_STATS_H_
