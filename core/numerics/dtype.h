// DType and Layout: how the values of a row are stored (element type and
// channel order), shared by the kernels that write rows and the specs that
// name them.
//
// Pure value types and functions; thread-safe.
#ifndef POSENC_CORE_NUMERICS_DTYPE_H_
#define POSENC_CORE_NUMERICS_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace posenc {

// Element type of a table. Values are rounded once from the exact real value.
enum class DType : uint8_t { kFloat32, kFloat64, kFloat16, kBFloat16 };

// Channel order within a row; pair i has frequency f_i.
enum class Layout : uint8_t {
  kInterleaved,   // sin at 2i, cos at 2i+1 (the paper)
  kConcatSinCos,  // sin at i, cos at d/2+i (tensor2tensor, fairseq)
  kConcatCosSin,  // cos at i, sin at d/2+i (ggml, diffusers, vLLM's RoPE)
  // The RoPE layouts hold every value twice (rows of 2d channels):
  kRotateHalf,        // cos at i and d/2+i, sin at d+i and 3d/2+i (HF)
  kInterleavedPairs,  // cos at 2i and 2i+1, sin at d+2i and d+2i+1 (GPT-J)
  // Multi-axis RoPE encodings only (EncodingSpec, never a table): pair i's
  // 2x2 rotation [cos, -sin, sin, cos] at 4i..4i+3 (FLUX EmbedND).
  kRotationMatrix,
};

// Channels per row of a table of dimension d in `layout`: d, or 2d for the
// RoPE layouts.
inline uint32_t RowWidth(uint32_t d, Layout layout) {
  return layout == Layout::kRotateHalf || layout == Layout::kInterleavedPairs ||
                 layout == Layout::kRotationMatrix
             ? 2 * d
             : d;
}

// Bytes per element of `dtype`.
size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
const char* LayoutName(Layout layout);

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_DTYPE_H_
