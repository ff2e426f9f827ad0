// MissLimiter in isolation, from many threads (also part of the
// ThreadSanitizer run): slots taken on one thread and released on another,
// as the service does (a handler thread takes the slot, a compute thread
// lets it go), never more than the limit per connection at once, and every
// refusal only at the limit.
#include "server/miss_limiter.h"

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/runtime/compute_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

TEST(MissLimiterTest, AtLimit_RefusedNamingFlagUntilASlotIsReleased) {
  MissLimiter limiter(2);
  auto a = limiter.Acquire("ipv4:127.0.0.1:1");
  auto b = limiter.Acquire("ipv4:127.0.0.1:1");
  ASSERT_TRUE(a.ok() && b.ok());
  auto refused = limiter.Acquire("ipv4:127.0.0.1:1");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("--max_misses_per_connection=2"));
  // Another connection has its own slots.
  EXPECT_TRUE(limiter.Acquire("ipv4:127.0.0.1:2").ok());
  a->reset();
  EXPECT_TRUE(limiter.Acquire("ipv4:127.0.0.1:1").ok());
}

TEST(MissLimiterTest, ManyThreadsTakeAndHandOff_NeverOverLimitPerPeer) {
  constexpr int kThreads = 8, kPeers = 3, kRounds = 400;
  constexpr uint32_t kLimit = 4;
  MissLimiter limiter(kLimit);
  std::atomic<int> in_use[kPeers] = {};
  std::atomic<int> worst{0}, granted{0}, refused{0}, refused_below{0};
  // Slots are released by a compute pool thread, as in the service.
  auto pool = std::make_unique<ComputePool>(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int r = 0; r < kRounds; ++r) {
        const int peer = rng() % kPeers;
        const std::string name = absl::StrCat("ipv4:10.0.0.", peer, ":5000");
        absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
            limiter.Acquire(name);
        if (!slot.ok()) {
          ++refused;
          // A refusal is only right while the peer holds the limit; slots
          // released meanwhile make this a lower bound, so count only.
          if (in_use[peer].load() < static_cast<int>(kLimit) - kThreads) {
            ++refused_below;
          }
          continue;
        }
        ++granted;
        const int now = ++in_use[peer];
        int w = worst.load();
        while (now > w && !worst.compare_exchange_weak(w, now)) {
        }
        std::shared_ptr<MissLimiter::Slot> held(std::move(*slot));
        pool->Post(name, 1, [held, &in_use, peer]() mutable {
          --in_use[peer];  // before the slot goes, as the service does
          held.reset();
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  pool.reset();  // runs every task posted, then joins
  EXPECT_LE(worst.load(), static_cast<int>(kLimit));
  EXPECT_EQ(granted.load() + refused.load(), kThreads * kRounds);
  EXPECT_EQ(refused_below.load(), 0);
  EXPECT_GT(granted.load(), 0);
  for (int p = 0; p < kPeers; ++p) {
    EXPECT_EQ(in_use[p].load(), 0);
    // Every slot came back: the limit is free again.
    std::vector<std::unique_ptr<MissLimiter::Slot>> all;
    for (uint32_t k = 0; k < kLimit; ++k) {
      auto s = limiter.Acquire(absl::StrCat("ipv4:10.0.0.", p, ":5000"));
      ASSERT_TRUE(s.ok()) << p << " " << k;
      all.push_back(std::move(*s));
    }
  }
}

}  // namespace
}  // namespace posenc
