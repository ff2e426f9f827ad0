// Table: an immutable, fully computed block of rows [0, spec.max_len) of one
// table, as raw little-endian bytes in the spec's dtype and layout, in
// ordinary memory or in a shared-memory file that same-host clients map.
//
// Thread-safe once constructed (read-only). Shared by std::shared_ptr between
// the cache and every call that is still sending from it, so evicting a table
// never frees memory that a stream is reading. An evicted table that calls
// still hold is charged to a ByteBudget until the last holder lets go
// (ChargeUntilReleased), so memory outside the cache stays counted.
#ifndef POSENC_CORE_CACHE_TABLE_H_
#define POSENC_CORE_CACHE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "core/runtime/large_buffer.h"
#include "core/runtime/shared_memory_directory.h"
#include "core/spec/table_spec.h"

namespace posenc {

class Table {
 public:
  // Computes every row of `spec`, split across `pool`'s idle threads (the
  // calling thread alone when pool is null). Precondition: ValidateSpec(spec)
  // is OK. Throws std::bad_alloc when the memory cannot be had.
  //
  // With `shm` (not owned): into a published file of that directory, so
  // same-host clients can map it; when the directory refuses the file (full,
  // or any failure), into ordinary memory, with the reason in
  // *shm_refused (when given).
  static std::shared_ptr<const Table> Compute(
      const TableSpec& spec, ComputePool* pool,
      SharedMemoryDirectory* shm = nullptr,
      absl::Status* shm_refused = nullptr);
  ~Table() {
    if (ByteBudget* budget = charged_to_.load(std::memory_order_acquire)) {
      budget->Release(size_bytes());
    }
  }

  const TableSpec& spec() const { return spec_; }
  uint32_t rows() const { return spec_.max_len; }
  size_t size_bytes() const { return spec_.table_bytes(); }
  const std::byte* data() const { return data_; }
  // Bytes of rows [first, first + count). Precondition: first + count <= rows.
  absl::Span<const std::byte> RowBytes(uint32_t first, uint32_t count) const {
    return {data_ + first * spec_.row_bytes(), count * spec_.row_bytes()};
  }

  // The published file holding the bytes; null when they are in ordinary
  // memory.
  const SharedMemoryFile* shared_memory() const { return file_.get(); }
  // Removes the file's name, if any (the cache evicts the table); the bytes
  // stay valid for every holder.
  void Unpublish() const {
    if (file_ != nullptr) file_->Unlink();
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
  Table(const TableSpec& spec, std::unique_ptr<std::byte[], Free> heap,
        std::unique_ptr<SharedMemoryFile> file)
      : spec_(spec),
        heap_(std::move(heap)),
        file_(std::move(file)),
        data_(heap_ != nullptr ? heap_.get() : file_->data()) {}

  TableSpec spec_;
  // Exactly one holds the bytes.
  std::unique_ptr<std::byte[], Free> heap_;  // AllocateLargeBuffer
  std::unique_ptr<SharedMemoryFile> file_;
  const std::byte* const data_;
  mutable std::atomic<ByteBudget*> charged_to_{nullptr};
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_TABLE_H_
