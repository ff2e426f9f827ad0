#include "server/posenc_service.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/proto_conversion.h"
#include "core/encoding.h"
#include "core/request_limits.h"
#include "server/log.h"
#include "server/tensor_message.h"

namespace posenc {
namespace {

// Parses a raw request. The protobuf parser bounds all allocation by the
// request size, which gRPC already limits (--max_request_bytes).
template <typename Request>
absl::Status ParseRequest(const grpc::ByteBuffer* raw, Request* request) {
  grpc::ByteBuffer copy(*raw);  // shares the slices; the reader consumes it
  grpc::ProtoBufferReader reader(&copy);
  if (!request->ParseFromZeroCopyStream(&reader)) {
    return absl::InvalidArgumentError(
        absl::StrCat("request is not a valid ", request->GetTypeName()));
  }
  return absl::OkStatus();
}

// The validated spec of a request's `spec` field.
absl::StatusOr<TableSpec> ResolveSpec(const v1::TableSpec& proto,
                                      const SpecLimits& limits) {
  absl::StatusOr<TableSpec> spec = SpecFromProto(proto);
  if (!spec.ok()) return spec.status();
  if (absl::Status s = ValidateSpec(*spec, limits); !s.ok()) return s;
  return spec;
}

void RecordAndLog(MethodStats* stats, Method method,
                  const absl::Status& status) {
  stats->Record(method, status.ok());
  // Cancellation is the client's choice, not a server event worth a line.
  if (!status.ok() && status.code() != absl::StatusCode::kCancelled) {
    Log("WARN", "%s -> %s", MethodName(method), status.ToString());
  }
}

void FinishUnary(grpc::ServerUnaryReactor* reactor, MethodStats* stats,
                 Method method, const absl::Status& status) {
  RecordAndLog(stats, method, status);
  reactor->Finish(ToGrpcStatus(status));
}

// Serves rows [next_, end_) of one table as a server stream: one row per
// message (StreamRows) or rows_per_message_ rows (StreamBatches). Rows come
// from a cached table when the cache holds one, else are computed message by
// message on the pool, so memory per stream is one message.
//
// Exactly one operation is outstanding at any time (a pool task or a write),
// so members need no lock. Deletes itself in OnDone.
class TableStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  TableStream(Method method, grpc::CallbackServerContext* context,
              TableCache* cache, ComputePool* pool, MethodStats* stats)
      : method_(method),
        context_(context),
        cache_(cache),
        pool_(pool),
        stats_(stats) {}

  // Validates; on success looks the table up on the pool and starts writing.
  void Start(absl::StatusOr<TableSpec> spec, uint32_t start,
             std::optional<uint32_t> end, uint32_t rows_per_message_requested,
             uint64_t max_message_bytes) {
    if (!spec.ok()) return FinishWith(spec.status());
    spec_ = *spec;
    next_ = start;
    end_ = end.value_or(spec_.max_len);
    if (absl::Status s = ValidateRange(next_, end_, spec_.max_len); !s.ok()) {
      return FinishWith(s);
    }
    if (method_ == Method::kStreamRows) {
      rows_per_message_ = 1;
      if (absl::Status s =
              CheckMessageSize(spec_.row_bytes(), max_message_bytes, "one row",
                               "raise --max_message_bytes");
          !s.ok()) {
        return FinishWith(s);
      }
    } else {
      absl::StatusOr<uint32_t> rows = ResolveRowsPerBatch(
          rows_per_message_requested, spec_.row_bytes(), max_message_bytes);
      if (!rows.ok()) return FinishWith(rows.status());
      rows_per_message_ = *rows;
    }
    if (std::shared_ptr<const Table> table = cache_->GetIfResident(spec_)) {
      table_slice_ = TableSlice(std::move(table));
      return WriteNext();
    }
    pool_->Post([this] {
      if (std::shared_ptr<const Table> table = cache_->GetOrCompute(spec_)) {
        table_slice_ = TableSlice(std::move(table));
      } else {
        plan_ = std::make_unique<EncodingPlan>(spec_);  // once per stream
      }
      WriteNext();
    });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return FinishWith(absl::CancelledError("stream write failed"));
    WriteNext();
  }

