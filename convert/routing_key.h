// The routing key of a table: which replica should serve a spec.
//
// Every client sends it as the `x-posenc-table` metadata of each table call
// (GetTable, StreamRows, StreamBatches, GetRows), so a proxy can route by a
// consistent hash of it. It names the table's family: every TableSpec field
// except max_len, with defaults resolved, so every max_len of one family
// reaches the replica that caches its longest prefix:
//
//   d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>
//
//   d       decimal, as sent (0 stays 0)
//   base    the double in ECMAScript Number::toString form (JavaScript's
//           String(x)): shortest round-trip digits; plain notation for
//           decimal exponents -7 < n <= 21, else d.ddde+NN / d.ddde-NN;
//           0 (unset) -> 10000
//   dtype   float32 | float64 | float16 | bfloat16   (unset -> float32)
//   layout  interleaved | concat_sin_cos | concat_cos_sin (unset ->
//   interleaved) freq    paper | t2t                              (unset ->
//   paper)
//
// Unknown enum values are written as their number. Example:
//   d=512;base=10000;dtype=float32;layout=interleaved;freq=paper
// RoPE layouts are rotate_half | interleaved_pairs. RoPE fields append, when
// set, ";prf=<partial_rotary_factor>" and then (rope with any non-zero
// field) ";rope=<default|linear|dynamic|yarn|llama3|longrope>" and every
// non-zero rope field in field-number order, doubles written as base,
// truncate as true|false, lists as ListHashForKey (see the proto). A grid
// table then appends
// ";grid=<size>:<channels>:<first_index>:<num>/<den>,...;order=<a>,...;
// sin_cos=<per_axis|grouped>;extra=<extra_zero_rows>", the position
// fraction with 0 taken as 1 and reduced by its gcd, order the
// channel_order or 0,1,... when unset (see the proto).
// The same definition is implemented and tested in the Python, Go and Node
// clients; tests/golden/interop.txt holds the keys of the interop specs.
#ifndef POSENC_CONVERT_ROUTING_KEY_H_
#define POSENC_CONVERT_ROUTING_KEY_H_

#include <string>

#include "posenc/v1/posenc.pb.h"

namespace posenc {

// The metadata key clients send the routing key under.
inline constexpr char kRoutingKeyHeader[] = "x-posenc-table";

// The routing key of `spec` (see above). Never fails: invalid specs get a
// key too, so their errors travel the same route.
std::string RoutingKey(const v1::TableSpec& spec);

// 16 lowercase hex digits of the FNV-1a 64-bit hash of the values'
// little-endian float64 bytes (RoPE's short_factor / long_factor).
std::string ListHashForKey(const google::protobuf::RepeatedField<double>& list);

// `x` as JavaScript's String(x) writes it (ECMAScript Number::toString).
std::string FormatBaseForKey(double x);

}  // namespace posenc

#endif  // POSENC_CONVERT_ROUTING_KEY_H_
