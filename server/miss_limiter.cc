#include "server/miss_limiter.h"

#include "absl/strings/str_cat.h"

namespace posenc {

absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> MissLimiter::Acquire(
    const std::string& peer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t& n = in_progress_[peer];
    if (n >= max_per_peer_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this connection already has ", n,
          " computations in progress, the limit "
          "--max_misses_per_connection=",
          max_per_peer_, "; wait for one to finish or retry with backoff"));
    }
    ++n;
  }
  return std::make_unique<Slot>(this, peer);
}

void MissLimiter::Release(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_progress_.find(peer);
  if (--it->second == 0) in_progress_.erase(it);
}

}  // namespace posenc
