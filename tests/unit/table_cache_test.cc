#include "core/cache/table_cache.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "core/cache/frequency_sketch.h"
#include "core/runtime/byte_budget.h"
#include "gtest/gtest.h"
#include "tests/common/table_specs.h"

namespace posenc {
namespace {

TableSpec Spec(uint32_t d, uint32_t max_len, double base = kDefaultBase) {
  return ::posenc::testing::PlainSpec(d, max_len, base);
}

// The whole table through the cache's public calls: Find, then
// ComputeWhole on any miss (the service instead computes outside the cache
// when Find says so; these tests drive admission and eviction directly).
std::shared_ptr<const Table> GetOrCompute(TableCache& cache,
                                          const TableSpec& spec) {
  TableCache::Lookup lookup = cache.Find(spec, spec.max_len);
  if (lookup.table != nullptr) return lookup.table;
  return cache.ComputeWhole(spec);
}

TableCache::Options Budget(uint64_t bytes) {
  TableCache::Options options;
  options.budget_bytes = bytes;
  return options;
}

TEST(TableCacheTest, SecondLookup_HitsSameTable) {
  TableCache cache(Budget(1 << 20));
  auto first = GetOrCompute(cache, Spec(16, 100));
  auto second = GetOrCompute(cache, Spec(16, 100));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);
  TableCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.computations, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.resident_bytes, 16u * 100 * 4);
}

TEST(TableCacheTest, GetIfResident_CountsOnlyHits) {
  TableCache cache(Budget(1 << 20));
  EXPECT_EQ(cache.GetIfResident(Spec(16, 100)), nullptr);
  EXPECT_EQ(cache.GetStats().misses, 0u);
  GetOrCompute(cache, Spec(16, 100));
  EXPECT_NE(cache.GetIfResident(Spec(16, 100)), nullptr);
  EXPECT_EQ(cache.GetStats().hits, 1u);
}

TEST(TableCacheTest, ShorterSpecOfCachedFamily_ServedByLongerTable) {
  TableCache cache(Budget(1 << 20));
  auto longer = GetOrCompute(cache, Spec(16, 1000));
  auto shorter = GetOrCompute(cache, Spec(16, 10));
  EXPECT_EQ(longer, shorter);
  EXPECT_EQ(cache.GetStats().hits, 1u);
  // A different base is a different family.
  auto other = GetOrCompute(cache, Spec(16, 10, 500));
  EXPECT_NE(other, longer);
  EXPECT_EQ(cache.GetStats().computations, 2u);
}

TEST(TableCacheTest, LongerTableOfFamily_ReplacesShorterOne) {
  TableCache cache(Budget(1 << 20));
  GetOrCompute(cache, Spec(16, 10));
  GetOrCompute(cache, Spec(16, 1000));
  TableCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.resident_bytes, 16u * 1000 * 4);
}

TEST(TableCacheTest, OverBudget_EvictsLeastRecentlyUsedForMoreFrequentFamily) {
  // Each table is 16 * 1000 * 4 = 64000 bytes; the budget holds two.
  TableCache cache(Budget(130000));
  auto a = GetOrCompute(cache, Spec(16, 1000, 100));
  auto b = GetOrCompute(cache, Spec(16, 1000, 200));
  GetOrCompute(cache, Spec(16, 1000, 100));  // a is now most recent
  // A newcomer asked for once is no more frequent than b: not admitted.
  EXPECT_EQ(GetOrCompute(cache, Spec(16, 1000, 300)), nullptr);
  EXPECT_EQ(cache.GetStats().rejections, 1u);
  // Asked for again, it is more frequent than b (the LRU table): b goes.
  ASSERT_NE(GetOrCompute(cache, Spec(16, 1000, 300)), nullptr);
  TableCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.admissions, 3u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_LE(stats.resident_bytes, 130000u);
  EXPECT_EQ(cache.GetIfResident(Spec(16, 1000, 100)), a);
  EXPECT_EQ(cache.GetIfResident(Spec(16, 1000, 200)), nullptr);
  // The evicted table stays valid for whoever still holds it.
  EXPECT_EQ(b->rows(), 1000u);
}

TEST(TableCacheTest, TableLargerThanBudget_NotCachedReturnsNull) {
  TableCache cache(Budget(1 << 20));
  EXPECT_FALSE(cache.Admits(Spec(512, 1000)));  // 2 MB
  EXPECT_EQ(GetOrCompute(cache, Spec(512, 1000)), nullptr);
  TableCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.computations, 0u);
}

TEST(TableCacheTest, ConcurrentMissesOfOneSpec_ComputeOnce) {
  TableCache cache(Budget(uint64_t{256} << 20));
  const TableSpec spec = Spec(512, 40000);  // 80 MB: long enough to overlap
  constexpr int kThreads = 8;
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<std::shared_ptr<const Table>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (start->Block()) delete start;
      results[t] = GetOrCompute(cache, spec);
    });
  }
  for (auto& thread : threads) thread.join();
  TableCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.computations, 1u);
  EXPECT_GT(stats.misses, 1u) << "the threads did not overlap";
  EXPECT_EQ(stats.hits + stats.misses, uint64_t{kThreads});
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
}

