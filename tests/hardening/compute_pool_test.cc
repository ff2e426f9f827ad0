// ComputePool under contention: tasks posted from many threads all run,
// each exactly once, and the destructor runs every task already posted.
#include "server/compute_pool.h"

#include <atomic>
#include <thread>
#include <vector>

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

}  // namespace
}  // namespace posenc
