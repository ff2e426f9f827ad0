#include "core/plan/encoding.h"

#include <mpfr.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace posenc {

void ComputeRows(const EncodingPlan& plan, uint32_t first, uint32_t count,
                 std::byte* out) {
  plan.ComputeRows(first, count, out);
}

void ComputePositions(const EncodingPlan& plan,
                      absl::Span<const uint32_t> positions, std::byte* out) {
  const size_t row_bytes = plan.spec().row_bytes();
  for (size_t k = 0; k < positions.size(); ++k) {
    plan.ComputeRow(positions[k], out + k * row_bytes);
  }
}

void ComputeRowsParallel(const EncodingPlan& plan, uint32_t first,
                         uint32_t count, std::byte* out, int threads) {
  // Below ~1 MiB of output, thread start-up costs more than it saves.
  constexpr uint64_t kMinBytesPerThread = 1 << 20;
  const size_t row_bytes = plan.spec().row_bytes();
  const uint64_t bytes = uint64_t{count} * row_bytes;
  const int n = static_cast<int>(std::clamp<uint64_t>(
      bytes / kMinBytesPerThread, 1, std::max(threads, 1)));
  if (n <= 1) {
    ComputeRows(plan, first, count, out);
    return;
  }
  std::vector<std::thread> workers;
  const uint32_t per = (count + n - 1) / n;
  for (int t = 0; t < n; ++t) {
    const uint32_t begin = t * per;
    if (begin >= count) break;
    const uint32_t len = std::min(per, count - begin);
    workers.emplace_back([&plan, first, begin, len, out, row_bytes] {
      ComputeRows(plan, first + begin, len, out + begin * row_bytes);
      // The MPFR fallback may have filled this thread's constant caches.
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    });
  }
  for (auto& w : workers) w.join();
}

void ComputeRowsParallel(const EncodingPlan& plan, uint32_t first,
                         uint32_t count, std::byte* out, ComputePool* pool) {
  // Below ~4 MiB (half a millisecond of one core) waking a helper costs more
  // than it saves.
  constexpr uint64_t kMinBytesPerChunk = uint64_t{4} << 20;
  const size_t row_bytes = plan.spec().row_bytes();
  const uint64_t bytes = uint64_t{count} * row_bytes;
  // A few chunks per thread, so a thread that joins late still gets a share.
  const int chunks = pool == nullptr
                         ? 1
                         : static_cast<int>(std::clamp<uint64_t>(
                               bytes / kMinBytesPerChunk, 1, 4 * pool->size()));
  if (chunks <= 1) {
    ComputeRows(plan, first, count, out);
    return;
  }
  const uint32_t per = (count + chunks - 1) / chunks;
  pool->ParallelFor(chunks, [&plan, first, count, per, out, row_bytes](int c) {
    const uint32_t begin = c * per;
    if (begin >= count) return;
    const uint32_t len = std::min(per, count - begin);
    ComputeRows(plan, first + begin, len, out + size_t{begin} * row_bytes);
  });
}

void ComputeRows(const TableSpec& spec, uint32_t first, uint32_t count,
                 std::byte* out) {
  ComputeRows(EncodingPlan(spec), first, count, out);
}

void ComputePositions(const TableSpec& spec,
                      absl::Span<const uint32_t> positions, std::byte* out) {
  ComputePositions(EncodingPlan(spec), positions, out);
}

void ComputeRowsParallel(const TableSpec& spec, uint32_t first, uint32_t count,
                         std::byte* out, int threads) {
  ComputeRowsParallel(EncodingPlan(spec), first, count, out, threads);
}

}  // namespace posenc
