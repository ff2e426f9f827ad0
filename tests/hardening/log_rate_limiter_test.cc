// LogRateLimiter (server/log_rate_limiter.h) on a synthetic clock, and under
// threads: at most the limit per window, and an exact count of the rest.
#include "server/log_rate_limiter.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace posenc {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000000);

TEST(LogRateLimiterTest, WithinAWindow_LetsTheLimitThroughAndCountsTheRest) {
  LogRateLimiter limiter(3, absl::Seconds(1), kT0);
  int logged = 0;
  for (int i = 0; i < 10; ++i) {
    logged += limiter.Admit(kT0 + absl::Milliseconds(10 * i));
  }
  EXPECT_EQ(logged, 3);
  const LogRateLimiter::Suppressed taken =
      limiter.TakeSuppressed(kT0 + absl::Milliseconds(500));
  EXPECT_EQ(taken.lines, 7u);
  // From the first held-back line (at 30 ms) to the report.
  EXPECT_EQ(taken.over, absl::Milliseconds(470));
  EXPECT_EQ(limiter.TakeSuppressed(kT0 + absl::Milliseconds(600)).lines, 0u);
}

TEST(LogRateLimiterTest, NextWindow_LetsTheLimitThroughAgain) {
  LogRateLimiter limiter(2, absl::Seconds(1), kT0);
  int logged = 0;
  for (int i = 0; i < 5; ++i) {
    logged += limiter.Admit(kT0 + absl::Milliseconds(i));
  }
  EXPECT_EQ(logged, 2);
  EXPECT_TRUE(limiter.Admit(kT0 + absl::Milliseconds(1500)));
  EXPECT_TRUE(limiter.Admit(kT0 + absl::Milliseconds(1600)));
  EXPECT_FALSE(limiter.Admit(kT0 + absl::Milliseconds(1700)));
  // Both windows' held-back lines, in one report.
  EXPECT_EQ(limiter.TakeSuppressed(kT0 + absl::Seconds(2)).lines, 4u);
}

TEST(LogRateLimiterTest, ZeroLimit_HoldsEveryLineBack) {
  LogRateLimiter limiter(0, absl::Seconds(1), kT0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(limiter.Admit(kT0 + absl::Seconds(i)));
  }
  EXPECT_EQ(limiter.TakeSuppressed(kT0 + absl::Seconds(5)).lines, 4u);
}

TEST(LogRateLimiterTest, SetMaxLines_TakesEffectAndIsClamped) {
  LogRateLimiter limiter(1, absl::Seconds(1), kT0);
  limiter.set_max_lines(4);
  int logged = 0;
  for (int i = 0; i < 6; ++i) logged += limiter.Admit(kT0);
  EXPECT_EQ(logged, 4);
  limiter.set_max_lines(~0u);
  EXPECT_EQ(limiter.max_lines(), LogRateLimiter::kMaxLinesLimit);
}

// 8 threads ask for 20,000 lines each over the real clock: every line is
// either let through or counted exactly once, and the lines let through stay
// within the limit per window elapsed.
TEST(LogRateLimiterTest, Threads_EveryLineLoggedOrCountedOnce) {
  constexpr int kThreads = 8, kLinesPerThread = 20000;
  constexpr uint32_t kLimit = 50;
  const absl::Time start = absl::Now();
  LogRateLimiter limiter(kLimit, absl::Milliseconds(100), start);
  std::atomic<uint64_t> logged{0}, reported{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kLinesPerThread; ++i) {
        logged += limiter.Admit();
      }
    });
  }
  // A periodic reporter races with them.
  std::atomic<bool> done{false};
  std::thread reporter([&] {
    while (!done.load()) {
      reported += limiter.TakeSuppressed().lines;
      std::this_thread::yield();
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  reporter.join();
  reported += limiter.TakeSuppressed().lines;
  const int64_t windows = (absl::Now() - start) / absl::Milliseconds(100) + 1;
  EXPECT_EQ(logged + reported, uint64_t{kThreads} * kLinesPerThread);
  EXPECT_GE(logged.load(), kLimit);
  EXPECT_LE(logged.load(), kLimit * windows);
}

}  // namespace
}  // namespace posenc
