// BufferReserve on real mappings: what it keeps is still mapped and faulted
// in (mincore), what it lets go is unmapped, and it never holds more than its
// bound. Also AllocateLargeBuffer / FreeLargeBuffer through WarmReserve().
#include "core/runtime/buffer_reserve.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/runtime/large_buffer.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// A fresh anonymous mapping of `size` bytes, every page written with `fill`.
std::byte* MapWritten(size_t size, unsigned char fill) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  std::memset(p, fill, size);
  return static_cast<std::byte*>(p);
}

// Whether [p, p + size) is mapped at all (mincore fails with ENOMEM on
// unmapped pages), and how many of its pages are resident.
struct Residency {
  bool mapped = false;
  size_t resident_pages = 0;
};
Residency Resident(const std::byte* p, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((size + page - 1) / page);
  Residency r;
  if (mincore(const_cast<std::byte*>(p), size, vec.data()) != 0) {
    EXPECT_EQ(errno, ENOMEM);
    return r;
  }
  r.mapped = true;
  for (unsigned char v : vec) r.resident_pages += v & 1;
  return r;
}

size_t Pages(size_t size) {
  return size / static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Polls `pred` for up to 10 s (the refill thread runs at the lowest
// priority, so a busy machine delays it).
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 1000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST(BufferReserveTest, Refill_FillsToBoundWithResidentPagesAfterEachTake) {
  BufferReserve reserve(8 * kMiB);
  reserve.SetRefill(true);
  ASSERT_TRUE(
      Eventually([&] { return reserve.GetStats().held_bytes == 8 * kMiB; }));
  EXPECT_EQ(reserve.GetStats().refilled_bytes, 8 * kMiB);
  std::byte* p = reserve.Take(6 * kMiB);
  ASSERT_NE(p, nullptr);
  // Taken warm: every page already resident, without touching it here.
  EXPECT_EQ(Resident(p, 6 * kMiB).resident_pages, Pages(6 * kMiB));
  ASSERT_TRUE(
      Eventually([&] { return reserve.GetStats().held_bytes == 8 * kMiB; }));
  const BufferReserve::Stats stats = reserve.GetStats();
  EXPECT_EQ(stats.refilled_bytes, 14 * kMiB);
  EXPECT_LE(stats.held_bytes, stats.bound_bytes);
  munmap(p, 6 * kMiB);
  // Paused: a take is not replaced.
  reserve.SetRefill(false);
  std::byte* q = reserve.Take(4 * kMiB);
  ASSERT_NE(q, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(reserve.GetStats().refilled_bytes, 14 * kMiB);
  munmap(q, 4 * kMiB);
}

TEST(BufferReserveTest, Refill_WaitsForAQuietSpellAfterTakes) {
  BufferReserve reserve(8 * kMiB);
  reserve.SetRefill(true);
  static_assert(BufferReserve::kRefillQuiet > std::chrono::milliseconds(12));
  // A busy spell: four takes 4 ms apart. Without the quiet spell the
  // refill thread would map and fault pages in between them. A spell in
  // which the machine stalled this thread for 12 ms or more (near
  // kRefillQuiet) proves nothing, so it is tried again.
  for (int attempt = 0; attempt < 10; ++attempt) {
    ASSERT_TRUE(
        Eventually([&] { return reserve.GetStats().held_bytes == 8 * kMiB; }));
    const uint64_t refilled = reserve.GetStats().refilled_bytes;
    std::vector<std::byte*> taken;
    auto last = std::chrono::steady_clock::now();
    bool tight = true;
    for (int i = 0; i < 4; ++i) {
      taken.push_back(reserve.Take(2 * kMiB));
      ASSERT_NE(taken.back(), nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
      const auto now = std::chrono::steady_clock::now();
      tight &= now - last < std::chrono::milliseconds(12);
      last = now;
    }
    const BufferReserve::Stats during = reserve.GetStats();
    for (std::byte* p : taken) munmap(p, 2 * kMiB);
    if (!tight) continue;
    EXPECT_EQ(during.refilled_bytes, refilled);
    EXPECT_EQ(during.held_bytes, 0u);
    // Once the spell is over, the reserve is full again.
    ASSERT_TRUE(
        Eventually([&] { return reserve.GetStats().held_bytes == 8 * kMiB; }));
    EXPECT_EQ(reserve.GetStats().refilled_bytes, refilled + 8 * kMiB);
    return;
  }
  GTEST_SKIP() << "the machine stalled this thread in every busy spell";
}

TEST(BufferReserveTest, FreedWithinBound_TakenBackWarmAtSameAddress) {
  BufferReserve reserve(32 * kMiB);
  std::byte* p = MapWritten(16 * kMiB, 0xab);
  reserve.Give(p, 16 * kMiB);
  EXPECT_EQ(reserve.GetStats().held_bytes, 16 * kMiB);

  std::byte* q = reserve.Take(16 * kMiB);
  ASSERT_EQ(q, p);
  // Still mapped with every page faulted in, and the last user's bytes.
  const Residency r = Resident(q, 16 * kMiB);
  EXPECT_TRUE(r.mapped);
  EXPECT_EQ(r.resident_pages, Pages(16 * kMiB));
  EXPECT_EQ(static_cast<unsigned char>(q[16 * kMiB - 1]), 0xab);
  const BufferReserve::Stats stats = reserve.GetStats();
  EXPECT_EQ(stats.reuses, 1u);
  EXPECT_EQ(stats.held_bytes, 0u);
  EXPECT_EQ(stats.held_buffers, 0u);
  munmap(q, 16 * kMiB);
}

TEST(BufferReserveTest, ZeroBound_UnmapsEveryFreedBufferAndTakesNothing) {
  BufferReserve reserve(0);
  std::byte* p = MapWritten(4 * kMiB, 1);
  reserve.Give(p, 4 * kMiB);
  EXPECT_FALSE(Resident(p, 4 * kMiB).mapped);
  EXPECT_EQ(reserve.Take(4 * kMiB), nullptr);
  const BufferReserve::Stats stats = reserve.GetStats();
  EXPECT_EQ(stats.held_bytes, 0u);
  EXPECT_EQ(stats.reuses, 0u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.unmapped_bytes, 4 * kMiB);
}

TEST(BufferReserveTest, BufferLargerThanBound_UnmappedAtOnce) {
  BufferReserve reserve(8 * kMiB);
  std::byte* p = MapWritten(16 * kMiB, 1);
  reserve.Give(p, 16 * kMiB);
  EXPECT_FALSE(Resident(p, 16 * kMiB).mapped);
  EXPECT_EQ(reserve.GetStats().held_bytes, 0u);
}

TEST(BufferReserveTest, ManyFrees_HeldNeverPastBoundOldestUnmapped) {
  BufferReserve reserve(10 * kMiB);
  std::vector<std::byte*> given;
  for (int i = 0; i < 8; ++i) {
    given.push_back(MapWritten(4 * kMiB, static_cast<unsigned char>(i)));
    reserve.Give(given.back(), 4 * kMiB);
    EXPECT_LE(reserve.GetStats().held_bytes, 10 * kMiB) << "after " << i;
    // Room for two: the third-newest has just been unmapped (checked before
    // the next mmap can take its address again).
    if (i >= 2) {
      EXPECT_FALSE(Resident(given[i - 2], 4 * kMiB).mapped) << i;
    }
  }
  EXPECT_EQ(reserve.GetStats().held_buffers, 2u);
  for (int i = 6; i < 8; ++i) {
    EXPECT_TRUE(Resident(given[i], 4 * kMiB).mapped) << i;
    EXPECT_EQ(static_cast<int>(given[i][0]), i);
  }
  EXPECT_EQ(reserve.GetStats().unmapped_bytes, 24 * kMiB);
}

TEST(BufferReserveTest, LowerBound_UnmapsOldestDownToIt) {
  BufferReserve reserve(16 * kMiB);
  std::byte* old = MapWritten(8 * kMiB, 1);
  std::byte* young = MapWritten(8 * kMiB, 2);
  reserve.Give(old, 8 * kMiB);
  reserve.Give(young, 8 * kMiB);
  reserve.SetBound(8 * kMiB);
  EXPECT_FALSE(Resident(old, 8 * kMiB).mapped);
  EXPECT_TRUE(Resident(young, 8 * kMiB).mapped);
  reserve.SetBound(0);
  EXPECT_FALSE(Resident(young, 8 * kMiB).mapped);
  EXPECT_EQ(reserve.GetStats().held_bytes, 0u);
}

TEST(BufferReserveTest, SeveralFit_SmallestTaken) {
  BufferReserve reserve(64 * kMiB);
  std::byte* big = MapWritten(16 * kMiB, 1);
  std::byte* fits = MapWritten(4 * kMiB, 2);
  std::byte* small = MapWritten(2 * kMiB, 3);
  reserve.Give(big, 16 * kMiB);
  reserve.Give(fits, 4 * kMiB);
  reserve.Give(small, 2 * kMiB);
  EXPECT_EQ(reserve.Take(3 * kMiB), fits);
  EXPECT_EQ(reserve.GetStats().held_bytes, 18 * kMiB);
  // The 1 MiB tail of the 4 MiB mapping is too short to keep: unmapped.
  EXPECT_FALSE(Resident(fits + 3 * kMiB, kMiB).mapped);
  EXPECT_TRUE(Resident(fits, 3 * kMiB).mapped);
  munmap(fits, 3 * kMiB);
}

TEST(BufferReserveTest, LargerKept_CutToSizeWarmTailKept) {
  BufferReserve reserve(32 * kMiB);
  std::byte* p = MapWritten(12 * kMiB, 7);
  reserve.Give(p, 12 * kMiB);
  std::byte* head = reserve.Take(4 * kMiB);
  ASSERT_EQ(head, p);
  EXPECT_EQ(reserve.GetStats().held_bytes, 8 * kMiB);
  std::byte* tail = reserve.Take(8 * kMiB);
  ASSERT_EQ(tail, p + 4 * kMiB);
  EXPECT_EQ(Resident(tail, 8 * kMiB).resident_pages, Pages(8 * kMiB));
  EXPECT_EQ(reserve.GetStats().reuses, 2u);
  munmap(p, 12 * kMiB);
}

TEST(BufferReserveTest, RequestLargerThanEveryKept_TakesNothing) {
  BufferReserve reserve(32 * kMiB);
  std::byte* p = MapWritten(8 * kMiB, 1);
  reserve.Give(p, 8 * kMiB);
  EXPECT_EQ(reserve.Take(16 * kMiB), nullptr);
  EXPECT_EQ(reserve.GetStats().held_bytes, 8 * kMiB);
  EXPECT_TRUE(Resident(p, 8 * kMiB).mapped);
}

TEST(BufferReserveTest, ConcurrentGiveAndTake_BoundHeldAndBytesAccounted) {
  constexpr uint64_t kBound = 12 * kMiB;
  BufferReserve reserve(kBound);
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&reserve, &over, t] {
      for (int i = 0; i < 200; ++i) {
        const size_t size = ((i + t) % 3 + 2) * kMiB;  // 2, 3 or 4 MiB
        std::byte* p = reserve.Take(size);
        if (p == nullptr) p = MapWritten(size, 1);
        p[0] = std::byte{2};
        p[size - 1] = std::byte{3};
        reserve.Give(p, size);
        if (reserve.GetStats().held_bytes > kBound) over = true;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(over.load());
  const BufferReserve::Stats stats = reserve.GetStats();
  EXPECT_LE(stats.held_bytes, kBound);
  EXPECT_GT(stats.reuses, 0u);
  EXPECT_EQ(stats.reuses + stats.misses, 800u);
}

// The process-wide reserve behind AllocateLargeBuffer (bound 0 until set).
TEST(WarmReserveTest, LargeBufferFreedThenAllocated_SameWarmMemory) {
  WarmReserve().SetBound(32 * kMiB);
  std::byte* p = AllocateLargeBuffer(16 * kMiB);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 5, 16 * kMiB);
  const uint64_t reuses = WarmReserve().GetStats().reuses;
  FreeLargeBuffer(p, 16 * kMiB);
  std::byte* q = AllocateLargeBuffer(16 * kMiB);
  EXPECT_EQ(q, p);
  EXPECT_EQ(WarmReserve().GetStats().reuses, reuses + 1);
  EXPECT_EQ(Resident(q, 16 * kMiB).resident_pages, Pages(16 * kMiB));
  FreeLargeBuffer(q, 16 * kMiB);
  WarmReserve().SetBound(0);
  EXPECT_EQ(WarmReserve().GetStats().held_bytes, 0u);
}

TEST(WarmReserveTest, ZeroBound_LargeBufferUnmappedOnFree) {
  WarmReserve().SetBound(0);
  std::byte* p = AllocateLargeBuffer(4 * kMiB);
  ASSERT_NE(p, nullptr);
  std::memset(p, 5, 4 * kMiB);
  FreeLargeBuffer(p, 4 * kMiB);
  EXPECT_FALSE(Resident(p, 4 * kMiB).mapped);
  EXPECT_EQ(WarmReserve().GetStats().held_bytes, 0u);
}

TEST(WarmReserveTest, SmallBuffers_FromHeapNeverReserved) {
  WarmReserve().SetBound(32 * kMiB);
  const uint64_t before =
      WarmReserve().GetStats().reuses + WarmReserve().GetStats().misses;
  std::byte* p = AllocateLargeBuffer(2 * kMiB - 64);
  ASSERT_NE(p, nullptr);
  FreeLargeBuffer(p, 2 * kMiB - 64);
  const BufferReserve::Stats stats = WarmReserve().GetStats();
  EXPECT_EQ(stats.reuses + stats.misses, before);
  EXPECT_EQ(stats.held_bytes, 0u);
  WarmReserve().SetBound(0);
}

}  // namespace
}  // namespace posenc
