#include "server/posenc_service.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "core/encoding.h"
#include "server/log.h"
#include "server/tensor_message.h"

namespace posenc {
namespace {

absl::Status ShuttingDown() {
  return absl::UnavailableError(
      "posenc is shutting down; retry on another replica");
}

// Counts one call in MethodStats from its start to its end, and logs its
// failure. Logs carry the status (which may quote offending field values)
// but never a table value.
class CallRecord {
 public:
  CallRecord(MethodStats* stats, Method method)
      : stats_(stats), method_(method), start_(absl::Now()) {
    stats_->Begin(method_);
  }
  void End(const absl::Status& status, uint64_t bytes_sent) {
    stats_->End(method_, status.code(), absl::Now() - start_, bytes_sent);
    // Cancellation is the client's choice, not a server event worth a line.
    if (!status.ok() && status.code() != absl::StatusCode::kCancelled) {
      Log("WARN", "%s -> %s", MethodName(method_), status.ToString());
    }
  }

 private:
  MethodStats* const stats_;
  const Method method_;
  const absl::Time start_;
};

void FinishUnary(grpc::ServerUnaryReactor* reactor, CallRecord& record,
                 const absl::Status& status, uint64_t bytes_sent) {
  record.End(status, bytes_sent);
  reactor->Finish(ToGrpcStatus(status));
}

// Serves rows [next_, end_) of one table as a server stream: one row per
// message (StreamRows) or rows_per_message rows (StreamBatches). Rows come
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
        record_(stats, method) {}

  // On a valid plan, looks the table up (on the pool when it is not
  // resident) and starts writing.
  void Start(absl::StatusOr<RangePlan> plan) {
    if (!plan.ok()) return FinishWith(plan.status());
    plan_ = std::move(*plan);
    next_ = plan_.start;
    if (std::shared_ptr<const Table> table =
            cache_->GetIfResident(plan_.spec)) {
      table_slice_ = TableSlice(std::move(table));
      return WriteNext();
    }
    pool_->Post([this] {
      if (std::shared_ptr<const Table> table =
              cache_->GetOrCompute(plan_.spec)) {
        table_slice_ = TableSlice(std::move(table));
      } else {
        encoding_ = std::make_unique<EncodingPlan>(plan_.spec);  // once
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
    if (next_ >= plan_.end) return FinishWith(absl::OkStatus());
    const uint32_t rows = std::min(plan_.rows_per_message, plan_.end - next_);
    const size_t row_bytes = plan_.spec.row_bytes();
    if (table_slice_.has_value()) {
      Send(rows,
           table_slice_->sub(next_ * row_bytes, (next_ + rows) * row_bytes));
      return;
    }
    pool_->Post([this, rows, row_bytes] {
      grpc::Slice data = NewSlice(rows * row_bytes);
      ComputeRows(*encoding_, next_, rows, MutableData(data));
      Send(rows, std::move(data));
    });
  }

  void Send(uint32_t rows, grpc::Slice data) {
    message_ = BuildRangeMessage(plan_, method_ == Method::kStreamRows, next_,
                                 rows, std::move(data));
    bytes_sent_ += message_.Length();
    next_ += rows;
    StartWrite(&message_);
  }

  void FinishWith(const absl::Status& status) {
    record_.End(status, bytes_sent_);
    Finish(ToGrpcStatus(status));
  }

  const Method method_;
  grpc::CallbackServerContext* const context_;
  TableCache* const cache_;
  ComputePool* const pool_;
  CallRecord record_;
  RangePlan plan_;
  uint32_t next_ = 0;
  uint64_t bytes_sent_ = 0;
  std::optional<grpc::Slice> table_slice_;  // set when served from the cache
  std::unique_ptr<EncodingPlan> encoding_;  // set when computed per message
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
  auto record = std::make_shared<CallRecord>(stats_, Method::kGetTable);
  absl::StatusOr<TableSpec> spec =
      draining_ ? ShuttingDown() : PlanGetTable(*raw, limits_);
  if (!spec.ok()) {
    FinishUnary(reactor, *record, spec.status(), 0);
    return reactor;
  }
  auto respond = [this, reactor, response, record,
                  spec = *spec](std::shared_ptr<const Table> table) {
    *response = BuildGetTableResponse(spec, std::move(table), pool_->size());
    FinishUnary(reactor, *record, absl::OkStatus(), response->Length());
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
  stream->Start(draining_ ? ShuttingDown() : PlanStreamRows(*raw, limits_));
  return stream;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamBatches(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* raw) {
  auto* stream =
      new TableStream(Method::kStreamBatches, context, cache_, pool_, stats_);
  stream->Start(draining_ ? ShuttingDown() : PlanStreamBatches(*raw, limits_));
  return stream;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto record = std::make_shared<CallRecord>(stats_, Method::kGetRows);
  absl::StatusOr<GatherPlan> planned =
      draining_ ? ShuttingDown() : PlanGetRows(*raw, limits_);
  if (!planned.ok()) {
    FinishUnary(reactor, *record, planned.status(), 0);
    return reactor;
  }
  auto plan = std::make_shared<const GatherPlan>(std::move(*planned));
  auto respond = [this, reactor, response, record,
                  plan](std::shared_ptr<const Table> table) {
    *response = BuildGetRowsResponse(*plan, table.get());
    FinishUnary(reactor, *record, absl::OkStatus(), response->Length());
  };
  if (std::shared_ptr<const Table> table = cache_->GetIfResident(plan->spec)) {
    respond(std::move(table));
  } else {
    // A table that fits the cache is computed whole and kept, so later
    // gathers hit; a larger one is never materialised: compute just the rows.
    const bool cacheable = cache_->Admits(plan->spec);
    pool_->Post([this, respond, cacheable, plan] {
      respond(cacheable ? cache_->GetOrCompute(plan->spec) : nullptr);
    });
  }
  return reactor;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetStats(
    grpc::CallbackServerContext* context, const v1::GetStatsRequest*,
    v1::GetStatsResponse* response) {
  CallRecord record(stats_, Method::kGetStats);
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
  record.End(absl::OkStatus(), 0);
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
