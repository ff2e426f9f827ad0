// RealEncodingPlanCache: Encode's kept plans
// (core/cache/real_encoding_plan_cache.h) on real plans: a kept plan gives the
// same bytes as a fresh one, the bounds hold, errors are never kept.
#include "core/cache/real_encoding_plan_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"

namespace posenc {
namespace {

EncodingSpec Timesteps(uint32_t dim, double scale = 1000) {
  EncodingSpec s;
  s.dim = dim;
  s.layout = Layout::kConcatCosSin;
  s.scale = scale;
  return s;
}

std::vector<std::byte> Rows(const RealEncodingPlan& plan,
                            const std::vector<double>& points) {
  std::vector<std::byte> out(points.size() * plan.spec().row_bytes());
  plan.ComputeRows(points, out.data());
  return out;
}

TEST(RealEncodingPlanCacheTest, SameSpecTwice_OnePlanAndTheBytesOfAFreshOne) {
  RealEncodingPlanCache cache({}, 4, size_t{1} << 20);
  auto first = cache.Get(Timesteps(320));
  auto second = cache.Get(Timesteps(320));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
  const RealEncodingPlanCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, (*first)->MemoryBytes());
  EXPECT_GT(stats.bytes, 160 * 3 * sizeof(double));  // 160 frequencies' words

  auto fresh = RealEncodingPlan::Create(Timesteps(320), {});
  ASSERT_TRUE(fresh.ok());
  const std::vector<double> ts = {0.0, 0.25, 0.5, 999.5 / 1000, 1.0};
  EXPECT_EQ(Rows(**second, ts), Rows(*fresh, ts));
}

TEST(RealEncodingPlanCacheTest, SpecsThatDifferInOneField_EachItsOwnPlan) {
  RealEncodingPlanCache cache({}, 8, size_t{1} << 20);
  EncodingSpec a = Timesteps(64);
  EncodingSpec b = a;
  b.shift = 1;  // diffusers' downscale_freq_shift
  EncodingSpec c = a;
  c.dtype = DType::kBFloat16;
  auto pa = cache.Get(a);
  auto pb = cache.Get(b);
  auto pc = cache.Get(c);
  ASSERT_TRUE(pa.ok() && pb.ok() && pc.ok());
  EXPECT_NE(pa->get(), pb->get());
  EXPECT_NE(pa->get(), pc->get());
  EXPECT_EQ((*pb)->spec(), b);
  EXPECT_EQ((*pc)->spec(), c);
  const std::vector<double> ts = {0.5};
  EXPECT_NE(Rows(**pa, ts), Rows(**pb, ts));
  EXPECT_EQ(cache.GetStats().misses, 3u);
  EXPECT_EQ(cache.GetStats().hits, 0u);
}

TEST(RealEncodingPlanCacheTest, MoreSpecsThanEntries_LeastRecentlyUsedLeaves) {
  RealEncodingPlanCache cache({}, 2, size_t{1} << 20);
  ASSERT_TRUE(cache.Get(Timesteps(8)).ok());   // miss: [8]
  ASSERT_TRUE(cache.Get(Timesteps(16)).ok());  // miss: [16, 8]
  ASSERT_TRUE(cache.Get(Timesteps(8)).ok());   // hit:  [8, 16]
  auto kept = cache.Get(Timesteps(16));        // hit:  [16, 8]
  ASSERT_TRUE(cache.Get(Timesteps(32)).ok());  // miss: [32, 16], 8 leaves
  EXPECT_EQ(cache.GetStats().hits, 2u);
  EXPECT_EQ(cache.GetStats().misses, 3u);
  EXPECT_EQ(cache.GetStats().entries, 2u);
  ASSERT_TRUE(cache.Get(Timesteps(16)).ok());  // still kept
  EXPECT_EQ(cache.GetStats().hits, 3u);
  ASSERT_TRUE(cache.Get(Timesteps(8)).ok());  // built again
  EXPECT_EQ(cache.GetStats().misses, 4u);
  EXPECT_EQ(cache.GetStats().entries, 2u);
  // A plan handed out stays usable after it leaves.
  ASSERT_TRUE(cache.Get(Timesteps(64)).ok());
  ASSERT_TRUE(cache.Get(Timesteps(128)).ok());
  EXPECT_EQ(Rows(**kept, {3.0}).size(), 16 * sizeof(float));
}

TEST(RealEncodingPlanCacheTest, PlanOverTheByteBound_UsedButNotKept) {
  auto small = RealEncodingPlan::Create(Timesteps(8), {});
  ASSERT_TRUE(small.ok());
  // Room for the dim-8 plan, not for the dim-4096 one.
  RealEncodingPlanCache cache({}, 4, small->MemoryBytes() * 2);
  auto big = cache.Get(Timesteps(4096, 1));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ((*big)->spec().dim, 4096u);
  EXPECT_EQ(cache.GetStats().entries, 0u);
  EXPECT_EQ(cache.GetStats().bytes, 0u);
  ASSERT_TRUE(cache.Get(Timesteps(4096, 1)).ok());
  EXPECT_EQ(cache.GetStats().misses, 2u);
  ASSERT_TRUE(cache.Get(Timesteps(8)).ok());
  ASSERT_TRUE(cache.Get(Timesteps(8)).ok());
  EXPECT_EQ(cache.GetStats().entries, 1u);
  EXPECT_EQ(cache.GetStats().hits, 1u);
  EXPECT_LE(cache.GetStats().bytes, small->MemoryBytes() * 2);
}

TEST(RealEncodingPlanCacheTest, BadSpec_InvalidArgumentEveryTimeNeverKept) {
  RealEncodingPlanCache cache({}, 4, size_t{1} << 20);
  EncodingSpec s = Timesteps(8);
  s.shift = 3.9999;  // f_3 = 10000^(-3/0.0001): far below 2^-800
  for (int k = 0; k < 2; ++k) {
    auto got = cache.Get(s);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("spec.shift"), std::string::npos)
        << got.status();
  }
  EXPECT_EQ(cache.GetStats().misses, 2u);
  EXPECT_EQ(cache.GetStats().entries, 0u);
}

TEST(RealEncodingPlanCacheTest, ManyThreadsFewSpecs_EveryPlanMatchesItsSpec) {
  RealEncodingPlanCache cache({}, 2, size_t{1} << 20);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        const EncodingSpec s = Timesteps(8u << ((t + k) % 3));
        auto got = cache.Get(s);
        if (!got.ok() || (*got)->spec() != s) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  const RealEncodingPlanCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.hits + stats.misses, 800u);
  EXPECT_LE(stats.entries, 2u);
}

}  // namespace
}  // namespace posenc
