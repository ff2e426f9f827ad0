#include "client/tensor.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "convert/proto_conversion.h"

namespace posenc {

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
  uint64_t elements = 1;
  for (uint32_t dim : tensor.shape) elements *= dim;
  if (elements * DTypeSize(tensor.dtype) != proto->data().size()) {
    return absl::InternalError(absl::StrCat(
        "response tensor has ", proto->data().size(), " bytes for ", elements,
        " elements of ", DTypeName(tensor.dtype)));
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
  uint64_t elements = 1;
  for (uint32_t dim : tensor.shape) elements *= dim;
  if (elements * DTypeSize(tensor.dtype) != answer.size_bytes()) {
    return absl::InternalError(absl::StrCat(
        "shared memory tensor has ", answer.size_bytes(), " bytes for ",
        elements, " elements of ", DTypeName(tensor.dtype)));
  }
  absl::StatusOr<std::shared_ptr<const SharedMapping>> mapping =
      cache != nullptr ? cache->Map(answer) : SharedMapping::Open(answer);
  if (!mapping.ok()) return mapping.status();
  tensor.mapping = *std::move(mapping);
  return tensor;
}

}  // namespace posenc
