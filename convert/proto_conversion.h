// Conversions between posenc.v1 protobuf messages and core value types,
// shared by the server and the C++ client.
#ifndef POSENC_CONVERT_PROTO_CONVERSION_H_
#define POSENC_CONVERT_PROTO_CONVERSION_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/position_grid.h"
#include "core/spec/table_spec.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

// Resolves defaults (base 0 -> 10000, *_UNSPECIFIED -> the documented
// default) and partial_rotary_factor (d becomes the rotary dimension).
// INVALID_ARGUMENT for enum values this server does not know and for a
// partial_rotary_factor out of (0, 1] or giving an odd or zero dimension.
// Limits are checked separately by ValidateSpec. A grid: max_len 0 becomes
// the grid's row count; INVALID_ARGUMENT with a partial_rotary_factor.
absl::StatusOr<TableSpec> SpecFromProto(const v1::TableSpec& proto);

// A grid (TableSpec.grid) with defaults resolved: position numerator and
// denominator 0 -> 1, then reduced by their gcd; empty channel_order -> the
// identity; GRID_SIN_COS_UNSPECIFIED -> per axis. INVALID_ARGUMENT (naming
// the field) for more than kMaxGridAxes axes or channel_order entries and
// an unknown GridSinCos. The rest is checked by ValidateSpec.
absl::StatusOr<std::shared_ptr<const GridSpec>> GridFromProto(
    const v1::GridSpec& proto);
v1::GridSpec GridToProto(const GridSpec& grid);

// The rotary dimension of a spec whose partial_rotary_factor is in (0, 1]:
// int(d * factor), the double product (as HF). nullopt when the factor is 0
// (unset: d itself) or out of range. The one definition shared by
// SpecFromProto and the routing key (convert/routing_key.h), so that every
// spelling of one table gets one key.
std::optional<uint32_t> RotaryDimension(const v1::TableSpec& proto);

// The fully explicit proto form of `spec` (no field left to its default).
v1::TableSpec SpecToProto(const TableSpec& spec);

// RoPE scaling: null for ROPE_TYPE_DEFAULT with nothing else set (the plain
// table); INVALID_ARGUMENT for an unknown RopeType. Ranges are checked by
// ValidateSpec (core/spec/rope.h ValidateRope).
absl::StatusOr<std::shared_ptr<const RopeScaling>> RopeFromProto(
    const v1::RopeScaling& proto);
v1::RopeScaling RopeToProto(const RopeScaling& rope);

// EncodingSpec (the Encode RPC): defaults resolved (max_period 0 -> 10000,
// scale 0 -> 1, coordinates 0 -> 1 or the number of axes of axes_dim /
// mrope_section, *_UNSPECIFIED -> the documented default);
// INVALID_ARGUMENT for an unknown enum value. Ranges are checked
// by ValidateEncodingSpec (core/spec/encoding_spec.h).
absl::StatusOr<EncodingSpec> EncodingSpecFromProto(
    const v1::EncodingSpec& proto);
// The fully explicit proto form of `spec`.
v1::EncodingSpec EncodingSpecToProto(const EncodingSpec& spec);

// An EncodeRequest's grid, count 0 -> 1. Checked by CountGridPoints and
// RealEncodingPlan::ValidateGrid.
PositionGrid GridFromProto(const v1::PositionGrid& proto);

v1::DType DTypeToProto(DType dtype);
absl::StatusOr<DType> DTypeFromProto(v1::DType dtype);

}  // namespace posenc

#endif  // POSENC_CONVERT_PROTO_CONVERSION_H_
