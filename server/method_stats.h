// MethodStats: completed calls of each posenc RPC method, by outcome.
// Thread-safe (atomic counters).
#ifndef POSENC_SERVER_METHOD_STATS_H_
#define POSENC_SERVER_METHOD_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>

namespace posenc {

enum class Method {
  kGetTable,
  kStreamRows,
  kStreamBatches,
  kGetRows,
  kGetStats
};
inline constexpr int kMethodCount = 5;

// "/posenc.v1.PositionalEncoding/GetTable", ...
const char* MethodName(Method method);

class MethodStats {
 public:
  struct Counts {
    uint64_t ok = 0;
    uint64_t errors = 0;
  };

  void Record(Method method, bool ok) {
    auto& c = counts_[static_cast<int>(method)];
    (ok ? c.ok : c.errors).fetch_add(1, std::memory_order_relaxed);
  }
  Counts Get(Method method) const {
    const auto& c = counts_[static_cast<int>(method)];
    return {c.ok.load(std::memory_order_relaxed),
            c.errors.load(std::memory_order_relaxed)};
  }

 private:
  struct AtomicCounts {
    std::atomic<uint64_t> ok{0};
    std::atomic<uint64_t> errors{0};
  };
  std::array<AtomicCounts, kMethodCount> counts_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_METHOD_STATS_H_
