// RealEncodingPlanCache: the last few RealEncodingPlans an Encode server
// built, so a caller that sends the same spec again (a diffusion sampler's
// timesteps, step after step) skips the plan's O(half) MPFR products
// (~20-80 us of ~450 us for 1,024 timesteps at dim 320). Only plans are
// kept, never values: every Encode still computes all its rows.
//
// Bounded in entries and bytes (a plan larger than the byte bound is
// built and used but not kept); least recently used first out. A caller
// cycling through more specs than it holds pays what every call paid
// before the cache: one Create per call.
//
// Thread-safe. Plans are immutable and shared: a caller may keep using
// one after it is evicted.
#ifndef POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_
#define POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/table_spec.h"

namespace posenc {

class RealEncodingPlanCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;  // Create calls, failed ones included
    uint64_t entries = 0;
    uint64_t bytes = 0;  // MemoryBytes of the kept plans
  };

  // `limits` is what every Create gets (a server's, fixed for its life).
  RealEncodingPlanCache(const SpecLimits& limits, size_t max_entries,
                        size_t max_bytes)
      : limits_(limits), max_entries_(max_entries), max_bytes_(max_bytes) {}
  RealEncodingPlanCache(const RealEncodingPlanCache&) = delete;
  RealEncodingPlanCache& operator=(const RealEncodingPlanCache&) = delete;

  // The kept plan of `spec`, or RealEncodingPlan::Create(spec, limits)
  // (kept when OK and within the bounds; its error as is otherwise).
  absl::StatusOr<std::shared_ptr<const RealEncodingPlan>> Get(
      const EncodingSpec& spec);

  Stats GetStats() const;

 private:
  struct Entry {
    std::shared_ptr<const RealEncodingPlan> plan;
    size_t bytes = 0;
  };

  const SpecLimits limits_;
  const size_t max_entries_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  // Most recently used first; a handful of entries, so a linear search.
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_
