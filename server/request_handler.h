// Request parsing for the table methods, with no server and no call: parse
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

// A StreamRows or StreamBatches request: rows [start, end) of a table,
// rows_per_message rows per streamed message.
struct RangeQuery {
  TableSpec spec;
  uint32_t start = 0;
  uint32_t end = 0;
  uint32_t rows_per_message = 1;
};

// A GetTable request: the table, and whether the caller would map it from
// the shared-memory directory.
struct TableQuery {
  TableSpec spec;
  bool accept_shared_memory = false;
};

// A GetRows request: the rows at `positions` of a table, as one message.
struct RowsQuery {
  TableSpec spec;
  google::protobuf::RepeatedField<uint32_t> positions;
};

// An Encode request, its points: the spec is checked (ValidateEncodingSpec)
// and the answer's size known; the frequencies, whose range check and
// construction cost O(half) MPFR operations, are left to the compute pool
// (RealEncodingPlan::Create, then ValidatePositions or ValidateGrid).
struct EncodeQuery {
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

// Each Parse* parses a raw request of its method into its query (what the
// call asks for, validated; core/plan/ holds the compute plans). Errors:
// INVALID_ARGUMENT (malformed or over a limit), OUT_OF_RANGE (a position
// past max_len), RESOURCE_EXHAUSTED (the answer exceeds max_message_bytes).
absl::StatusOr<TableQuery> ParseGetTable(const grpc::ByteBuffer& raw,
                                         const ServiceLimits& limits);
absl::StatusOr<RangeQuery> ParseStreamRows(const grpc::ByteBuffer& raw,
                                           const ServiceLimits& limits);
absl::StatusOr<RangeQuery> ParseStreamBatches(const grpc::ByteBuffer& raw,
                                              const ServiceLimits& limits);
absl::StatusOr<RowsQuery> ParseGetRows(const grpc::ByteBuffer& raw,
                                       const ServiceLimits& limits);
// INVALID_ARGUMENT also for no points, more than max_rows_per_request
// points, a count of positions that is not a multiple of coordinates, or
// both positions and a grid (or a grid whose axes are not one per
// coordinate);
// RESOURCE_EXHAUSTED when the rows exceed max_message_bytes.
absl::StatusOr<EncodeQuery> ParseEncode(const grpc::ByteBuffer& raw,
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

// Copies the rows at query.positions of `table` (a table covering query.spec)
// to `out` (positions.size() * row_bytes bytes).
void GatherRows(const RowsQuery& query, const Table& table, std::byte* out);

// The GetRowsResponse for `query` whose tensor bytes are `data` (the rows in
// the order of query.positions).
grpc::ByteBuffer BuildGetRowsResponse(const RowsQuery& query, grpc::Slice data);

// The EncodeResponse for `query` whose tensor bytes are `data`.
grpc::ByteBuffer BuildEncodeResponse(const EncodeQuery& query,
                                     grpc::Slice data);

// One StreamRowsResponse (rows_per_message == 1) or StreamBatchesResponse
// carrying rows [first, first + rows) of query.spec, whose bytes are `data`.
grpc::ByteBuffer BuildRangeMessage(const RangeQuery& query, bool rows_stream,
                                   uint32_t first, uint32_t rows,
                                   grpc::Slice data);

}  // namespace posenc

#endif  // POSENC_SERVER_REQUEST_HANDLER_H_
