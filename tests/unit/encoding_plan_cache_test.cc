// EncodingPlanCache: GetRows' kept table plans
// (core/cache/encoding_plan_cache.h) on real plans: one plan per table
// family whatever max_len, the bytes of a fresh plan, the byte bound, and
// MemoryBytes counting what a plan holds.
#include "core/cache/encoding_plan_cache.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/plan/encoding.h"
#include "core/plan/encoding_plan.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"

namespace posenc {
namespace {

TableSpec Spec(uint32_t d, uint32_t max_len) {
  TableSpec s;
  s.d = d;
  s.max_len = max_len;
  return s;
}

std::vector<std::byte> Rows(const EncodingPlan& plan,
                            const std::vector<uint32_t>& positions) {
  std::vector<std::byte> out(positions.size() * plan.spec().row_bytes());
  ComputePositions(plan, positions, out.data());
  return out;
}

TEST(EncodingPlanCacheTest, SameFamilyOtherMaxLen_OnePlanTheBytesOfAFreshOne) {
  EncodingPlanCache cache(4, size_t{16} << 20);
  auto first = cache.Get(Spec(512, 1 << 20));
  auto second = cache.Get(Spec(512, 1 << 24));  // rows do not depend on it
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());
  const EncodingPlanCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.bytes, (*first)->MemoryBytes());
  const std::vector<uint32_t> positions = {0, 2, 4095, 1u << 24};
  EXPECT_EQ(Rows(**second, positions),
            Rows(EncodingPlan(Spec(512, 1 << 24)), positions));
}

TEST(EncodingPlanCacheTest, OtherBaseDtypeOrRope_EachItsOwnPlan) {
  EncodingPlanCache cache(8, size_t{16} << 20);
  const TableSpec a = Spec(64, 100);
  TableSpec b = a;
  b.base = 500000;
  TableSpec c = a;
  c.dtype = DType::kFloat64;
  TableSpec r = a;
  r.layout = Layout::kRotateHalf;
  auto rope = std::make_shared<RopeScaling>();
  rope->type = RopeType::kLinear;
  rope->factor = 4;
  r.rope = rope;
  for (const TableSpec& s : {a, b, c, r}) {
    auto plan = cache.Get(s);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE((*plan)->spec().SameFamily(s)) << s.DebugString();
    EXPECT_EQ(Rows(**plan, {7}), Rows(EncodingPlan(s), {7}));
  }
  EXPECT_EQ(cache.GetStats().misses, 4u);
  EXPECT_EQ(cache.GetStats().hits, 0u);
  EXPECT_EQ(cache.GetStats().entries, 4u);
}

TEST(EncodingPlanCacheTest, PlanOverTheByteBound_UsedButNotKept) {
  const size_t small = EncodingPlan(Spec(8, 1)).MemoryBytes();
  EncodingPlanCache cache(4, small * 2);
  auto big = cache.Get(Spec(4096, 1));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(Rows(**big, {3}), Rows(EncodingPlan(Spec(4096, 1)), {3}));
  EXPECT_EQ(cache.GetStats().entries, 0u);
  ASSERT_TRUE(cache.Get(Spec(8, 1)).ok());
  ASSERT_TRUE(cache.Get(Spec(8, 1)).ok());
  EXPECT_EQ(cache.GetStats().entries, 1u);
  EXPECT_EQ(cache.GetStats().hits, 1u);
  EXPECT_LE(cache.GetStats().bytes, small * 2);
}

TEST(EncodingPlanMemoryTest, Plans_CountTheirWordsInnerPlanAndAngleTable) {
  const EncodingPlan plain(Spec(65536, 1));
  // Three words per frequency at least (w0, w1, w2), d/2 frequencies.
  EXPECT_GT(plain.MemoryBytes(), size_t{32768} * 3 * sizeof(double));
  EXPECT_LT(plain.MemoryBytes(), size_t{32768} * 128);

  TableSpec rope = Spec(65536, 1);
  rope.layout = Layout::kRotateHalf;  // an inner concat_cos_sin plan too
  EXPECT_GT(EncodingPlan(rope).MemoryBytes(), plain.MemoryBytes());

  // A range of rows builds the angle-addition table (<= 1 MiB).
  const EncodingPlan ranged(Spec(512, 64));
  const size_t before = ranged.MemoryBytes();
  std::vector<std::byte> rows(64 * ranged.spec().row_bytes());
  ranged.ComputeRows(0, 64, rows.data());
  EXPECT_GT(ranged.MemoryBytes(), before);
  EXPECT_LE(ranged.MemoryBytes(), before + (size_t{1} << 20) + 4096);
}

}  // namespace
}  // namespace posenc
