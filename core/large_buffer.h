// Memory for tables and large answers: from 2 MiB up mmap'd (2 MiB
// aligned) and returned to the system on free, so no heap fragments push
// peak RSS past the configured bounds; smaller sizes come from the heap.
//
// Not advised MADV_HUGEPAGE: with Debian's default THP defrag setting
// ("madvise"), a fault in an advised range compacts memory synchronously
// when no huge page is free. Measured on this project's 2-core VM, filling a
// fresh 16 MiB table took 40-46 ms advised against 6-9 ms with 4 KiB pages
// (2-3.5 ms when the pages are already mapped).
//
// Thread-safe (no shared state).
#ifndef POSENC_CORE_LARGE_BUFFER_H_
#define POSENC_CORE_LARGE_BUFFER_H_

#include <cstddef>

namespace posenc {

// At least `bytes` bytes, 64-byte aligned; nullptr when the memory cannot
// be had. Release with FreeLargeBuffer(p, bytes) (the same `bytes`).
std::byte* AllocateLargeBuffer(size_t bytes);
void FreeLargeBuffer(std::byte* p, size_t bytes);

}  // namespace posenc

#endif  // POSENC_CORE_LARGE_BUFFER_H_
