// ByteBudget: a count of bytes held against a limit, for memory that calls
// in progress pin outside the cache (response buffers, evicted tables still
// being sent). Calls acquire before they allocate and release when gRPC
// drops the bytes, so the total can be refused up front instead of growing.
//
// Thread-safe (lock-free).
#ifndef POSENC_CORE_RUNTIME_BYTE_BUDGET_H_
#define POSENC_CORE_RUNTIME_BYTE_BUDGET_H_

#include <atomic>
#include <cstdint>

namespace posenc {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t limit) : limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Takes `bytes` if they fit under the limit; false (taking nothing) if not.
  bool TryAcquire(uint64_t bytes) {
    uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ || used > limit_ - bytes) return false;
    } while (!used_.compare_exchange_weak(used, used + bytes,
                                          std::memory_order_relaxed));
    return true;
  }

  // Takes `bytes` even past the limit: for memory that is already allocated
  // and must be counted (an evicted table a call still sends). Later
  // TryAcquire calls fail until enough is released.
  void ForceAcquire(uint64_t bytes) {
    used_.fetch_add(bytes, std::memory_order_relaxed);
  }

  // Returns bytes taken by TryAcquire or ForceAcquire.
  void Release(uint64_t bytes) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
  }

  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_BYTE_BUDGET_H_
