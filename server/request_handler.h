// Request planning for the table methods, with no server and no call: parse
// a raw request, validate it against the limits, describe the answer; and
// build the answer's wire bytes from a table (zero-copy when the table is
// cached). PositionalEncodingService calls these from its gRPC handlers;
// fuzz/ calls them on arbitrary bytes.
//
// Pure functions of their arguments; thread-safe.
#ifndef POSENC_SERVER_REQUEST_HANDLER_H_
#define POSENC_SERVER_REQUEST_HANDLER_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cache/table.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/position_grid.h"
#include "core/spec/table_spec.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/repeated_field.h"

namespace posenc {

struct ServiceLimits {
  SpecLimits spec;
  uint32_t max_rows_per_request = 65536;
  uint64_t max_message_bytes = uint64_t{64} << 20;
  // Computations one connection may have in progress.
  uint32_t max_misses_per_connection = 32;
  // The server's shared-memory subdirectory (ServerInfo); empty: none.
  std::string shm_directory;
};

// Rows [start, end) of a table, rows_per_message rows per streamed message.
struct RangePlan {
  TableSpec spec;
  uint32_t start = 0;
  uint32_t end = 0;
  uint32_t rows_per_message = 1;
};

// Rows at `positions` of a table, as one message.
// A GetTable request: the table, and whether the caller would map it from
// the shared-memory directory.
struct TablePlan {
  TableSpec spec;
  bool accept_shared_memory = false;
};

struct GatherPlan {
  TableSpec spec;
  google::protobuf::RepeatedField<uint32_t> positions;
};

// Points of an Encode call: the spec is checked (ValidateEncodingSpec)
// and the answer's size known; the frequencies, whose range check and
// construction cost O(half) MPFR operations, are left to the compute pool
// (RealEncodingPlan::Create, then ValidatePositions or ValidateGrid).
struct EncodePlan {
  EncodingSpec spec;
  google::protobuf::RepeatedField<double> positions;
  // The request's grid instead of positions (then positions is empty).
  std::optional<PositionGrid> grid;
  uint32_t points = 0;
  uint64_t answer_bytes() const { return uint64_t{points} * spec.row_bytes(); }
};

// Parses `raw` into `request`; INVALID_ARGUMENT naming the type when the
// bytes are not a valid message. Allocation is bounded by the request size
// (gRPC limits it with --max_request_bytes).
absl::Status ParseRequest(const grpc::ByteBuffer& raw,
                          google::protobuf::MessageLite* request);

// Each Plan* parses a raw request of its method and validates it. Errors:
// INVALID_ARGUMENT (malformed or over a limit), OUT_OF_RANGE (a position
// past max_len), RESOURCE_EXHAUSTED (the answer exceeds max_message_bytes).
absl::StatusOr<TablePlan> PlanGetTable(const grpc::ByteBuffer& raw,
                                       const ServiceLimits& limits);
absl::StatusOr<RangePlan> PlanStreamRows(const grpc::ByteBuffer& raw,
                                         const ServiceLimits& limits);
absl::StatusOr<RangePlan> PlanStreamBatches(const grpc::ByteBuffer& raw,
                                            const ServiceLimits& limits);
absl::StatusOr<GatherPlan> PlanGetRows(const grpc::ByteBuffer& raw,
                                       const ServiceLimits& limits);
// INVALID_ARGUMENT also for no points, more than max_rows_per_request
// points, a count of positions that is not a multiple of coordinates, or
// both positions and a grid (or a grid whose axes are not one per
// coordinate);
// RESOURCE_EXHAUSTED when the rows exceed max_message_bytes.
absl::StatusOr<EncodePlan> PlanEncode(const grpc::ByteBuffer& raw,
                                      const ServiceLimits& limits);

// The GetTableResponse for `spec` whose tensor bytes are `data`: all of a
// cached table's bytes (TableSlice, without a copy) or rows computed for this
// call. Precondition: data.size() == spec.table_bytes().
grpc::ByteBuffer BuildGetTableResponse(const TableSpec& spec, grpc::Slice data);

// The GetTableResponse pointing at the published file of `table` (a table
// covering `spec`; table.shared_memory() is not null): the spec's rows are
// the file's first spec.table_bytes() bytes.
grpc::ByteBuffer BuildSharedMemoryTableResponse(const TableSpec& spec,
                                                const Table& table);

// Copies the rows at plan.positions of `table` (a table covering plan.spec)
// to `out` (positions.size() * row_bytes bytes).
void GatherRows(const GatherPlan& plan, const Table& table, std::byte* out);

// The GetRowsResponse for `plan` whose tensor bytes are `data` (the rows in
// the order of plan.positions).
grpc::ByteBuffer BuildGetRowsResponse(const GatherPlan& plan, grpc::Slice data);

// The EncodeResponse for `plan` whose tensor bytes are `data`.
grpc::ByteBuffer BuildEncodeResponse(const EncodePlan& plan, grpc::Slice data);

// One StreamRowsResponse (rows_per_message == 1) or StreamBatchesResponse
// carrying rows [first, first + rows) of plan.spec, whose bytes are `data`.
grpc::ByteBuffer BuildRangeMessage(const RangePlan& plan, bool rows_stream,
                                   uint32_t first, uint32_t rows,
                                   grpc::Slice data);

}  // namespace posenc

#endif  // POSENC_SERVER_REQUEST_HANDLER_H_
