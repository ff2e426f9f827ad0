// Conversions between posenc.v1 protobuf messages and core value types,
// shared by the server and the C++ client.
#ifndef POSENC_COMMON_PROTO_CONVERSION_H_
#define POSENC_COMMON_PROTO_CONVERSION_H_

#include "absl/status/statusor.h"
#include "core/table_spec.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

// Resolves defaults (base 0 -> 10000, *_UNSPECIFIED -> the documented
// default). INVALID_ARGUMENT for enum values this server does not know.
// Limits are checked separately by ValidateSpec.
absl::StatusOr<TableSpec> SpecFromProto(const v1::TableSpec& proto);

// The fully explicit proto form of `spec` (no field left to its default).
v1::TableSpec SpecToProto(const TableSpec& spec);

v1::DType DTypeToProto(DType dtype);
absl::StatusOr<DType> DTypeFromProto(v1::DType dtype);

}  // namespace posenc

#endif  // POSENC_COMMON_PROTO_CONVERSION_H_