  void OnCancel() override {}  // the outstanding write or task ends the call

  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (context_->IsCancelled()) {
      return FinishWith(absl::CancelledError("cancelled by the client"));
    }
    if (next_ >= end_) return FinishWith(absl::OkStatus());
    const uint32_t rows = std::min(rows_per_message_, end_ - next_);
    const size_t row_bytes = spec_.row_bytes();
    if (table_slice_.has_value()) {
      Send(rows,
           table_slice_->sub(next_ * row_bytes, (next_ + rows) * row_bytes));
      return;
    }
    pool_->Post([this, rows, row_bytes] {
      grpc::Slice data = NewSlice(rows * row_bytes);
      ComputeRows(*plan_, next_, rows, MutableData(data));
      Send(rows, std::move(data));
    });
  }

  void Send(uint32_t rows, grpc::Slice data) {
    if (method_ == Method::kStreamRows) {
      message_ = EncodeTensorMessage(2, next_, spec_.dtype, {spec_.d},
                                     std::move(data));
    } else {
      message_ = EncodeTensorMessage(2, next_, spec_.dtype, {rows, spec_.d},
                                     std::move(data));
    }
    next_ += rows;
    StartWrite(&message_);
  }

  void FinishWith(const absl::Status& status) {
    RecordAndLog(stats_, method_, status);
    Finish(ToGrpcStatus(status));
  }

  const Method method_;
  grpc::CallbackServerContext* const context_;
  TableCache* const cache_;
  ComputePool* const pool_;
  MethodStats* const stats_;
  TableSpec spec_;
  uint32_t next_ = 0;
  uint32_t end_ = 0;
  uint32_t rows_per_message_ = 1;
  std::optional<grpc::Slice> table_slice_;  // set when served from the cache
  std::unique_ptr<EncodingPlan> plan_;      // set when computed per message
  grpc::ByteBuffer message_;                // the write in flight
};

}  // namespace

PositionalEncodingService::PositionalEncodingService(
    const ServiceLimits& limits, TableCache* cache, ComputePool* pool,
    MethodStats* stats)
    : limits_(limits),
      cache_(cache),
      pool_(pool),
      stats_(stats),
      start_time_(absl::Now()) {}

