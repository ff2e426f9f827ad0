#include "core/runtime/buffer_reserve.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

namespace posenc {
namespace {

constexpr size_t kPageBytes = 4096;
// MADV_POPULATE_WRITE (Linux 5.14); older headers lack the constant.
constexpr int kMadvPopulateWrite = 23;

template <typename Mappings>
void UnmapAll(const Mappings& mappings) {
  for (const auto& m : mappings) munmap(m.p, m.size);
}

}  // namespace

BufferReserve::~BufferReserve() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  refill_wake_.notify_all();
  if (refill_thread_.joinable()) refill_thread_.join();
  UnmapAll(kept_);
}

size_t BufferReserve::RefillWantedLocked() const {
  if (!refill_ || stopping_ || held_ >= bound_) return 0;
  const uint64_t missing = (bound_ - held_) / kPageBytes * kPageBytes;
  return missing >= kMinKeptBytes ? static_cast<size_t>(missing) : 0;
}

void BufferReserve::RefillLoop() {
  // The lowest priority: refilling only uses CPU nobody else wants.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    refill_wake_.wait(lock,
                      [this] { return stopping_ || RefillWantedLocked() > 0; });
    if (stopping_) return;
    // A quiet spell first: the call that took a buffer is computing and
    // sending now. A later Take moves the end of the spell.
    const auto quiet_at = last_take_ + kRefillQuiet;
    if (std::chrono::steady_clock::now() < quiet_at) {
      refill_wake_.wait_until(lock, quiet_at, [this] { return stopping_; });
      continue;
    }
    const size_t size = RefillWantedLocked();
    lock.unlock();
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      // Out of memory now: try again on the next Take.
      lock.lock();
      refill_wake_.wait(lock);
      continue;
    }
    if (madvise(p, size, kMadvPopulateWrite) != 0) {
      // Kernels before 5.14: fault each page in by writing it.
      auto* bytes = static_cast<volatile std::byte*>(p);
      for (size_t at = 0; at < size; at += kPageBytes) bytes[at] = std::byte{0};
    }
    lock.lock();
    refilled_bytes_ += size;
    lock.unlock();
    Give(static_cast<std::byte*>(p), size);
    lock.lock();
  }
}

void BufferReserve::SetRefill(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    refill_ = on;
    if (on && !refill_thread_.joinable()) {
      refill_thread_ = std::thread([this] { RefillLoop(); });
    }
  }
  refill_wake_.notify_all();
}

std::byte* BufferReserve::Take(size_t size) {
  std::vector<Kept> unmaps;
  std::byte* taken = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_take_ = std::chrono::steady_clock::now();
    size_t best = kept_.size();
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (kept_[i].size >= size &&
          (best == kept_.size() || kept_[i].size < kept_[best].size)) {
        best = i;
      }
    }
    if (best == kept_.size()) {
      ++misses_;
      return nullptr;
    }
    ++reuses_;
    Kept chosen = kept_[best];
    kept_.erase(kept_.begin() + static_cast<ptrdiff_t>(best));
    held_ -= chosen.size;
    taken = chosen.p;
    const size_t tail = chosen.size - size;
    if (tail >= kMinKeptBytes) {
      // Keeps the warm tail, in the taken mapping's place in age order.
      kept_.insert(kept_.begin() + static_cast<ptrdiff_t>(best),
                   Kept{chosen.p + size, tail});
      held_ += tail;
    } else if (tail > 0) {
      unmaps.push_back({chosen.p + size, tail});
      unmapped_bytes_ += tail;
    }
  }
  UnmapAll(unmaps);
  refill_wake_.notify_all();
  return taken;
}

void BufferReserve::Give(std::byte* p, size_t size) {
  std::vector<Kept> unmaps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (size < kMinKeptBytes || size > bound_) {
      unmaps.push_back({p, size});
      unmapped_bytes_ += size;
    } else {
      EvictLocked(size, &unmaps);
      kept_.push_back({p, size});
      held_ += size;
    }
  }
  UnmapAll(unmaps);
}

void BufferReserve::SetBound(uint64_t bound_bytes) {
  std::vector<Kept> unmaps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bound_ = bound_bytes;
    EvictLocked(0, &unmaps);
  }
  UnmapAll(unmaps);
  refill_wake_.notify_all();
}

void BufferReserve::EvictLocked(uint64_t incoming, std::vector<Kept>* out) {
  size_t evicted = 0;
  while (evicted < kept_.size() && held_ + incoming > bound_) {
    const Kept& oldest = kept_[evicted++];
    out->push_back({oldest.p, oldest.size});
    held_ -= oldest.size;
    unmapped_bytes_ += oldest.size;
  }
  kept_.erase(kept_.begin(), kept_.begin() + static_cast<ptrdiff_t>(evicted));
}

BufferReserve::Stats BufferReserve::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats;
  stats.held_bytes = held_;
  stats.held_buffers = kept_.size();
  stats.bound_bytes = bound_;
  stats.reuses = reuses_;
  stats.misses = misses_;
  stats.unmapped_bytes = unmapped_bytes_;
  stats.refilled_bytes = refilled_bytes_;
  return stats;
}

BufferReserve& WarmReserve() {
  static BufferReserve* const reserve = new BufferReserve(0);
  return *reserve;
}

}  // namespace posenc
