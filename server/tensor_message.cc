#include "server/tensor_message.h"

#include <grpc/slice.h>

#include <cassert>
#include <cstdlib>
#include <new>

#include "convert/proto_conversion.h"
#include "core/runtime/large_buffer.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {
namespace {

// The field before the tensor of a streamed message: its row's position or
// its batch's start.
constexpr int kLeadingField = v1::StreamRowsResponse::kPositionFieldNumber;
static_assert(kLeadingField == v1::StreamBatchesResponse::kStartFieldNumber);
// Every tag below is one byte (fields 1..15).
static_assert(v1::Tensor::kDataFieldNumber < 16);

constexpr uint8_t kVarint = 0, kLengthDelimited = 2;

// Varints are at most 10 bytes.
uint8_t* PutVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

uint8_t* PutTag(uint8_t* out, int field, uint8_t wire_type) {
  return PutVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void DeleteTableRef(void* ref) {
  delete static_cast<std::shared_ptr<const Table>*>(ref);
}

// What a NewChargedSlice's destroy callback needs to free and return.
struct ChargedBlock {
  ByteBudget* budget;
  std::byte* data;
  size_t bytes;
};

void FreeChargedBlock(void* block) {
  ChargedBlock* charged = static_cast<ChargedBlock*>(block);
  FreeLargeBuffer(charged->data, charged->bytes);
  charged->budget->Release(charged->bytes);
  delete charged;
}

}  // namespace

grpc::Slice TableSlice(std::shared_ptr<const Table> table) {
  void* data = const_cast<std::byte*>(table->data());
  const size_t size = table->size_bytes();
  return grpc::Slice(data, size, &DeleteTableRef,
                     new std::shared_ptr<const Table>(std::move(table)));
}

grpc::Slice NewSlice(size_t bytes) {
  // Never inlined: grpc::Slice(bytes) keeps up to 23 bytes inside the slice
  // struct, one byte past its length, so a short message's rows started at
  // an odd address and the kernels' 16-bit stores were misaligned (UBSan,
  // fuzz_stream_rows: a one-row float16 grid table). The heap slice's
  // bytes follow its 16-byte refcount in one malloc block.
  return grpc::Slice(grpc_slice_malloc_large(bytes), grpc::Slice::STEAL_REF);
}

std::optional<grpc::Slice> NewChargedSlice(size_t bytes, ByteBudget* budget) {
  std::byte* data = AllocateLargeBuffer(bytes);
  if (data == nullptr) return std::nullopt;
  return grpc::Slice(data, bytes, &FreeChargedBlock,
                     new ChargedBlock{budget, data, bytes});
}

grpc::ByteBuffer EncodeTensorMessage(int tensor_field, uint32_t leading,
                                     DType dtype,
                                     std::initializer_list<uint32_t> shape,
                                     grpc::Slice data) {
  // Everything but the data bytes, written once into a stack buffer (this
  // runs once per streamed message): [field 1 = leading] tag(tensor_field)
  // len, then Tensor { dtype = 1; repeated uint32 shape = 2 (packed);
  // bytes data = 3 } up to the data's length prefix.
  // [d], [rows, d], or Encode's rotation matrices [points, K, 2, 2].
  constexpr size_t kMaxDims = 4;
  assert(shape.size() <= kMaxDims);
  size_t packed_size = 0;
  for (uint32_t dim : shape) packed_size += VarintSize(dim);
  const uint64_t dtype_value = DTypeToProto(dtype);
  const size_t tensor_size = 1 + VarintSize(dtype_value) + 1 +
                             VarintSize(packed_size) + packed_size + 1 +
                             VarintSize(data.size()) + data.size();
  // At most 7 tags and varints of <= 10 bytes each, plus the dimensions.
  uint8_t header[7 * 11 + 10 * kMaxDims];
  uint8_t* p = header;
  if (tensor_field != kLeadingField && leading != 0) {
    p = PutTag(p, kLeadingField, kVarint);
    p = PutVarint(p, leading);
  }
  p = PutTag(p, tensor_field, kLengthDelimited);
  p = PutVarint(p, tensor_size);
  p = PutTag(p, v1::Tensor::kDtypeFieldNumber, kVarint);
  p = PutVarint(p, dtype_value);
  p = PutTag(p, v1::Tensor::kShapeFieldNumber, kLengthDelimited);
  p = PutVarint(p, packed_size);
  for (uint32_t dim : shape) p = PutVarint(p, dim);
  p = PutTag(p, v1::Tensor::kDataFieldNumber, kLengthDelimited);
  p = PutVarint(p, data.size());

  grpc::Slice slices[2] = {grpc::Slice(header, static_cast<size_t>(p - header)),
                           std::move(data)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace posenc