grpc::ServerUnaryReactor* PositionalEncodingService::GetTable(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  v1::GetTableRequest request;
  absl::Status status = ParseRequest(raw, &request);
  absl::StatusOr<TableSpec> spec =
      status.ok() ? ResolveSpec(request.spec(), limits_.spec) : status;
  if (spec.ok()) {
    status = CheckMessageSize(spec->table_bytes(), limits_.max_message_bytes,
                              "the table",
                              "use StreamBatches to receive it in parts");
  } else {
    status = spec.status();
  }
  if (!status.ok()) {
    FinishUnary(reactor, stats_, Method::kGetTable, status);
    return reactor;
  }
  auto respond = [this, reactor, response,
                  spec = *spec](std::shared_ptr<const Table> table) {
    grpc::Slice data;
    if (table != nullptr) {
      data = TableSlice(std::move(table)).sub(0, spec.table_bytes());
    } else {  // not cacheable: compute just for this call
      data = NewSlice(spec.table_bytes());
      ComputeRowsParallel(spec, 0, spec.max_len, MutableData(data),
                          pool_->size());
    }
    *response = EncodeTensorMessage(1, 0, spec.dtype, {spec.max_len, spec.d},
                                    std::move(data));
    FinishUnary(reactor, stats_, Method::kGetTable, absl::OkStatus());
  };
  if (std::shared_ptr<const Table> table = cache_->GetIfResident(*spec)) {
    respond(std::move(table));
  } else {
    pool_->Post(
        [this, respond, spec = *spec] { respond(cache_->GetOrCompute(spec)); });
  }
  return reactor;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamRows(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* raw) {
  auto* stream =
      new TableStream(Method::kStreamRows, context, cache_, pool_, stats_);
  v1::StreamRowsRequest request;
  absl::Status status = ParseRequest(raw, &request);
  stream->Start(
      status.ok() ? ResolveSpec(request.spec(), limits_.spec) : status,
      request.start(),
      request.has_end() ? std::optional<uint32_t>(request.end()) : std::nullopt,
      1, limits_.max_message_bytes);
  return stream;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamBatches(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* raw) {
  auto* stream =
      new TableStream(Method::kStreamBatches, context, cache_, pool_, stats_);
  v1::StreamBatchesRequest request;
  absl::Status status = ParseRequest(raw, &request);
  stream->Start(
      status.ok() ? ResolveSpec(request.spec(), limits_.spec) : status,
      request.start(),
      request.has_end() ? std::optional<uint32_t>(request.end()) : std::nullopt,
      request.rows_per_batch(), limits_.max_message_bytes);
  return stream;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto request = std::make_shared<v1::GetRowsRequest>();
  absl::Status status = ParseRequest(raw, request.get());
  absl::StatusOr<TableSpec> spec =
      status.ok() ? ResolveSpec(request->spec(), limits_.spec) : status;
  if (!spec.ok()) {
    status = spec.status();
  } else {
    status = ValidatePositions(request->positions(), spec->max_len,
                               limits_.max_rows_per_request);
  }
  if (status.ok()) {
    status = CheckMessageSize(
        uint64_t(request->positions_size()) * spec->row_bytes(),
        limits_.max_message_bytes, "the rows", "ask for fewer positions");
  }
  if (!status.ok()) {
    FinishUnary(reactor, stats_, Method::kGetRows, status);
    return reactor;
  }
  auto respond = [this, reactor, response, request,
                  spec = *spec](std::shared_ptr<const Table> table) {
    const auto& positions = request->positions();
    const size_t row_bytes = spec.row_bytes();
    grpc::Slice data = NewSlice(positions.size() * row_bytes);
    std::byte* out = MutableData(data);
    if (table != nullptr) {
      for (int k = 0; k < positions.size(); ++k) {
        std::memcpy(out + k * row_bytes,
                    table->data() + size_t{positions[k]} * row_bytes,
                    row_bytes);
      }
    } else {
      ComputePositions(spec, positions, out);
    }
    *response = EncodeTensorMessage(
        1, 0, spec.dtype, {static_cast<uint32_t>(positions.size()), spec.d},
        std::move(data));
    FinishUnary(reactor, stats_, Method::kGetRows, absl::OkStatus());
  };
  if (std::shared_ptr<const Table> table = cache_->GetIfResident(*spec)) {
    respond(std::move(table));
  } else {
    // A table that fits the cache is computed whole and kept, so later
    // gathers hit; a larger one is never materialised: compute just the rows.
    const bool cacheable = cache_->Admits(*spec);
    pool_->Post([this, respond, cacheable, spec = *spec] {
      respond(cacheable ? cache_->GetOrCompute(spec) : nullptr);
    });
  }
  return reactor;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetStats(
    grpc::CallbackServerContext* context, const v1::GetStatsRequest*,
    v1::GetStatsResponse* response) {
  const TableCache::Stats cache = cache_->GetStats();
  v1::CacheStats* c = response->mutable_cache();
  c->set_hits(cache.hits);
  c->set_misses(cache.misses);
  c->set_evictions(cache.evictions);
  c->set_resident_bytes(cache.resident_bytes);
  c->set_entries(cache.entries);
  c->set_budget_bytes(cache.budget_bytes);
  c->set_computations(cache.computations);
  v1::ServerInfo* info = response->mutable_server();
  info->set_version(POSENC_VERSION);
  info->set_uptime_seconds(absl::ToDoubleSeconds(absl::Now() - start_time_));
  info->set_max_d(limits_.spec.max_d);
  info->set_max_len_limit(limits_.spec.max_len_limit);
  info->set_max_rows_per_request(limits_.max_rows_per_request);
  info->set_max_message_bytes(limits_.max_message_bytes);
  // Count this call first, so a caller sees its own GetStats.
  stats_->Record(Method::kGetStats, true);
  for (int m = 0; m < kMethodCount; ++m) {
    const Method method = static_cast<Method>(m);
    const MethodStats::Counts counts = stats_->Get(method);
    v1::MethodStats* out = response->add_methods();
    out->set_method(MethodName(method));
    out->set_ok(counts.ok);
    out->set_errors(counts.errors);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace posenc
