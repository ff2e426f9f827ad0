#include "server/request_handler.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "convert/proto_conversion.h"
#include "core/spec/request_limits.h"
#include "posenc/v1/posenc.pb.h"
#include "server/limit_flags.h"
#include "server/tensor_message.h"

namespace posenc {
namespace {

// The validated spec of a request's `spec` field.
absl::StatusOr<TableSpec> ResolveSpec(const v1::TableSpec& proto,
                                      const SpecLimits& limits) {
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  if (!spec.ok()) return spec.status();
  if (absl::Status s = ValidateSpec(*spec, limits); !s.ok()) {
    return NameServerFlag(s);
  }
  return spec;
}

template <typename Request>
absl::StatusOr<RangeQuery> ParseRange(const grpc::ByteBuffer& raw,
                                      const ServiceLimits& limits,
                                      bool rows_stream) {
  Request request;
  if (absl::Status s = ParseRequest(raw, &request); !s.ok()) return s;
  absl::StatusOr<TableSpec> spec = ResolveSpec(request.spec(), limits.spec);
  if (!spec.ok()) return spec.status();
  RangeQuery query;
  query.spec = *spec;
  query.start = request.start();
  query.end = request.has_end() ? request.end() : spec->max_len;
  if (absl::Status s = ValidateRange(query.start, query.end, spec->max_len);
      !s.ok()) {
    return NameServerFlag(s);
  }
  if (rows_stream) {
    query.rows_per_message = 1;
    if (absl::Status s =
            CheckMessageSize(spec->row_bytes(), limits.max_message_bytes,
                             "one row", "the server's limit must be raised");
        !s.ok()) {
      return NameServerFlag(s);
    }
  } else {
    uint32_t requested = 0;
    if constexpr (std::is_same_v<Request, v1::StreamBatchesRequest>) {
      requested = request.rows_per_batch();
    }
    absl::StatusOr<uint32_t> rows = ResolveRowsPerBatch(
        requested, spec->row_bytes(), limits.max_message_bytes);
    if (!rows.ok()) return NameServerFlag(rows.status());
    query.rows_per_message = *rows;
  }
  return query;
}

}  // namespace

absl::Status ParseRequest(const grpc::ByteBuffer& raw,
                          google::protobuf::MessageLite* request) {
  grpc::ByteBuffer copy(raw);  // shares the slices; the reader consumes it
  grpc::ProtoBufferReader reader(&copy);
  if (!request->ParseFromZeroCopyStream(&reader)) {
    return absl::InvalidArgumentError(
        absl::StrCat("request is not a valid ", request->GetTypeName()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TableQuery> ParseGetTable(const grpc::ByteBuffer& raw,
                                         const ServiceLimits& limits) {
  v1::GetTableRequest request;
  if (absl::Status s = ParseRequest(raw, &request); !s.ok()) return s;
  absl::StatusOr<TableSpec> spec = ResolveSpec(request.spec(), limits.spec);
  if (!spec.ok()) return spec.status();
  if (absl::Status s = CheckMessageSize(
          spec->table_bytes(), limits.max_message_bytes, "the table",
          "use StreamBatches to receive it in parts");
      !s.ok()) {
    return NameServerFlag(s);
  }
  return TableQuery{*std::move(spec), request.accept_shared_memory()};
}

absl::StatusOr<RangeQuery> ParseStreamRows(const grpc::ByteBuffer& raw,
                                           const ServiceLimits& limits) {
  return ParseRange<v1::StreamRowsRequest>(raw, limits, /*rows_stream=*/true);
}

absl::StatusOr<RangeQuery> ParseStreamBatches(const grpc::ByteBuffer& raw,
                                              const ServiceLimits& limits) {
  return ParseRange<v1::StreamBatchesRequest>(raw, limits,
                                              /*rows_stream=*/false);
}

absl::StatusOr<RowsQuery> ParseGetRows(const grpc::ByteBuffer& raw,
                                       const ServiceLimits& limits) {
  v1::GetRowsRequest request;
  if (absl::Status s = ParseRequest(raw, &request); !s.ok()) return s;
  absl::StatusOr<TableSpec> spec = ResolveSpec(request.spec(), limits.spec);
  if (!spec.ok()) return spec.status();
  if (absl::Status s = ValidatePositions(request.positions(), spec->max_len,
                                         limits.max_rows_per_request);
      !s.ok()) {
    return NameServerFlag(s);
  }
  if (absl::Status s = CheckMessageSize(
          uint64_t(request.positions_size()) * spec->row_bytes(),
          limits.max_message_bytes, "the rows", "ask for fewer positions");
      !s.ok()) {
    return NameServerFlag(s);
  }
  RowsQuery query;
  query.spec = *spec;
  query.positions = std::move(*request.mutable_positions());
  return query;
}

absl::StatusOr<EncodeQuery> ParseEncode(const grpc::ByteBuffer& raw,
                                        const ServiceLimits& limits) {
  v1::EncodeRequest request;
  if (absl::Status s = ParseRequest(raw, &request); !s.ok()) return s;
  absl::StatusOr<EncodingSpec> spec = EncodingSpecFromProto(request.spec());
  if (!spec.ok()) return spec.status();
  if (absl::Status s = ValidateEncodingSpec(*spec, limits.spec); !s.ok()) {
    return NameServerFlag(s);
  }
  EncodeQuery query;
  absl::StatusOr<uint32_t> points;
  if (request.has_grid()) {
    if (request.positions_size() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("positions, grid: both set (", request.positions_size(),
                       " positions); send the points one way"));
    }
    query.grid = GridFromProto(request.grid());
    points = CountGridPoints(*query.grid, spec->coordinates,
                             limits.max_rows_per_request);
  } else {
    points = CountPoints(request.positions_size(), spec->coordinates,
                         limits.max_rows_per_request);
  }
  if (!points.ok()) return NameServerFlag(points.status());
  query.spec = *spec;
  query.points = *points;
  if (absl::Status s =
          CheckMessageSize(query.answer_bytes(), limits.max_message_bytes,
                           "the rows", "send fewer points per call");
      !s.ok()) {
    return NameServerFlag(s);
  }
  query.positions = std::move(*request.mutable_positions());
  return query;
}

grpc::ByteBuffer BuildEncodeResponse(const EncodeQuery& query,
                                     grpc::Slice data) {
  constexpr int kField = v1::EncodeResponse::kEmbeddingsFieldNumber;
  if (query.spec.layout == Layout::kRotationMatrix) {  // [points, K, 2, 2]
    return EncodeTensorMessage(
        kField, 0, query.spec.dtype,
        {query.points, static_cast<uint32_t>(query.spec.pairs()), 2, 2},
        std::move(data));
  }
  return EncodeTensorMessage(
      kField, 0, query.spec.dtype,
      {query.points, static_cast<uint32_t>(query.spec.width())},
      std::move(data));
}

grpc::ByteBuffer BuildGetTableResponse(const TableSpec& spec,
                                       grpc::Slice data) {
  return EncodeTensorMessage(v1::GetTableResponse::kTableFieldNumber, 0,
                             spec.dtype, {spec.max_len, spec.width()},
                             std::move(data));
}

grpc::ByteBuffer BuildSharedMemoryTableResponse(const TableSpec& spec,
                                                const Table& table) {
  const SharedMemoryFile& file = *table.shared_memory();
  v1::GetTableResponse response;
  v1::SharedMemoryTensor* shm = response.mutable_shared_memory();
  shm->set_path(file.path());
  shm->set_offset(0);
  shm->set_dtype(DTypeToProto(spec.dtype));
  shm->add_shape(spec.max_len);
  shm->add_shape(spec.width());
  shm->set_size_bytes(spec.table_bytes());
  shm->set_file_bytes(file.size());
  shm->set_file_xxh64(file.xxh64());
  shm->set_owner_uid(file.owner_uid());
  shm->set_inode(file.inode());
  const grpc::Slice slice(response.SerializeAsString());  // ~200 bytes
  return grpc::ByteBuffer(&slice, 1);
}

void GatherRows(const RowsQuery& query, const Table& table, std::byte* out) {
  const size_t row_bytes = query.spec.row_bytes();
  for (int k = 0; k < query.positions.size(); ++k) {
    std::memcpy(out + k * row_bytes,
                table.data() + size_t{query.positions[k]} * row_bytes,
                row_bytes);
  }
}

grpc::ByteBuffer BuildGetRowsResponse(const RowsQuery& query,
                                      grpc::Slice data) {
  return EncodeTensorMessage(
      v1::GetRowsResponse::kRowsFieldNumber, 0, query.spec.dtype,
      {static_cast<uint32_t>(query.positions.size()), query.spec.width()},
      std::move(data));
}

grpc::ByteBuffer BuildRangeMessage(const RangeQuery& query, bool rows_stream,
                                   uint32_t first, uint32_t rows,
                                   grpc::Slice data) {
  if (rows_stream) {
    return EncodeTensorMessage(v1::StreamRowsResponse::kRowFieldNumber, first,
                               query.spec.dtype, {query.spec.width()},
                               std::move(data));
  }
  return EncodeTensorMessage(v1::StreamBatchesResponse::kBatchFieldNumber,
                             first, query.spec.dtype,
                             {rows, query.spec.width()}, std::move(data));
}

}  // namespace posenc
