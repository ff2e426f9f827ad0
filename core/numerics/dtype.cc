#include "core/numerics/dtype.h"

namespace posenc {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kInterleaved:
      return "interleaved";
    case Layout::kConcatSinCos:
      return "concat_sin_cos";
    case Layout::kConcatCosSin:
      return "concat_cos_sin";
    case Layout::kRotateHalf:
      return "rotate_half";
    case Layout::kInterleavedPairs:
      return "interleaved_pairs";
    case Layout::kRotationMatrix:
      return "rotation_matrix";
  }
  return "?";
}

}  // namespace posenc
