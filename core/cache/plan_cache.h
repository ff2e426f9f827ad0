// PlanCache<Plan, Spec>: the last few plans a server built, keyed by their
// spec, so a caller that sends the same spec again skips the plan's O(d)
// exact-frequency setup. Only plans are kept, never values: every call still
// computes all its rows. Instances: RealEncodingPlanCache (Encode) and
// EncodingPlanCache (GetRows' rows of tables not in the table cache).
//
//   PlanCache<RealEncodingPlan, EncodingSpec> plans(
//       [&](const EncodingSpec& s) { return RealEncodingPlan::Create(s, l); },
//       /*same=*/nullptr, /*max_entries=*/16, /*max_bytes=*/8 << 20);
//   absl::StatusOr<std::shared_ptr<const RealEncodingPlan>> p = plans.Get(s);
//
// Bounded in entries and bytes (Plan::MemoryBytes() when the plan is kept;
// a plan larger than the byte bound is built and used but not kept); least
// recently used first out. A caller cycling through more specs than it
// holds pays what every call paid before the cache: one build per call.
// Errors are never kept.
//
// Thread-safe. Plans are immutable and shared: a caller may keep using one
// after it is evicted.
#ifndef POSENC_CORE_CACHE_PLAN_CACHE_H_
#define POSENC_CORE_CACHE_PLAN_CACHE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace posenc {

template <class Plan, class Spec>
class PlanCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;  // builds, failed ones included
    uint64_t entries = 0;
    uint64_t bytes = 0;  // MemoryBytes of the kept plans
  };
  using Build = std::function<absl::StatusOr<Plan>(const Spec&)>;
  // Whether a kept plan built for the first spec serves the second; null
  // means operator==.
  using Same = std::function<bool(const Spec&, const Spec&)>;

  PlanCache(Build build, Same same, size_t max_entries, size_t max_bytes)
      : build_(std::move(build)),
        same_(std::move(same)),
        max_entries_(max_entries),
        max_bytes_(max_bytes) {}
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  // The kept plan of `spec`, or build(spec) (kept when OK and within the
  // bounds; its error as is otherwise).
  absl::StatusOr<std::shared_ptr<const Plan>> Get(const Spec& spec) {
    {
      absl::MutexLock lock(&mu_);
      if (auto it = Find(spec); it != entries_.end()) {
        std::rotate(entries_.begin(), it, it + 1);  // to the front
        ++hits_;
        return entries_.front().plan;
      }
      ++misses_;
    }
    // Built outside the lock: two callers missing the same spec at once
    // both build it (the second one kept replaces nothing; see below).
    absl::StatusOr<Plan> built = build_(spec);
    if (!built.ok()) return built.status();
    auto plan = std::make_shared<const Plan>(std::move(*built));
    const size_t bytes = plan->MemoryBytes();
    if (max_entries_ == 0 || bytes > max_bytes_) return plan;
    absl::MutexLock lock(&mu_);
    if (Find(spec) != entries_.end()) return plan;  // kept meanwhile
    while (!entries_.empty() &&
           (entries_.size() >= max_entries_ || bytes_ + bytes > max_bytes_)) {
      bytes_ -= entries_.back().bytes;
      entries_.pop_back();
    }
    entries_.insert(entries_.begin(), Entry{plan, bytes});
    bytes_ += bytes;
    return plan;
  }

  Stats GetStats() const {
    absl::MutexLock lock(&mu_);
    return Stats{hits_, misses_, entries_.size(), bytes_};
  }

 private:
  struct Entry {
    std::shared_ptr<const Plan> plan;
    size_t bytes = 0;
  };

  // A handful of entries, so a linear search.
  typename std::vector<Entry>::iterator Find(const Spec& spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return same_ ? same_(e.plan->spec(), spec) : e.plan->spec() == spec;
    });
  }

  const Build build_;
  const Same same_;
  const size_t max_entries_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  // Most recently used first.
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_PLAN_CACHE_H_
