#include "client/tensor.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "convert/proto_conversion.h"

namespace posenc {
namespace {

// OK when `shape`'s elements of `dtype` are exactly `bytes` bytes, the
// product computed without wrapping: a 64-bit product of the dims wraps
// (2^22 x 2^23 x 2^24 is 0 mod 2^64), which let a shape of 2^69 elements
// pass for 0 bytes and a reader index past the buffer (found by
// fuzz_shared_mapping). INTERNAL naming `what` otherwise.
absl::Status CheckShape(const std::vector<uint32_t>& shape, DType dtype,
                        uint64_t bytes, absl::string_view what) {
  uint64_t total = DTypeSize(dtype);
  bool wrapped = false;
  for (uint32_t dim : shape)
    wrapped |= __builtin_mul_overflow(total, dim, &total);
  if (wrapped || total != bytes) {
    return absl::InternalError(
        absl::StrCat(what, " has ", bytes, " bytes for shape [",
                     absl::StrJoin(shape, ", "), "] of ", DTypeName(dtype)));
  }
  return absl::OkStatus();
}

}  // namespace

float HalfToFloat(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

float BFloat16ToFloat(uint16_t bits) {
  const uint32_t word = uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

double Tensor::ValueAt(size_t k) const {
  switch (dtype) {
    case DType::kFloat32:
      return values<float>()[k];
    case DType::kFloat64:
      return values<double>()[k];
    case DType::kFloat16:
      return HalfToFloat(values<uint16_t>()[k]);
    case DType::kBFloat16:
      return BFloat16ToFloat(values<uint16_t>()[k]);
  }
  return 0;
}

absl::StatusOr<Tensor> TakeTensor(v1::Tensor* proto) {
  Tensor tensor;
  absl::StatusOr<DType> dtype = DTypeFromProto(proto->dtype());
  if (!dtype.ok() || proto->dtype() == v1::DTYPE_UNSPECIFIED) {
    return absl::InternalError(absl::StrCat("response tensor has dtype ",
                                            static_cast<int>(proto->dtype())));
  }
  tensor.dtype = *dtype;
  tensor.shape.assign(proto->shape().begin(), proto->shape().end());
  if (absl::Status shape = CheckShape(tensor.shape, tensor.dtype,
                                      proto->data().size(), "response tensor");
      !shape.ok()) {
    return shape;
  }
  tensor.data = std::move(*proto->mutable_data());
  return tensor;
}

absl::StatusOr<Tensor> MapTensor(const v1::SharedMemoryTensor& answer,
                                 MappingCache* cache) {
  Tensor tensor;
  absl::StatusOr<DType> dtype = DTypeFromProto(answer.dtype());
  if (!dtype.ok() || answer.dtype() == v1::DTYPE_UNSPECIFIED) {
    return absl::InternalError(absl::StrCat("shared memory tensor has dtype ",
                                            static_cast<int>(answer.dtype())));
  }
  tensor.dtype = *dtype;
  tensor.shape.assign(answer.shape().begin(), answer.shape().end());
  if (absl::Status shape =
          CheckShape(tensor.shape, tensor.dtype, answer.size_bytes(),
                     "shared memory tensor");
      !shape.ok()) {
    return shape;
  }
  absl::StatusOr<std::shared_ptr<const SharedMapping>> mapping =
      cache != nullptr ? cache->Map(answer) : SharedMapping::Open(answer);
  if (!mapping.ok()) return mapping.status();
  tensor.mapping = *std::move(mapping);
  return tensor;
}

}  // namespace posenc
