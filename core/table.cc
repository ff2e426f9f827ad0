#include "core/table.h"

#include <new>

#include "core/encoding.h"

namespace posenc {

std::shared_ptr<const Table> Table::Compute(const TableSpec& spec,
                                            ComputePool* pool) {
  const size_t bytes = spec.table_bytes();
  std::byte* raw = AllocateLargeBuffer(bytes);
  if (raw == nullptr) throw std::bad_alloc();
  std::unique_ptr<std::byte[], Free> data(raw, Free{bytes});
  ComputeRowsParallel(EncodingPlan(spec), 0, spec.max_len, data.get(), pool);
  return std::shared_ptr<const Table>(new Table(spec, std::move(data)));
}

}  // namespace posenc
