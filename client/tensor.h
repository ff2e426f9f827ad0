// Tensor: a received table, batch or row: dtype, shape and the raw
// little-endian row-major bytes exactly as the server sent them, or as the
// server's shared-memory file holds them.
#ifndef POSENC_CLIENT_TENSOR_H_
#define POSENC_CLIENT_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "client/mapping_cache.h"
#include "client/shared_mapping.h"
#include "core/spec/table_spec.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

struct Tensor {
  DType dtype = DType::kFloat32;
  std::vector<uint32_t> shape;
  // Received bytes; malloc'd, so aligned for any element type. Empty when
  // `mapping` holds them.
  std::string data;
  // A table mapped from the server's shared-memory directory
  // (PosencClient::Options::shared_memory): the bytes, read-only, valid as
  // long as a copy of the tensor holds the mapping.
  std::shared_ptr<const SharedMapping> mapping;

  // The raw bytes, wherever they are.
  absl::string_view bytes() const {
    return mapping != nullptr ? mapping->bytes() : absl::string_view(data);
  }

  // Elements as T: float for kFloat32, double for kFloat64, uint16_t bits
  // for kFloat16 and kBFloat16. Precondition: sizeof(T) == DTypeSize(dtype).
  template <typename T>
  absl::Span<const T> values() const {
    const absl::string_view raw = bytes();
    return {reinterpret_cast<const T*>(raw.data()), raw.size() / sizeof(T)};
  }

  // Element k widened to double (half types decoded exactly).
  double ValueAt(size_t k) const;
  size_t size() const { return bytes().size() / DTypeSize(dtype); }
};

// A tensor over a checked mapping of `answer`'s file (SharedMapping::Open's
// errors): reused from `cache` when it holds one, else made (and kept there).
absl::StatusOr<Tensor> MapTensor(const v1::SharedMemoryTensor& answer,
                                 MappingCache* cache = nullptr);

// Takes the tensor out of a response message (moves its bytes).
// INTERNAL when the message is inconsistent (unknown dtype, data size not
// matching the shape).
absl::StatusOr<Tensor> TakeTensor(v1::Tensor* proto);

// IEEE binary16 / bfloat16 bits to float (exact).
float HalfToFloat(uint16_t bits);
float BFloat16ToFloat(uint16_t bits);

}  // namespace posenc

#endif  // POSENC_CLIENT_TENSOR_H_
