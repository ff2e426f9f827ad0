#include "server/tensor_message.h"

#include <string>

#include "common/proto_conversion.h"

namespace posenc {
namespace {

constexpr uint8_t kVarint = 0, kLengthDelimited = 2;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, int field, uint8_t wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void DeleteTableRef(void* ref) {
  delete static_cast<std::shared_ptr<const Table>*>(ref);
}

}  // namespace

grpc::Slice TableSlice(std::shared_ptr<const Table> table) {
  void* data = const_cast<std::byte*>(table->data());
  const size_t size = table->size_bytes();
  return grpc::Slice(data, size, &DeleteTableRef,
                     new std::shared_ptr<const Table>(std::move(table)));
}

grpc::Slice NewSlice(size_t bytes) { return grpc::Slice(bytes); }

grpc::ByteBuffer EncodeTensorMessage(int tensor_field, uint32_t leading,
                                     DType dtype,
                                     std::initializer_list<uint32_t> shape,
                                     grpc::Slice data) {
  // Tensor { dtype = 1; repeated uint32 shape = 2 (packed); bytes data = 3 }
  std::string tensor;
  PutTag(tensor, 1, kVarint);
  PutVarint(tensor, DTypeToProto(dtype));
  std::string packed;
  for (uint32_t dim : shape) PutVarint(packed, dim);
  PutTag(tensor, 2, kLengthDelimited);
  PutVarint(tensor, packed.size());
  tensor += packed;
  PutTag(tensor, 3, kLengthDelimited);
  PutVarint(tensor, data.size());

  std::string header;
  if (tensor_field != 1 && leading != 0) {
    PutTag(header, 1, kVarint);
    PutVarint(header, leading);
  }
  PutTag(header, tensor_field, kLengthDelimited);
  PutVarint(header, tensor.size() + data.size());
  header += tensor;

  grpc::Slice slices[2] = {grpc::Slice(header), std::move(data)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace posenc
