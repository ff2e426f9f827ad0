#include "core/cache/real_encoding_plan_cache.h"

#include <algorithm>
#include <utility>

namespace posenc {

absl::StatusOr<std::shared_ptr<const RealEncodingPlan>>
RealEncodingPlanCache::Get(const EncodingSpec& spec) {
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->plan->spec() == spec) {
        std::rotate(entries_.begin(), it, it + 1);  // to the front
        ++hits_;
        return entries_.front().plan;
      }
    }
    ++misses_;
  }
  // Built outside the lock: two callers missing the same spec at once
  // both build it (the second one kept replaces nothing; see below).
  absl::StatusOr<RealEncodingPlan> built =
      RealEncodingPlan::Create(spec, limits_);
  if (!built.ok()) return built.status();
  auto plan = std::make_shared<const RealEncodingPlan>(std::move(*built));
  const size_t bytes = plan->MemoryBytes();
  if (max_entries_ == 0 || bytes > max_bytes_) return plan;
  absl::MutexLock lock(&mu_);
  for (const Entry& e : entries_) {
    if (e.plan->spec() == spec) return plan;  // kept meanwhile
  }
  while (!entries_.empty() &&
         (entries_.size() >= max_entries_ || bytes_ + bytes > max_bytes_)) {
    bytes_ -= entries_.back().bytes;
    entries_.pop_back();
  }
  entries_.insert(entries_.begin(), Entry{plan, bytes});
  bytes_ += bytes;
  return plan;
}

RealEncodingPlanCache::Stats RealEncodingPlanCache::GetStats() const {
  absl::MutexLock lock(&mu_);
  return Stats{hits_, misses_, entries_.size(), bytes_};
}

}  // namespace posenc