TEST(TableCacheTest, ConcurrentDistinctSpecs_StayWithinBudget) {
  const uint64_t budget = 1 << 20;
  TableCache cache(Budget(budget));
  std::atomic<bool> over_budget{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        GetOrCompute(cache, Spec(64, 1000, 2.0 + t * 100 + i));
        if (cache.GetStats().resident_bytes > budget) over_budget = true;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(over_budget);
  TableCache::Stats stats = cache.GetStats();
  EXPECT_GT(stats.evictions + stats.rejections, 0u);
}

TEST(TableCacheTest, FewRowsOfMissingTable_ComputeRowsNotTable) {
  TableCache cache(Budget(uint64_t{1} << 30));
  const TableSpec big = Spec(1024, 131072);  // 512 MiB: admissible
  TableCache::Lookup lookup = cache.Find(big, 1);
  EXPECT_EQ(lookup.table, nullptr);
  EXPECT_FALSE(lookup.compute_whole);
  EXPECT_EQ(cache.GetStats().misses, 1u);
  EXPECT_EQ(cache.GetStats().computations, 0u);
}

TEST(TableCacheTest, AnEighthOfTheTableOrMore_ComputeWhole) {
  TableCache cache(Budget(1 << 20));
  EXPECT_TRUE(cache.Find(Spec(16, 1000), 1000).compute_whole);  // GetTable
  EXPECT_TRUE(cache.Find(Spec(16, 1000), 125).compute_whole);
  EXPECT_FALSE(cache.Find(Spec(16, 1000), 124).compute_whole);
  // Never for a table the budget cannot hold.
  EXPECT_FALSE(cache.Find(Spec(512, 1000), 1000).compute_whole);
}

TEST(TableCacheTest, RowsRentedPastOneEighth_NextMissComputesWhole) {
  TableCache cache(Budget(1 << 20));
  const TableSpec spec = Spec(16, 800);  // buys after 800 / 8 = 100 rows
  for (int call = 0; call < 99; ++call) {
    ASSERT_FALSE(cache.Find(spec, 1).compute_whole) << "call " << call;
    cache.RecordRowsComputed(spec, 1);
  }
  EXPECT_TRUE(cache.Find(spec, 1).compute_whole);
  EXPECT_EQ(cache.GetStats().rows_computed_outside, 99u);
  ASSERT_NE(cache.ComputeWhole(spec), nullptr);
  EXPECT_NE(cache.Find(spec, 1).table, nullptr);
}

TEST(TableCacheTest, FloodOfOneOffSpecs_HotTableStaysResident) {
  // Room for four 64000-byte tables.
  TableCache cache(Budget(4 * 64000));
  const TableSpec hot = Spec(16, 1000, 10000);
  auto table = GetOrCompute(cache, hot);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(GetOrCompute(cache, hot), table);
  for (int i = 0; i < 500; ++i) {
    GetOrCompute(cache, Spec(16, 1000, 20000 + i));  // each asked for once
    ASSERT_EQ(cache.GetIfResident(hot), table) << "after one-off " << i;
  }
  // The hot table, three one-offs into free space, then (bar the rare
  // one-off whose sketch estimate collides upward) only rejections.
  TableCache::Stats stats = cache.GetStats();
  EXPECT_GE(stats.admissions, 4u);
  EXPECT_LE(stats.admissions, 10u);
  EXPECT_EQ(stats.admissions + stats.rejections, 501u);
  EXPECT_LE(stats.resident_bytes, 4u * 64000);
}

TEST(TableCacheTest, EvictedTableStillHeld_ChargedUntilReleased) {
  ByteBudget pinned(1 << 30);
  TableCache::Options options = Budget(130000);  // two 64000-byte tables
  options.pinned = &pinned;
  TableCache cache(options);
  auto held = GetOrCompute(cache, Spec(16, 1000, 100));  // a call sends it
  GetOrCompute(cache, Spec(16, 1000, 200));
  GetOrCompute(cache, Spec(16, 1000, 200));
  GetOrCompute(cache, Spec(16, 1000, 300));  // rejected: as frequent as 100
  GetOrCompute(cache, Spec(16, 1000, 300));
  GetOrCompute(cache, Spec(16, 1000, 300));  // now more frequent: 100 goes
  ASSERT_EQ(cache.GetIfResident(Spec(16, 1000, 100)), nullptr);
  EXPECT_EQ(pinned.used(), 64000u);
  held.reset();  // the last holder lets go
  EXPECT_EQ(pinned.used(), 0u);
}

TEST(FrequencySketchTest, CountsThenHalves) {
  FrequencySketch sketch(256, 1000);
  for (int i = 0; i < 10; ++i) sketch.Add(42);
  EXPECT_GE(sketch.Estimate(42), 10u);
  EXPECT_LE(sketch.Estimate(42), 10u + 2);  // depth 4: collisions are rare
  EXPECT_EQ(sketch.Estimate(43), 0u);
  sketch.Add(7, 990);  // 1000 added in all: every counter halves
  EXPECT_EQ(sketch.resets(), 1u);
  EXPECT_EQ(sketch.Estimate(42), 5u);
}

}  // namespace
}  // namespace posenc
