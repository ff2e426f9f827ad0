// Memory for tables and large answers: mmap'd and advised to use
// transparent huge pages from 2 MiB up, so filling a fresh 16 MiB table
// takes 8 page faults instead of 4096 (on virtual machines a 4 KiB fault can
// cost more than computing the page); smaller sizes come from the heap.
// Memory is always returned to the system on free (no heap fragments to
// push peak RSS past the configured bounds).
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
