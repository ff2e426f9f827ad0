#include "common/proto_conversion.h"

#include "absl/strings/str_cat.h"

namespace posenc {

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UNSPECIFIED:
    case v1::DTYPE_FLOAT32:
      return DType::kFloat32;
    case v1::DTYPE_FLOAT64:
      return DType::kFloat64;
    case v1::DTYPE_FLOAT16:
      return DType::kFloat16;
    case v1::DTYPE_BFLOAT16:
      return DType::kBFloat16;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.dtype ", static_cast<int>(dtype), " is not a known DType"));
  }
}

v1::DType DTypeToProto(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return v1::DTYPE_FLOAT32;
    case DType::kFloat64:
      return v1::DTYPE_FLOAT64;
    case DType::kFloat16:
      return v1::DTYPE_FLOAT16;
    case DType::kBFloat16:
      return v1::DTYPE_BFLOAT16;
  }
  return v1::DTYPE_UNSPECIFIED;
}

absl::StatusOr<TableSpec> SpecFromProto(const v1::TableSpec& proto) {
  TableSpec spec;
  spec.d = proto.d();
  spec.base = proto.base() == 0 ? kDefaultBase : proto.base();
  spec.max_len = proto.max_len();
  absl::StatusOr<DType> dtype = DTypeFromProto(proto.dtype());
  if (!dtype.ok()) return dtype.status();
  spec.dtype = *dtype;
  switch (proto.layout()) {
    case v1::LAYOUT_UNSPECIFIED:
    case v1::LAYOUT_INTERLEAVED:
      spec.layout = Layout::kInterleaved;
      break;
    case v1::LAYOUT_CONCAT_SIN_COS:
      spec.layout = Layout::kConcatSinCos;
      break;
    case v1::LAYOUT_CONCAT_COS_SIN:
      spec.layout = Layout::kConcatCosSin;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.layout ", static_cast<int>(proto.layout()),
                       " is not a known Layout"));
  }
  switch (proto.frequency()) {
    case v1::FREQUENCY_UNSPECIFIED:
    case v1::FREQUENCY_PAPER:
      spec.frequency = Frequency::kPaper;
      break;
    case v1::FREQUENCY_T2T:
      spec.frequency = Frequency::kT2T;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.frequency ", static_cast<int>(proto.frequency()),
                       " is not a known Frequency"));
  }
  return spec;
}

v1::TableSpec SpecToProto(const TableSpec& spec) {
  v1::TableSpec proto;
  proto.set_d(spec.d);
  proto.set_base(spec.base);
  proto.set_max_len(spec.max_len);
  proto.set_dtype(DTypeToProto(spec.dtype));
  switch (spec.layout) {
    case Layout::kInterleaved:
      proto.set_layout(v1::LAYOUT_INTERLEAVED);
      break;
    case Layout::kConcatSinCos:
      proto.set_layout(v1::LAYOUT_CONCAT_SIN_COS);
      break;
    case Layout::kConcatCosSin:
      proto.set_layout(v1::LAYOUT_CONCAT_COS_SIN);
      break;
  }
  proto.set_frequency(spec.frequency == Frequency::kPaper ? v1::FREQUENCY_PAPER
                                                          : v1::FREQUENCY_T2T);
  return proto;
}

}  // namespace posenc
