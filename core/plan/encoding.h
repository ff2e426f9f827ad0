// Computes rows of sinusoidal positional-encoding tables into caller-owned
// memory, in the spec's dtype and layout, as raw little-endian bytes.
//
// Every value is sin(pos * f_i) or cos(pos * f_i) for the exact real
// frequency f_i of the spec's convention, correctly rounded once
// (round-to-nearest-even) to the dtype, float64 included; see
// docs/numerics.md for how this is achieved and proven. Functions are
// thread-safe (no shared mutable state) and allocate O(d) per call, plus,
// for ranges of >= 16 rows (float64: 256), the plan's angle-addition table
// (<= 1 MiB, built once per plan; the TableSpec overloads build a plan per
// call, so prefer a prebuilt plan for repeated pieces of one family).
//
//   posenc::TableSpec spec;
//   spec.d = 512;
//   spec.max_len = 2048;
//   // ValidateSpec(spec, posenc::SpecLimits{}) is OK
//   std::vector<std::byte> rows(size_t{spec.max_len} * spec.row_bytes());
//   posenc::ComputeRows(spec, 0, spec.max_len, rows.data());
#ifndef POSENC_CORE_PLAN_ENCODING_H_
#define POSENC_CORE_PLAN_ENCODING_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "core/plan/encoding_plan.h"
#include "core/runtime/compute_pool.h"
#include "core/spec/table_spec.h"

namespace posenc {

// Writes rows [first, first + count) to `out`, which must hold
// count * spec.row_bytes() bytes. Precondition: ValidateSpec(spec) is OK and
// first + count <= 2^24 + 1 (positions up to 2^24).
// Positions need not be < spec.max_len (rows do not depend on it).
void ComputeRows(const TableSpec& spec, uint32_t first, uint32_t count,
                 std::byte* out);

// Writes row positions[k] at out + k * spec.row_bytes().
void ComputePositions(const TableSpec& spec,
                      absl::Span<const uint32_t> positions, std::byte* out);

// ComputeRows over [first, first + count), split across up to `threads`
// threads for large ranges (threads <= 1 computes on the calling thread).
void ComputeRowsParallel(const TableSpec& spec, uint32_t first, uint32_t count,
                         std::byte* out, int threads);

// The same three with a prebuilt plan (saves the O(d) setup per call when a
// caller computes many pieces of one table family).
void ComputeRows(const EncodingPlan& plan, uint32_t first, uint32_t count,
                 std::byte* out);
void ComputePositions(const EncodingPlan& plan,
                      absl::Span<const uint32_t> positions, std::byte* out);
void ComputeRowsParallel(const EncodingPlan& plan, uint32_t first,
                         uint32_t count, std::byte* out, int threads);

// ComputeRows over [first, first + count) in chunks of >= 1 MiB run by
// pool->ParallelFor (the calling thread and idle pool threads; no thread is
// started). pool == nullptr computes on the calling thread.
void ComputeRowsParallel(const EncodingPlan& plan, uint32_t first,
                         uint32_t count, std::byte* out, ComputePool* pool);

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_ENCODING_H_
