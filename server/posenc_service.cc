#include "server/posenc_service.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "convert/preset_request.h"
#include "core/runtime/buffer_reserve.h"
#include "server/table_answers.h"
#include "server/unary_call.h"

namespace posenc {
namespace {

// Encode's kept plans (core/cache/real_encoding_plan_cache.h): a few specs in
// use at once per server; a plan is ~48 bytes per frequency (a dim-320 one is
// ~8 KiB, the largest a max_d of 65536 allows ~1.5 MiB).
constexpr size_t kEncodePlansKept = 16;
constexpr size_t kEncodePlanBytesKept = size_t{8} << 20;
// GetRows' kept plans (core/cache/encoding_plan_cache.h), for rows computed
// outside the table cache: a plan is ~48 bytes per frequency (1.5 MiB at
// d = 65536, twice that for a RoPE layout), so the largest few fit.
constexpr size_t kRowPlansKept = 16;
constexpr size_t kRowPlanBytesKept = size_t{16} << 20;

// True when the call's request message never arrived: the client reset
// the stream before its DATA frame (RST_STREAM, also when HEADERS, DATA and
// RST_STREAM arrive together), half-closed it without a message (HEADERS
// with END_STREAM), or the call's deadline passed first. gRPC 1.51's
// callback API still runs the handler then, with a ByteBuffer that is not
// Valid(); context->IsCancelled() is no test, since it is still false at
// that point for a stream reset after its HEADERS and for a half-close. A
// message that did arrive, even an empty one, is a Valid() ByteBuffer (an
// empty request stays INVALID_ARGUMENT). Measured in
// tests/hardening/amplifier_test.cc.
bool RequestMissing(const grpc::ByteBuffer* raw) {
  return raw == nullptr || !raw->Valid();
}

// How such a call ends, before any lookup, and how a call that ended while
// its computation was queued ends (Admission::CallEndedWhileQueued): nobody
// listens, so CANCELLED with no message (nothing to allocate) and no log
// line (CallScope::LogIfFailed skips CANCELLED).
absl::Status QuietCancelled() {
  return absl::Status(absl::StatusCode::kCancelled, "");
}

// Finishes `call` with `answer`, stored in *response when it is one.
grpc::ServerUnaryReactor* FinishWithAnswer(
    const UnaryCall& call, absl::StatusOr<grpc::ByteBuffer> answer,
    grpc::ByteBuffer* response) {
  if (!answer.ok()) return call.Finish(answer.status(), 0);
  *response = *std::move(answer);
  return call.Finish(absl::OkStatus(), response->Length());
}

}  // namespace

PositionalEncodingService::PositionalEncodingService(
    const ServiceLimits& limits, TableCache* cache, ComputePool* pool,
    ByteBudget* inflight, MethodStats* stats, CallCounters* calls)
    : limits_(limits),
      cache_(cache),
      pool_(pool),
      inflight_(inflight),
      stats_(stats),
      calls_(calls),
      admission_(limits.max_misses_per_connection, pool, inflight),
      stream_parts_{cache, pool, &admission_, stats, calls},
      encode_plans_(limits.spec, kEncodePlansKept, kEncodePlanBytesKept),
      row_plans_(kRowPlansKept, kRowPlanBytesKept),
      start_time_(absl::Now()) {}

grpc::ServerUnaryReactor* PositionalEncodingService::GetTable(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  UnaryCall call(context, calls_, stats_, Method::kGetTable);
  if (RequestMissing(raw)) return call.Finish(QuietCancelled(), 0);
  absl::Status draining = admission_.CheckNotDraining();
  absl::StatusOr<TableQuery> query =
      draining.ok() ? ParseGetTable(*raw, limits_) : draining;
  if (!query.ok()) return call.Finish(query.status(), 0);
  const TableCache::Lookup lookup =
      cache_->Find(query->spec, query->spec.max_len);
  if (lookup.table != nullptr) {
    return FinishWithAnswer(call, TableAnswer(*query, lookup.table), response);
  }
  // A miss. Its answer is charged to the inflight budget only if the table
  // ends up outside the cache (not admitted): a cached table is sent from
  // the cache's own bytes.
  auto ticket = std::make_shared<MissTicket>();
  const bool whole = lookup.compute_whole;
  absl::Status admitted = admission_.AdmitComputation(
      context->peer(),
      Admission::MissCost(lookup, query->spec, query->spec.table_bytes()),
      *ticket, [this, context, call, response, query = *query, ticket, whole] {
        if (admission_.CallEndedWhileQueued(*context)) {
          if (whole) cache_->CancelWhole(query.spec);
          ticket->slot.reset();
          call.Finish(QuietCancelled(), 0);
          return;
        }
        absl::StatusOr<grpc::ByteBuffer> answer =
            ComputeTableAnswer(query, whole, *cache_, *pool_, admission_);
        ticket->slot.reset();  // before the client sees the answer
        FinishWithAnswer(call, std::move(answer), response);
      });
  if (admitted.ok()) return call.reactor();
  if (whole) cache_->CancelWhole(query->spec);
  return call.Finish(admitted, 0);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamRows(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* raw) {
  auto* stream = new TableStream(Method::kStreamRows, context, stream_parts_);
  if (RequestMissing(raw)) {
    stream->Start(QuietCancelled());
    return stream;
  }
  absl::Status draining = admission_.CheckNotDraining();
  stream->Start(draining.ok() ? ParseStreamRows(*raw, limits_)
                              : absl::StatusOr<RangeQuery>(draining));
  return stream;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamBatches(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* raw) {
  auto* stream =
      new TableStream(Method::kStreamBatches, context, stream_parts_);
  if (RequestMissing(raw)) {
    stream->Start(QuietCancelled());
    return stream;
  }
  absl::Status draining = admission_.CheckNotDraining();
  stream->Start(draining.ok() ? ParseStreamBatches(*raw, limits_)
                              : absl::StatusOr<RangeQuery>(draining));
  return stream;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  UnaryCall call(context, calls_, stats_, Method::kGetRows);
  if (RequestMissing(raw)) return call.Finish(QuietCancelled(), 0);
  absl::Status draining = admission_.CheckNotDraining();
  absl::StatusOr<RowsQuery> parsed =
      draining.ok() ? ParseGetRows(*raw, limits_) : draining;
  if (!parsed.ok()) return call.Finish(parsed.status(), 0);
  auto query = std::make_shared<const RowsQuery>(std::move(*parsed));
  const uint64_t rows = query->positions.size();
  const uint64_t answer_bytes = rows * query->spec.row_bytes();
  // Hit or miss, the answer is a fresh buffer of answer_bytes.
  absl::StatusOr<InflightCharge> charge =
      admission_.ChargeInflight(answer_bytes);
  if (!charge.ok()) return call.Finish(charge.status(), 0);
  const TableCache::Lookup lookup = cache_->Find(query->spec, rows);
  if (lookup.table != nullptr) {
    return FinishWithAnswer(
        call, RowsAnswer(*query, lookup.table.get(), row_plans_, *charge),
        response);
  }
  auto ticket = std::make_shared<MissTicket>();
  ticket->charge = *std::move(charge);
  const bool whole = lookup.compute_whole;
  absl::Status admitted = admission_.AdmitComputation(
      context->peer(), Admission::MissCost(lookup, query->spec, answer_bytes),
      *ticket, [this, context, call, response, query, ticket, whole, rows] {
        if (admission_.CallEndedWhileQueued(*context)) {
          if (whole) cache_->CancelWhole(query->spec);
          ticket->slot.reset();
          call.Finish(QuietCancelled(), 0);
          return;
        }
        std::shared_ptr<const Table> table =
            whole ? cache_->ComputeWhole(query->spec) : nullptr;
        if (table == nullptr) cache_->RecordRowsComputed(query->spec, rows);
        ticket->slot.reset();  // before the client sees the answer
        FinishWithAnswer(
            call, RowsAnswer(*query, table.get(), row_plans_, ticket->charge),
            response);
      });
  if (admitted.ok()) return call.reactor();
  if (whole) cache_->CancelWhole(query->spec);
  return call.Finish(admitted, 0);
}

grpc::ServerUnaryReactor* PositionalEncodingService::Encode(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  UnaryCall call(context, calls_, stats_, Method::kEncode);
  if (RequestMissing(raw)) return call.Finish(QuietCancelled(), 0);
  absl::Status draining = admission_.CheckNotDraining();
  absl::StatusOr<EncodeQuery> parsed =
      draining.ok() ? ParseEncode(*raw, limits_) : draining;
  if (!parsed.ok()) return call.Finish(parsed.status(), 0);
  auto query = std::make_shared<const EncodeQuery>(std::move(*parsed));
  absl::StatusOr<InflightCharge> charge =
      admission_.ChargeInflight(query->answer_bytes());
  if (!charge.ok()) return call.Finish(charge.status(), 0);
  auto ticket = std::make_shared<MissTicket>();
  ticket->charge = *std::move(charge);
  // The exact slow path stops at the call's deadline: past it nobody reads
  // the answer (std::chrono's max is gRPC's "no deadline").
  const absl::Time deadline =
      context->deadline() == std::chrono::system_clock::time_point::max()
          ? absl::InfiniteFuture()
          : absl::FromChrono(context->deadline());
  absl::Status admitted = admission_.AdmitComputation(
      context->peer(), query->answer_bytes(), *ticket,
      [this, context, call, response, query, ticket, deadline] {
        if (admission_.CallEndedWhileQueued(*context)) {
          ticket->slot.reset();
          call.Finish(QuietCancelled(), 0);
          return;
        }
        absl::StatusOr<grpc::ByteBuffer> answer =
            ComputeEncodeAnswer(*query, limits_.max_rows_per_request, deadline,
                                encode_plans_, ticket->charge);
        ticket->slot.reset();  // before the client sees the answer
        FinishWithAnswer(call, std::move(answer), response);
      });
  if (admitted.ok()) return call.reactor();
  return call.Finish(admitted, 0);
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetStats(
    grpc::CallbackServerContext* context, const v1::GetStatsRequest*,
    v1::GetStatsResponse* response) {
  UnaryCall call(context, calls_, stats_, Method::kGetStats);
  const TableCache::Stats cache = cache_->GetStats();
  v1::CacheStats* c = response->mutable_cache();
  c->set_hits(cache.hits);
  c->set_misses(cache.misses);
  c->set_evictions(cache.evictions);
  c->set_resident_bytes(cache.resident_bytes);
  c->set_entries(cache.entries);
  c->set_budget_bytes(cache.budget_bytes);
  c->set_computations(cache.computations);
  c->set_admissions(cache.admissions);
  c->set_rejections(cache.rejections);
  c->set_rows_computed_outside(cache.rows_computed_outside);
  c->set_shm_files(cache.shm_files);
  c->set_shm_fallbacks(cache.shm_fallbacks);
  const ComputePool::Stats pool = pool_->GetStats();
  v1::ComputeStats* compute = response->mutable_compute();
  compute->set_queued_tasks(pool.queued_tasks);
  compute->set_queued_bytes(pool.queued_bytes);
  compute->set_running_tasks(pool.running_tasks);
  compute->set_started_tasks(pool.started_tasks);
  compute->set_inflight_bytes(inflight_->used());
  const BufferReserve::Stats reserve = WarmReserve().GetStats();
  compute->set_warm_reserve_bytes(reserve.held_bytes);
  compute->set_warm_reserve_reuses(reserve.reuses);
  compute->set_warm_reserve_refilled_bytes(reserve.refilled_bytes);
  compute->set_skipped_tasks(admission_.skipped());
  const RefusalStats& refusals = admission_.refusals();
  v1::RefusalStats* refused = response->mutable_refusals();
  refused->set_queue_full(refusals.Get(RefusalReason::kQueueFull));
  refused->set_connection_misses(
      refusals.Get(RefusalReason::kConnectionMisses));
  refused->set_inflight_bytes(refusals.Get(RefusalReason::kInflightBytes));
  refused->set_draining(refusals.Get(RefusalReason::kDraining));
  v1::ServerInfo* info = response->mutable_server();
  info->set_version(POSENC_VERSION);
  info->set_uptime_seconds(absl::ToDoubleSeconds(absl::Now() - start_time_));
  info->set_max_d(limits_.spec.max_d);
  info->set_max_len_limit(limits_.spec.max_len_limit);
  info->set_max_rows_per_request(limits_.max_rows_per_request);
  info->set_max_message_bytes(limits_.max_message_bytes);
  info->set_max_queued_compute_bytes(pool_->max_queued_bytes());
  info->set_max_misses_per_connection(limits_.max_misses_per_connection);
  info->set_max_inflight_bytes(inflight_->limit());
  info->set_max_warm_reserve_bytes(reserve.bound_bytes);
  info->set_shm_directory(limits_.shm_directory);
  // Count this call first, so a caller sees its own GetStats.
  const grpc::Status status = call.scope().End(absl::OkStatus(), 0);
  for (int m = 0; m < kMethodCount; ++m) {
    const Method method = static_cast<Method>(m);
    const MethodStats::Counts counts = stats_->Get(method);
    v1::MethodStats* out = response->add_methods();
    out->set_method(MethodName(method));
    out->set_ok(counts.ok);
    out->set_errors(counts.errors);
  }
  call.reactor()->Finish(status);
  return call.reactor();
}

grpc::ServerUnaryReactor* PositionalEncodingService::ResolvePreset(
    grpc::CallbackServerContext* context,
    const v1::ResolvePresetRequest* request,
    v1::ResolvePresetResponse* response) {
  UnaryCall call(context, calls_, stats_, Method::kResolvePreset);
  absl::StatusOr<v1::ResolvePresetResponse> resolved =
      ResolvePresetRequest(*request, limits_.spec);
  if (!resolved.ok()) return call.Finish(resolved.status(), 0);
  *response = *std::move(resolved);
  return call.Finish(absl::OkStatus(), response->ByteSizeLong());
}

}  // namespace posenc
