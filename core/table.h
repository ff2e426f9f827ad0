// Table: an immutable, fully computed block of rows [0, spec.max_len) of one
// table, as raw little-endian bytes in the spec's dtype and layout.
//
// Thread-safe once constructed (read-only). Shared by std::shared_ptr between
// the cache and every call that is still sending from it, so evicting a table
// never frees memory that a stream is reading. An evicted table that calls
// still hold is charged to a ByteBudget until the last holder lets go
// (ChargeUntilReleased), so memory outside the cache stays counted.
#ifndef POSENC_CORE_TABLE_H_
#define POSENC_CORE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"
#include "core/byte_budget.h"
#include "core/compute_pool.h"
#include "core/large_buffer.h"
#include "core/table_spec.h"

namespace posenc {

class Table {
 public:
  // Computes every row of `spec`, split across `pool`'s idle threads (the
  // calling thread alone when pool is null). Precondition: ValidateSpec(spec)
  // is OK. Throws std::bad_alloc when the memory cannot be had.
  static std::shared_ptr<const Table> Compute(const TableSpec& spec,
                                              ComputePool* pool);
  ~Table() {
    if (ByteBudget* budget = charged_to_.load(std::memory_order_acquire)) {
      budget->Release(size_bytes());
    }
  }

  const TableSpec& spec() const { return spec_; }
  uint32_t rows() const { return spec_.max_len; }
  size_t size_bytes() const { return spec_.table_bytes(); }
  const std::byte* data() const { return data_.get(); }
  // Bytes of rows [first, first + count). Precondition: first + count <= rows.
  absl::Span<const std::byte> RowBytes(uint32_t first, uint32_t count) const {
    return {data_.get() + first * spec_.row_bytes(), count * spec_.row_bytes()};
  }

  // Charges size_bytes() to `budget` now (past its limit if need be) and
  // releases them when the table is destroyed. For the cache, when it drops
  // a table that calls still send from. At most once per table.
  void ChargeUntilReleased(ByteBudget* budget) const {
    budget->ForceAcquire(size_bytes());
    charged_to_.store(budget, std::memory_order_release);
  }

 private:
  struct Free {
    size_t bytes;
    void operator()(std::byte* p) const { FreeLargeBuffer(p, bytes); }
  };
  Table(const TableSpec& spec, std::unique_ptr<std::byte[], Free> data)
      : spec_(spec), data_(std::move(data)) {}

  TableSpec spec_;
  std::unique_ptr<std::byte[], Free> data_;  // AllocateLargeBuffer
  mutable std::atomic<ByteBudget*> charged_to_{nullptr};
};

}  // namespace posenc

#endif  // POSENC_CORE_TABLE_H_
