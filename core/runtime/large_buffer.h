// Memory for tables and large answers: from 2 MiB up mmap'd (2 MiB
// aligned when fresh), so no heap fragments push peak RSS past the
// configured bounds; smaller sizes come from the heap.
//
// Freed mappings go to the process-wide warm reserve
// (core/runtime/buffer_reserve.h, WarmReserve()): up to its bound
// (posenc_server's --warm_reserve_bytes, 32 MiB by default; 0 until set) they
// stay mapped, pages faulted in, and the next allocation that fits takes one
// instead of mapping fresh pages; past the bound they are returned to the
// system. In steady state (a full cache evicting tables; answers computed
// outside the cache and freed after the send) a cold table is then written into
// warm memory: first touch of 16 MiB of fresh 4 KiB pages costs ~4-5 ms on this
// project's VM, about half of computing the table. A reused buffer holds its
// last user's bytes, not zeros; every caller writes all it sends.
//
// Not advised MADV_HUGEPAGE: with Debian's default THP defrag setting
// ("madvise"), a fault in an advised range compacts memory synchronously
// when no huge page is free. Measured on this project's 2-core VM, filling a
// fresh 16 MiB table took 40-46 ms advised against 6-9 ms with 4 KiB pages
// (2-3.5 ms when the pages are already mapped).
//
// Thread-safe (the reserve locks).
#ifndef POSENC_CORE_RUNTIME_LARGE_BUFFER_H_
#define POSENC_CORE_RUNTIME_LARGE_BUFFER_H_

#include <cstddef>

namespace posenc {

// At least `bytes` bytes, 64-byte aligned; nullptr when the memory cannot
// be had. Release with FreeLargeBuffer(p, bytes) (the same `bytes`). Not
// zeroed.
std::byte* AllocateLargeBuffer(size_t bytes);
void FreeLargeBuffer(std::byte* p, size_t bytes);

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_LARGE_BUFFER_H_
