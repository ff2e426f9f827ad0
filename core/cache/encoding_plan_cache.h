// EncodingPlanCache: the last few EncodingPlans a server built for rows it
// computes outside the table cache (GetRows of a table that is not
// resident), keyed by table family (TableSpec::SameFamily: rows do not
// depend on max_len), so a caller asking for a few rows again and again
// pays the plan's d/2 exact frequencies once, not per call (a d = 65536
// plan takes ~12 ms to build, a one-row answer microseconds).
//
//   EncodingPlanCache plans(/*max_entries=*/16, /*max_bytes=*/16 << 20);
//   std::shared_ptr<const EncodingPlan> plan = *plans.Get(spec);
//   ComputePositions(*plan, positions, out);
//
// Precondition of Get: ValidateSpec(spec) is OK (building cannot fail).
// A kept plan's bytes are counted when it is kept; a plan used for ranges
// of >= 16 rows grows by its angle-addition table (<= 1 MiB) afterwards,
// which GetRows (one row at a time) never builds.
// Thread-safe; bounds, eviction and ownership are PlanCache's.
#ifndef POSENC_CORE_CACHE_ENCODING_PLAN_CACHE_H_
#define POSENC_CORE_CACHE_ENCODING_PLAN_CACHE_H_

#include <cstddef>

#include "core/cache/plan_cache.h"
#include "core/plan/encoding_plan.h"
#include "core/spec/table_spec.h"

namespace posenc {

class EncodingPlanCache : public PlanCache<EncodingPlan, TableSpec> {
 public:
  EncodingPlanCache(size_t max_entries, size_t max_bytes)
      : PlanCache(
            [](const TableSpec& spec) -> absl::StatusOr<EncodingPlan> {
              return EncodingPlan(spec);
            },
            [](const TableSpec& kept, const TableSpec& spec) {
              return kept.SameFamily(spec);
            },
            max_entries, max_bytes) {}
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_ENCODING_PLAN_CACHE_H_
