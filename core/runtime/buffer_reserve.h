// BufferReserve: a bounded set of freed large mappings kept mapped (their
// pages already faulted in) for the next large allocation, so a cold table
// in steady state -- a full cache evicting tables, answers computed outside
// the cache and freed after they are sent -- is written into warm memory
// instead of 4 KiB page faults on fresh pages (about half of computing a
// 16 MiB table on this project's VM; see docs/operations.md "Memory").
//
// Purpose: serves AllocateLargeBuffer / FreeLargeBuffer
// (core/runtime/large_buffer.h) through the process-wide WarmReserve(); a
// BufferReserve of its own is for tests.
//
// Ownership: Give() hands a mapping over (kept or unmapped, never returned
// to the caller); Take() hands one back to the caller, who frees it with
// munmap or by giving it back. The destructor unmaps what it holds.
// Contents of a taken mapping are whatever its last user wrote, not zeros:
// callers must write every byte they read or send.
//
// Bound: held bytes never exceed bound_bytes. Give() evicts the oldest kept
// mappings to make room for a newer one; a mapping larger than the bound is
// unmapped at once. A bound of 0 keeps nothing.
//
// Fit rule: Take(size) returns the smallest kept mapping of at least `size`
// bytes, cut to `size`: a tail of at least kMinKeptBytes stays in the reserve
// (its pages are warm too), a shorter one is unmapped. A request larger than
// every kept mapping takes nothing (the caller maps fresh memory).
//
// Refill (off until SetRefill(true)): a background thread at the lowest CPU
// priority keeps the reserve full. When a Take leaves it at least
// kMinKeptBytes below the bound, the thread waits until no Take has come for
// kRefillQuiet, then maps fresh memory for the difference, faults it in
// (MADV_POPULATE_WRITE, else a write per page) and gives it. So a cold table
// finds warm pages even when nothing was freed (a cache still filling), and
// the page faults are paid off the call's path: the wait lets the call that
// took a buffer compute and send first (faulting 16 MiB in is ~6 ms of
// kernel time, which a low priority does not keep off a 2-core machine's
// cores). Costs the bound in resident memory while enabled.
//
// Thread-safe: one mutex guards the list; mmap/munmap run outside it.
#ifndef POSENC_CORE_RUNTIME_BUFFER_RESERVE_H_
#define POSENC_CORE_RUNTIME_BUFFER_RESERVE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace posenc {

class BufferReserve {
 public:
  // Mappings below this are not worth keeping: smaller allocations come from
  // the heap (core/runtime/large_buffer.cc), so a shorter tail could never be
  // taken.
  static constexpr size_t kMinKeptBytes = size_t{2} << 20;
  // How long the refill waits after the last Take (see the top of the file):
  // about computing and sending a 16 MiB table here (~15 ms on a quiet
  // machine), and shorter than the gap between calls that a refill needs.
  static constexpr std::chrono::milliseconds kRefillQuiet{20};

  struct Stats {
    uint64_t held_bytes = 0;    // kept now
    uint64_t held_buffers = 0;  // mappings kept now
    uint64_t bound_bytes = 0;
    uint64_t reuses = 0;          // Take calls served from the reserve
    uint64_t misses = 0;          // Take calls that found nothing to fit
    uint64_t unmapped_bytes = 0;  // given, evicted or cut off, then unmapped
    uint64_t refilled_bytes = 0;  // mapped and faulted in by the refill
  };

  explicit BufferReserve(uint64_t bound_bytes) : bound_(bound_bytes) {}
  BufferReserve(const BufferReserve&) = delete;
  BufferReserve& operator=(const BufferReserve&) = delete;
  ~BufferReserve();

  // A kept mapping of exactly `size` bytes (a multiple of the 4 KiB page
  // size), page-aligned; nullptr when none fits.
  std::byte* Take(size_t size);

  // Takes over the mapping [p, p + size) (page-aligned, size a multiple of
  // the page size): keeps it if the bound allows, else unmaps it.
  void Give(std::byte* p, size_t size);

  // Changes the bound; a lower one unmaps the oldest mappings over it.
  void SetBound(uint64_t bound_bytes);

  // Starts (first call with true) or pauses the refill thread.
  void SetRefill(bool on);

  Stats GetStats() const;

 private:
  struct Kept {
    std::byte* p;
    size_t size;
  };
  // Drops the oldest mappings until held + incoming <= bound; appends them
  // to `out` (to be unmapped once the lock is released).
  void EvictLocked(uint64_t incoming, std::vector<Kept>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Bytes the refill should add now (0: nothing worth mapping).
  size_t RefillWantedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefillLoop();

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it.
  mutable std::mutex mu_;
  uint64_t bound_ ABSL_GUARDED_BY(mu_);
  uint64_t held_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Kept> kept_ ABSL_GUARDED_BY(mu_);  // oldest first
  uint64_t reuses_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unmapped_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refilled_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool refill_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point last_take_ ABSL_GUARDED_BY(mu_);
  std::condition_variable refill_wake_;
  std::thread refill_thread_;  // started by the first SetRefill(true)
};

// The process-wide reserve behind AllocateLargeBuffer and FreeLargeBuffer.
// Bound 0 (keeps nothing) until set: posenc_server sets it from
// --warm_reserve_bytes when a server is created (the last server created in
// a process sets it). Never destroyed.
BufferReserve& WarmReserve();

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_BUFFER_RESERVE_H_
