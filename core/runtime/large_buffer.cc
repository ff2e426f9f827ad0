#include "core/runtime/large_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

#include "core/runtime/buffer_reserve.h"

namespace posenc {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;
constexpr size_t kAlign = 64;

size_t MappedSize(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

std::byte* AllocateLargeBuffer(size_t bytes) {
  if (bytes < kHugePage) {
    const size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
    return static_cast<std::byte*>(std::aligned_alloc(kAlign, padded));
  }
  const size_t size = MappedSize(bytes);
  // Warm pages first: a mapping freed earlier, already faulted in.
  if (std::byte* kept = WarmReserve().Take(size)) return kept;
  // Over-map by one huge page so the start can be aligned to one: where
  // THP is "always", the kernel can then back whole 2 MiB ranges with huge
  // pages it has free.
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + size + kHugePage;
  if (end > aligned + size) {
    munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  }
  // No madvise(MADV_HUGEPAGE): see large_buffer.h.
  return reinterpret_cast<std::byte*>(aligned);
}

void FreeLargeBuffer(std::byte* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kHugePage) {
    std::free(p);
  } else {
    WarmReserve().Give(p, MappedSize(bytes));  // kept, or unmapped
  }
}

}  // namespace posenc
