// Tensor: a received table, batch or row: dtype, shape and the raw
// little-endian row-major bytes exactly as the server sent them.
#ifndef POSENC_CLIENT_TENSOR_H_
#define POSENC_CLIENT_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/table_spec.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

struct Tensor {
  DType dtype = DType::kFloat32;
  std::vector<uint32_t> shape;
  std::string data;  // raw bytes; malloc'd, so aligned for any element type

  // Elements as T: float for kFloat32, double for kFloat64, uint16_t bits
  // for kFloat16 and kBFloat16. Precondition: sizeof(T) == DTypeSize(dtype).
  template <typename T>
  absl::Span<const T> values() const {
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }

  // Element k widened to double (half types decoded exactly).
  double ValueAt(size_t k) const;
  size_t size() const { return data.size() / DTypeSize(dtype); }
};

// Takes the tensor out of a response message (moves its bytes).
// INTERNAL when the message is inconsistent (unknown dtype, data size not
// matching the shape).
absl::StatusOr<Tensor> TakeTensor(v1::Tensor* proto);

// IEEE binary16 / bfloat16 bits to float (exact).
float HalfToFloat(uint16_t bits);
float BFloat16ToFloat(uint16_t bits);

}  // namespace posenc

#endif  // POSENC_CLIENT_TENSOR_H_
