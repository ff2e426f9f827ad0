#include "core/buffer_reserve.h"

#include <sys/mman.h>

#include <utility>

namespace posenc {
namespace {

template <typename Mappings>
void UnmapAll(const Mappings& mappings) {
  for (const auto& m : mappings) munmap(m.p, m.size);
}

}  // namespace

BufferReserve::~BufferReserve() { UnmapAll(kept_); }

std::byte* BufferReserve::Take(size_t size) {
  std::vector<Kept> unmaps;
  std::byte* taken = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  return stats;
}

BufferReserve& WarmReserve() {
  static BufferReserve* const reserve = new BufferReserve(0);
  return *reserve;
}

}  // namespace posenc
