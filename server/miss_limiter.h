// MissLimiter: caps the computations one client connection has in progress
// (calls waiting for or using the compute pool), so one connection cannot
// take the whole pool however many streams it opens. Cache hits never take
// a slot.
//
// Thread-safe. Slots release themselves (MissLimiter::Slot is RAII); the
// limiter must outlive them.
#ifndef POSENC_SERVER_MISS_LIMITER_H_
#define POSENC_SERVER_MISS_LIMITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace posenc {

class MissLimiter {
 public:
  // One computation in progress for a connection, released on destruction.
  class Slot {
   public:
    Slot(MissLimiter* limiter, std::string peer)
        : limiter_(limiter), peer_(std::move(peer)) {}
    ~Slot() { limiter_->Release(peer_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    MissLimiter* const limiter_;
    const std::string peer_;
  };

  explicit MissLimiter(uint32_t max_per_peer) : max_per_peer_(max_per_peer) {}

  // A slot for `peer` (gRPC's peer string: one per connection), or
  // RESOURCE_EXHAUSTED naming the limit and its flag.
  absl::StatusOr<std::unique_ptr<Slot>> Acquire(const std::string& peer);

  uint32_t max_per_peer() const { return max_per_peer_; }

 private:
  void Release(const std::string& peer);

  const uint32_t max_per_peer_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, uint32_t> in_progress_ ABSL_GUARDED_BY(mu_);
};

}  // namespace posenc

#endif  // POSENC_SERVER_MISS_LIMITER_H_
