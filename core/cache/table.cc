#include "core/cache/table.h"

#include <xxhash.h>

#include <new>
#include <string>

#include "core/plan/encoding.h"

namespace posenc {

std::shared_ptr<const Table> Table::Compute(const TableSpec& spec,
                                            ComputePool* pool,
                                            SharedMemoryDirectory* shm,
                                            absl::Status* shm_refused) {
  const size_t bytes = spec.table_bytes();
  const EncodingPlan plan(spec);
  if (shm != nullptr) {
    absl::StatusOr<std::unique_ptr<SharedMemoryFile>> file =
        shm->CreateFile(bytes);
    absl::Status status = file.status();
    if (file.ok()) {
      ComputeRowsParallel(plan, 0, spec.max_len, (*file)->data(), pool);
      const std::string key = spec.DebugString();
      status = (*file)->Publish(XXH64(key.data(), key.size(), 0));
      if (status.ok()) {
        return std::shared_ptr<const Table>(
            new Table(spec, nullptr, std::move(*file)));
      }
    }
    if (shm_refused != nullptr) *shm_refused = status;
  }
  std::byte* raw = AllocateLargeBuffer(bytes);
  if (raw == nullptr) throw std::bad_alloc();
  std::unique_ptr<std::byte[], Free> data(raw, Free{bytes});
  ComputeRowsParallel(plan, 0, spec.max_len, data.get(), pool);
  return std::shared_ptr<const Table>(
      new Table(spec, std::move(data), nullptr));
}

}  // namespace posenc
