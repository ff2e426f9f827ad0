// Wire encoding of posenc responses whose last field is a Tensor, built as a
// grpc::ByteBuffer of two slices: a few header bytes, then the tensor data as
// its own slice. The data slice may point into a cached table, so a cache hit
// is sent without copying the table (the same bytes the protobuf library
// would produce, minus the copy).
#ifndef POSENC_SERVER_TENSOR_MESSAGE_H_
#define POSENC_SERVER_TENSOR_MESSAGE_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>

#include "core/cache/table.h"
#include "core/runtime/byte_budget.h"
#include "core/spec/table_spec.h"

namespace posenc {

// A slice of all of `table`'s bytes that keeps the table alive while gRPC
// holds any part of it. Use Slice::sub for row ranges.
grpc::Slice TableSlice(std::shared_ptr<const Table> table);

// A freshly allocated, writable slice of `bytes` bytes, on the heap and
// aligned to 8 bytes whatever its size (rows of any dtype may be written
// in place).
grpc::Slice NewSlice(size_t bytes);

// NewSlice whose `bytes`, already taken from `budget` by the caller, are
// returned to it when gRPC drops the last reference. nullptr (nothing
// taken) when the memory cannot be allocated.
std::optional<grpc::Slice> NewChargedSlice(size_t bytes, ByteBudget* budget);
inline std::byte* MutableData(grpc::Slice& slice) {
  return reinterpret_cast<std::byte*>(const_cast<uint8_t*>(slice.begin()));
}

// Encodes a message { uint32 field 1 = leading (omitted when 0);
// Tensor field `tensor_field` = {dtype, shape, data} }.
// With tensor_field == 1 there is no leading field (GetTableResponse,
// GetRowsResponse); with 2, field 1 is the position or start. `shape` has
// at most 4 dimensions (rotation matrices: [points, K, 2, 2]).
grpc::ByteBuffer EncodeTensorMessage(int tensor_field, uint32_t leading,
                                     DType dtype,
                                     std::initializer_list<uint32_t> shape,
                                     grpc::Slice data);

}  // namespace posenc

#endif  // POSENC_SERVER_TENSOR_MESSAGE_H_
