// RealEncodingPlanCache: the last few RealEncodingPlans an Encode server
// built (core/cache/plan_cache.h), so a caller that sends the same spec
// again (a diffusion sampler's timesteps, step after step) skips the plan's
// O(half) MPFR products (~20-80 us of ~450 us for 1,024 timesteps at dim
// 320). Every Encode still computes all its rows.
//
//   RealEncodingPlanCache plans(limits, /*max_entries=*/16, 8 << 20);
//   auto plan = plans.Get(spec);  // RealEncodingPlan::Create's error, or it
//
// Thread-safe; bounds, eviction and ownership are PlanCache's.
#ifndef POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_
#define POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_

#include <cstddef>

#include "core/cache/plan_cache.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/table_spec.h"

namespace posenc {

class RealEncodingPlanCache : public PlanCache<RealEncodingPlan, EncodingSpec> {
 public:
  // `limits` is what every Create gets (a server's, fixed for its life).
  RealEncodingPlanCache(const SpecLimits& limits, size_t max_entries,
                        size_t max_bytes)
      : PlanCache(
            [limits](const EncodingSpec& spec) {
              return RealEncodingPlan::Create(spec, limits);
            },
            nullptr, max_entries, max_bytes) {}
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_REAL_ENCODING_PLAN_CACHE_H_
