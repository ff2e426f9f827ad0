// The work behind each unary table method once its call is parsed
// (server/request_handler.h) and admitted (server/admission.h): the answer
// of a cache hit, and the computation of a miss, run on a compute-pool
// thread. PositionalEncodingService calls these and only converts what they
// return; none of them touches a call.
//
// Answers are wire bytes (grpc::ByteBuffer): a cached table's rows are sent
// from the cache's own bytes (no copy), and a computed answer is written
// into a buffer charged to the inflight budget until gRPC lets go of it.
//
// Thread-safe: the cache, pool and plan cache are; each call passes its own
// charge.
#ifndef POSENC_SERVER_TABLE_ANSWERS_H_
#define POSENC_SERVER_TABLE_ANSWERS_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/cache/encoding_plan_cache.h"
#include "core/cache/real_encoding_plan_cache.h"
#include "core/cache/table.h"
#include "core/cache/table_cache.h"
#include "core/runtime/compute_pool.h"
#include "server/admission.h"
#include "server/request_handler.h"

namespace posenc {

// GetTable's answer from `table`, a table covering query.spec (resident, or
// just computed whole): the published file when the caller accepts shared
// memory and the table has one, else the table's bytes (which the answer
// keeps alive).
grpc::ByteBuffer TableAnswer(const TableQuery& query,
                             std::shared_ptr<const Table> table);

// A GetTable miss, on a pool thread: the table computed whole into the cache
// when `whole` (the lookup's compute_whole) and the cache admits it; else
// just this answer, charged to the inflight budget (RESOURCE_EXHAUSTED,
// counted, when it does not fit). Ends a compute_whole lookup.
absl::StatusOr<grpc::ByteBuffer> ComputeTableAnswer(const TableQuery& query,
                                                    bool whole,
                                                    TableCache& cache,
                                                    ComputePool& pool,
                                                    Admission& admission);

// GetRows's answer: the rows at query.positions copied from `table` (a
// table covering query.spec), or computed when `table` is null (by the
// family's plan kept in `plans`, or built and kept there), into the buffer
// of `charge` (query.positions.size() rows, already charged).
absl::StatusOr<grpc::ByteBuffer> RowsAnswer(const RowsQuery& query,
                                            const Table* table,
                                            EncodingPlanCache& plans,
                                            InflightCharge& charge);

// An Encode call, on a pool thread: the frequencies (O(half) MPFR products,
// or a plan kept in `plans`), their range check against the points, then the
// rows, into the buffer of `charge` (query.answer_bytes(), already charged).
// INVALID_ARGUMENT or OUT_OF_RANGE when the points do not fit the spec;
// RESOURCE_EXHAUSTED when its values need more exact (MPFR) work than
// SlowPathBudget::kEncodeUnits, DEADLINE_EXCEEDED when `deadline` (the
// call's) passes during that work (core/plan/slow_path_budget.h).
absl::StatusOr<grpc::ByteBuffer> ComputeEncodeAnswer(
    const EncodeQuery& query, uint32_t max_rows_per_request,
    absl::Time deadline, RealEncodingPlanCache& plans, InflightCharge& charge);

}  // namespace posenc

#endif  // POSENC_SERVER_TABLE_ANSWERS_H_
