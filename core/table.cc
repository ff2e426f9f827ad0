#include "core/table.h"

#include <new>

#include "core/encoding.h"

namespace posenc {

std::shared_ptr<const Table> Table::Compute(const TableSpec& spec,
                                            ComputePool* pool) {
  constexpr size_t kAlign = 64;
  const size_t bytes = spec.table_bytes();
  const size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  auto* raw = static_cast<std::byte*>(std::aligned_alloc(kAlign, padded));
  if (raw == nullptr) throw std::bad_alloc();
  std::unique_ptr<std::byte[], Free> data(raw);
  ComputeRowsParallel(EncodingPlan(spec), 0, spec.max_len, data.get(), pool);
  return std::shared_ptr<const Table>(new Table(spec, std::move(data)));
}

}  // namespace posenc
