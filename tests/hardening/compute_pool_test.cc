// ComputePool under contention: tasks posted from many threads all run,
// each exactly once, and the destructor runs every task already posted; the
// queue refuses work past its byte bound, serves owners in turn, and
// ParallelFor runs every chunk once, even from inside the pool.
#include "core/runtime/compute_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/runtime/limit_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

TEST(ComputePoolTest, TasksFromManyThreads_EachRunsOnce) {
  constexpr int kPosters = 8, kTasksEach = 2000;
  std::vector<std::atomic<int>> runs(kPosters * kTasksEach);
  {
    ComputePool pool(3);
    std::vector<std::thread> posters;
    for (int p = 0; p < kPosters; ++p) {
      posters.emplace_back([&, p] {
        for (int k = 0; k < kTasksEach; ++k) {
          pool.Post([&runs, i = p * kTasksEach + k] { ++runs[i]; });
        }
      });
    }
    for (auto& t : posters) t.join();
  }  // the destructor drains the queue
  for (const auto& r : runs) ASSERT_EQ(r.load(), 1);
}

TEST(ComputePoolTest, TasksPostingTasks_AllRunBeforeDestruction) {
  std::atomic<int> done{0};
  int plain_counter = 0;  // written by tasks, read after the pool is gone
  {
    ComputePool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.Post([&] {
        pool.Post([&] { ++done; });
        ++done;
      });
    }
    pool.Post([&] { plain_counter = 42; });
    while (done.load() < 200) std::this_thread::yield();
  }
  EXPECT_EQ(done.load(), 200);
  EXPECT_EQ(plain_counter, 42);
}

// Blocks the pool's only thread until released, so tasks queue behind it.
class BlockedPool {
 public:
  explicit BlockedPool(uint64_t max_queued_bytes)
      : pool_(ComputePool::Options{1, max_queued_bytes}) {
    pool_.Post([this] { release_.WaitForNotification(); });
    while (pool_.GetStats().running_tasks == 0) std::this_thread::yield();
  }
  ~BlockedPool() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }
  ComputePool& pool() { return pool_; }
  void Release() { release_.Notify(); }

 private:
  absl::Notification release_;
  ComputePool pool_;  // destroyed first: joins after release_ is notified
};

TEST(ComputePoolTest, QueueOverByteBound_ResourceExhaustedNamingLimit) {
  BlockedPool blocked(1000);
  ComputePool& pool = blocked.pool();
  // The first task is accepted into an empty queue whatever its size.
  EXPECT_TRUE(pool.TryPost("a", 5000, [] {}).ok());
  absl::Status refused = pool.TryPost("b", 1, [] {});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  // In core's own terms, with the limit as payload: the server adds its
  // flag's name (server/limit_flags.h, tested in server_options_test).
  EXPECT_THAT(std::string(refused.message()),
              ::testing::HasSubstr("over the limit 1000"));
  EXPECT_EQ(LimitOf(refused), Limit::kQueuedComputeBytes);
  ComputePool::Stats stats = pool.GetStats();
  EXPECT_EQ(stats.queued_tasks, 1u);
  EXPECT_EQ(stats.queued_bytes, 5000u);
  EXPECT_EQ(stats.refused, 1u);
  // A continuation is queued whatever the queue holds.
  pool.Post("b", 1, [] {});
  EXPECT_EQ(pool.GetStats().queued_tasks, 2u);
}

TEST(ComputePoolTest, Owners_ServedInTurnNotInArrivalOrder) {
  std::vector<std::string> order;  // written by the pool's one thread
  {
    BlockedPool blocked(uint64_t{1} << 30);
    ComputePool& pool = blocked.pool();
    for (int i = 0; i < 3; ++i) {
      pool.Post("flood", 1, [&order] { order.push_back("flood"); });
    }
    pool.Post("quiet", 1, [&order] { order.push_back("quiet"); });
  }  // released; the destructor runs every queued task, then joins
  // "quiet" arrived after three flood tasks but runs after the first.
  EXPECT_EQ(order,
            (std::vector<std::string>{"flood", "quiet", "flood", "flood"}));
}

TEST(ComputePoolTest, ParallelForInsidePoolTask_RunsEveryChunkOnce) {
  ComputePool pool(2);
  constexpr int kChunks = 64;
  std::vector<std::atomic<int>> runs(kChunks);
  absl::Notification done;
  // Both threads call ParallelFor at once: neither may wait for the other's
  // queued helpers.
  std::atomic<int> finished{0};
  for (int t = 0; t < 2; ++t) {
    pool.Post([&] {
      pool.ParallelFor(kChunks, [&runs](int c) { ++runs[c]; });
      if (++finished == 2) done.Notify();
    });
  }
  done.WaitForNotification();
  for (const auto& r : runs) EXPECT_EQ(r.load(), 2);
}

}  // namespace
}  // namespace posenc
