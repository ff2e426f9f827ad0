#include "server/posenc_service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/preset_request.h"
#include "core/buffer_reserve.h"
#include "core/encoding.h"
#include "core/real_encoding_plan.h"
#include "server/tensor_message.h"
#include "server/unary_call.h"

namespace posenc {
namespace {

// Encode's kept plans (core/real_encoding_plan_cache.h): a few specs in use
// at once per server; a plan is ~48 bytes per frequency (a dim-320 one is
// ~8 KiB, the largest a max_d of 65536 allows ~1.5 MiB).
constexpr size_t kEncodePlansKept = 16;
constexpr size_t kEncodePlanBytesKept = size_t{8} << 20;

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

// How such a call ends: CANCELLED with no message (nothing to allocate) and
// no log line (CallScope::LogIfFailed skips CANCELLED), before any lookup.
absl::Status RequestMissingStatus() {
  return absl::Status(absl::StatusCode::kCancelled, "");
}

// Bytes taken from the inflight budget, returned on destruction unless
// handed to a response buffer first. Move-only.
class InflightCharge {
 public:
  InflightCharge() = default;
  InflightCharge(ByteBudget* budget, uint64_t bytes)
      : budget_(budget), bytes_(bytes) {}
  InflightCharge(InflightCharge&& o) noexcept
      : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_) {}
  InflightCharge& operator=(InflightCharge&& o) noexcept {
    Reset();
    budget_ = std::exchange(o.budget_, nullptr);
    bytes_ = o.bytes_;
    return *this;
  }
  ~InflightCharge() { Reset(); }

  // A writable buffer of the charged size that returns the bytes to the
  // budget when gRPC lets go of it; RESOURCE_EXHAUSTED if malloc fails.
  absl::StatusOr<grpc::Slice> IntoSlice() {
    std::optional<grpc::Slice> slice = NewChargedSlice(bytes_, budget_);
    if (!slice.has_value()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes_, " bytes for the answer"));
    }
    budget_ = nullptr;  // the slice returns them now
    return std::move(*slice);
  }
  void Reset() {
    if (budget_ != nullptr) budget_->Release(bytes_);
    budget_ = nullptr;
  }

 private:
  ByteBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

// Bytes of work a miss adds to the compute queue: the whole table, or just
// its answer; nothing when it joins a computation already on its way.
uint64_t MissCost(const TableCache::Lookup& lookup, const TableSpec& spec,
                  uint64_t answer_bytes) {
  if (!lookup.compute_whole) return answer_bytes;
  return lookup.joins_flight ? 0 : spec.table_bytes();
}

}  // namespace

// What a miss holds until its computation is done: its connection's slot and
// the inflight bytes of its answer.
struct PositionalEncodingService::MissTicket {
  std::unique_ptr<MissLimiter::Slot> slot;
  InflightCharge charge;
};

absl::Status PositionalEncodingService::Refuse(RefusalReason reason,
                                               absl::Status status) {
  refusals_.Count(reason);
  return status;
}

absl::Status PositionalEncodingService::CheckNotDraining() {
  if (!draining_.load(std::memory_order_relaxed)) return absl::OkStatus();
  return Refuse(RefusalReason::kDraining,
                absl::UnavailableError(
                    "posenc is shutting down; retry on another replica"));
}

absl::Status PositionalEncodingService::ChargeInflight(uint64_t bytes) {
  if (inflight_->TryAcquire(bytes)) return absl::OkStatus();
  return Refuse(
      RefusalReason::kInflightBytes,
      absl::ResourceExhaustedError(absl::StrCat(
          "calls in progress hold ", inflight_->used(),
          " bytes outside the cache and this answer needs ", bytes,
          ", over the limit --max_inflight_bytes=", inflight_->limit(),
          "; retry with backoff, or ask for fewer rows per call")));
}

absl::StatusOr<std::unique_ptr<MissLimiter::Slot>>
PositionalEncodingService::AcquireMissSlot(
    grpc::CallbackServerContext* context) {
  absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
      miss_limiter_.Acquire(context->peer());
  if (!slot.ok()) {
    return Refuse(RefusalReason::kConnectionMisses, slot.status());
  }
  return slot;
}

absl::Status PositionalEncodingService::PostMiss(
    grpc::CallbackServerContext* context, uint64_t cost_bytes,
    std::function<void()> task) {
  absl::Status posted =
      pool_->TryPost(context->peer(), cost_bytes, std::move(task));
  if (!posted.ok()) return Refuse(RefusalReason::kQueueFull, posted);
  return posted;
}

// Serves rows [start, end) of one table as a server stream: one row per
// message (StreamRows) or rows_per_message rows (StreamBatches).
//
// Cached mode: rows come from a cached table (resident, or computed whole
// because the stream wants most of it); one write is outstanding at a time
// and each OnWriteDone starts the next, so members need no lock.
//
// Computed mode (the table is not cached): rows are computed on the pool in
// chunks of whole messages (ChunkRows: >= 256 KiB where a message is
// smaller), and computing the next chunk overlaps writing the current one.
// A chunk per pool task, not a message: a one-row message would take the
// slow per-row path and a turn in the connection's queue for every row. At
// most one chunk being written, one computed and one being computed exist
// at once (memory per stream: three chunks), guarded by mu_ because a pool
// thread and a gRPC thread both move the stream on.
//
// Lifetime: gRPC holds one reference until OnDone, each pool task one; the
// last to let go deletes the stream.
class PositionalEncodingService::TableStream final
    : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  TableStream(Method method, grpc::CallbackServerContext* context,
              PositionalEncodingService* service)
      : method_(method),
        context_(context),
        service_(service),
        peer_(context->peer()),
        scope_(context, service->calls_, service->stats_, method) {}

  // On a valid plan, looks the table up and starts writing; a miss first
  // takes its connection slot, its inflight bytes and a place in the queue.
  void Start(absl::StatusOr<RangePlan> plan) {
    if (!plan.ok()) return FinishWith(plan.status());
    plan_ = std::move(*plan);
    next_ = plan_.start;
    next_compute_ = plan_.start;
    TableCache* cache = service_->cache_;
    const TableCache::Lookup lookup =
        cache->Find(plan_.spec, plan_.end - plan_.start);
    if (lookup.table != nullptr) {
      table_slice_ = TableSlice(lookup.table);
      return WriteNext();
    }
    // Computed mode holds up to three chunks (see above).
    chunk_rows_ = ChunkRows(plan_);
    const uint64_t chunk_bytes = uint64_t{chunk_rows_} * plan_.spec.row_bytes();
    absl::Status admitted = service_->ChargeInflight(3 * chunk_bytes);
    if (admitted.ok()) {
      charge_ = InflightCharge(service_->inflight_, 3 * chunk_bytes);
      absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
          service_->AcquireMissSlot(context_);
      admitted = slot.status();
      if (slot.ok()) slot_ = std::move(*slot);
    }
    const bool whole = lookup.compute_whole;
    if (admitted.ok()) {
      Ref();
      admitted = service_->PostMiss(
          context_, MissCost(lookup, plan_.spec, chunk_bytes), [this, whole] {
            FirstComputation(whole);
            Unref();
          });
      if (!admitted.ok()) Unref();
    }
    if (!admitted.ok()) {
      if (whole) cache->CancelWhole(plan_.spec);
      FinishWith(admitted);
    }
  }

  void OnWriteDone(bool ok) override {
    if (table_slice_.has_value()) {
      if (!ok) return FinishWith(absl::CancelledError("stream write failed"));
      return WriteNext();
    }
    std::unique_lock<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok && !end_.has_value()) {
      end_ = absl::CancelledError("stream write failed");
    }
    Pump(std::move(lock));
  }

  void OnCancel() override {}  // the outstanding write or task ends the call

  void OnDone() override { Unref(); }

 private:
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The first pool task of a miss: the whole table from the cache if asked
  // and admitted (cached mode), else the computed mode.
  void FirstComputation(bool whole) {
    std::shared_ptr<const Table> table =
        whole ? service_->cache_->ComputeWhole(plan_.spec) : nullptr;
    if (table != nullptr) {
      table_slice_ = TableSlice(std::move(table));
      charge_.Reset();  // served from the cache from now on
      slot_.reset();
      return WriteNext();
    }
    encoding_ = std::make_unique<EncodingPlan>(plan_.spec);  // once
    // The first chunk right here, without a second turn in the queue.
    std::unique_lock<std::mutex> lock(mu_);
    const uint32_t first = next_compute_;
    const uint32_t rows = std::min(chunk_rows_, plan_.end - next_compute_);
    if (rows == 0) return Pump(std::move(lock));
    next_compute_ += rows;
    computing_ = true;
    lock.unlock();
    ComputeMessage(first, rows);
  }

  // Cached mode: writes the next message, or finishes.
  void WriteNext() {
    if (context_->IsCancelled()) {
      return FinishWith(absl::CancelledError("cancelled by the client"));
    }
    if (next_ >= plan_.end) return FinishWith(absl::OkStatus());
    const uint32_t rows = std::min(plan_.rows_per_message, plan_.end - next_);
    const size_t row_bytes = plan_.spec.row_bytes();
    message_ = BuildRangeMessage(
        plan_, method_ == Method::kStreamRows, next_, rows,
        table_slice_->sub(next_ * row_bytes, (next_ + rows) * row_bytes));
    bytes_sent_ += message_.Length();
    next_ += rows;
    StartWrite(&message_);
  }

  // Computed mode: decides under the lock what moves the stream on (write
  // the computed message, compute the next one, finish), then does it with
  // the lock released (gRPC may call back on another thread meanwhile).
  void Pump(std::unique_lock<std::mutex> lock) {
    bool write = false;
    uint32_t compute_first = 0, compute_rows = 0;
    std::optional<absl::Status> finish;
    if (!end_.has_value() && context_->IsCancelled()) {
      end_ = absl::CancelledError("cancelled by the client");
    }
    if (end_.has_value()) {
      // Stop; finish once no computation or write is outstanding.
      if (!computing_ && !writing_ && !finished_) finish = *end_;
    } else {
      if (!writing_) {
        if (!current_.has_value() && ready_.has_value()) {
          current_ = std::move(ready_);
          ready_.reset();
        }
        if (current_.has_value()) {
          // The next message: a view of the chunk (no copy).
          const uint32_t rows = std::min(plan_.rows_per_message,
                                         current_->rows - current_->written);
          const size_t row_bytes = plan_.spec.row_bytes();
          message_ = BuildRangeMessage(
              plan_, method_ == Method::kStreamRows,
              current_->first + current_->written, rows,
              current_->data.sub(current_->written * row_bytes,
                                 (current_->written + rows) * row_bytes));
          bytes_sent_ += message_.Length();
          current_->written += rows;
          if (current_->written == current_->rows) current_.reset();
          writing_ = write = true;
        }
      }
      if (!computing_ && !ready_.has_value() && next_compute_ < plan_.end) {
        compute_first = next_compute_;
        compute_rows = std::min(chunk_rows_, plan_.end - next_compute_);
        next_compute_ += compute_rows;
        computing_ = true;
      }
      if (!writing_ && !computing_ && !current_.has_value() &&
          !ready_.has_value() && !finished_) {
        finish = absl::OkStatus();  // every row computed and written
      }
    }
    if (finish.has_value()) finished_ = true;
    lock.unlock();
    if (write) StartWrite(&message_);
    if (compute_rows > 0) {
      const size_t bytes = size_t{compute_rows} * plan_.spec.row_bytes();
      Ref();
      // The continuation of an admitted stream: queued whatever the queue
      // holds, behind the other connections' turns.
      service_->pool_->Post(peer_, bytes, [this, compute_first, compute_rows] {
        ComputeMessage(compute_first, compute_rows);
        Unref();
      });
    }
    if (finish.has_value()) FinishWith(*finish);
  }

  void ComputeMessage(uint32_t first, uint32_t rows) {
    grpc::Slice data = NewSlice(size_t{rows} * plan_.spec.row_bytes());
    ComputeRows(*encoding_, first, rows, MutableData(data));
    service_->cache_->RecordRowsComputed(plan_.spec, rows);
    std::unique_lock<std::mutex> lock(mu_);
    computing_ = false;
    ready_ = Computed{first, rows, 0, std::move(data)};
    Pump(std::move(lock));
  }

  void FinishWith(const absl::Status& status) {
    // Free the connection's slot before the client can see the end and
    // start its next call.
    slot_.reset();
    charge_.Reset();
    Finish(scope_.End(status, bytes_sent_));
  }

  // Rows per pool task in computed mode: whole messages, at least 256 KiB
  // when a message is smaller (and so at least the rows the fast range
  // kernel needs, for rows up to 1 KiB), never more than the stream asks.
  static uint32_t ChunkRows(const RangePlan& plan) {
    constexpr uint64_t kChunkBytes = uint64_t{256} << 10;
    const uint64_t message_bytes =
        uint64_t{plan.rows_per_message} * plan.spec.row_bytes();
    const uint64_t messages = std::max<uint64_t>(
        1, kChunkBytes / std::max<uint64_t>(1, message_bytes));
    const uint64_t rows = messages * plan.rows_per_message;
    return static_cast<uint32_t>(
        std::min<uint64_t>(rows, std::max<uint32_t>(1, plan.end - plan.start)));
  }

  // A computed chunk: rows [first, first + rows), `written` of them sent.
  struct Computed {
    uint32_t first = 0;
    uint32_t rows = 0;
    uint32_t written = 0;
    grpc::Slice data;
  };

  const Method method_;
  grpc::CallbackServerContext* const context_;
  PositionalEncodingService* const service_;
  const std::string peer_;
  CallScope scope_;  // until the last reference goes (after OnDone)
  RangePlan plan_;
  std::atomic<int> refs_{1};  // gRPC's, until OnDone
  uint64_t bytes_sent_ = 0;
  // Held while rows are computed per message.
  std::unique_ptr<MissLimiter::Slot> slot_;
  InflightCharge charge_;
  grpc::ByteBuffer message_;  // the write in flight
  // Cached mode.
  std::optional<grpc::Slice> table_slice_;
  uint32_t next_ = 0;  // next row to write
  // Computed mode.
  std::unique_ptr<EncodingPlan> encoding_;
  uint32_t chunk_rows_ = 0;  // set in Start, before any task
  std::mutex mu_;
  uint32_t next_compute_ ABSL_GUARDED_BY(mu_) = 0;  // first row not taken
  bool computing_ ABSL_GUARDED_BY(mu_) = false;     // a task computes
  bool writing_ ABSL_GUARDED_BY(mu_) = false;       // a write is in flight
  bool finished_ ABSL_GUARDED_BY(mu_) = false;      // Finish was decided
  std::optional<Computed> current_ ABSL_GUARDED_BY(mu_);  // being written
  std::optional<Computed> ready_ ABSL_GUARDED_BY(mu_);    // computed, unwritten
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);  // stop with this
};

PositionalEncodingService::PositionalEncodingService(
    const ServiceLimits& limits, TableCache* cache, ComputePool* pool,
    ByteBudget* inflight, MethodStats* stats, CallCounters* calls)
    : limits_(limits),
      cache_(cache),
      pool_(pool),
      inflight_(inflight),
      stats_(stats),
      calls_(calls),
      miss_limiter_(limits.max_misses_per_connection),
      encode_plans_(limits.spec, kEncodePlansKept, kEncodePlanBytesKept),
      start_time_(absl::Now()) {}

grpc::ServerUnaryReactor* PositionalEncodingService::FinishRequestMissing(
    grpc::CallbackServerContext* context, Method method) {
  UnaryCall call(context, calls_, stats_, method);
  return call.Finish(RequestMissingStatus(), 0);
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetTable(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  if (RequestMissing(raw)) {
    return FinishRequestMissing(context, Method::kGetTable);
  }
  UnaryCall call(context, calls_, stats_, Method::kGetTable);
  absl::Status draining = CheckNotDraining();
  absl::StatusOr<TablePlan> plan =
      draining.ok() ? PlanGetTable(*raw, limits_) : draining;
  if (!plan.ok()) {
    call.Finish(plan.status(), 0);
    return call.reactor();
  }
  const TableSpec* spec = &plan->spec;
  const bool accept_shm = plan->accept_shared_memory;
  const uint64_t bytes = spec->table_bytes();
  const TableCache::Lookup lookup = cache_->Find(*spec, spec->max_len);
  if (lookup.table != nullptr) {
    *response = accept_shm && lookup.table->shared_memory() != nullptr
                    ? BuildSharedMemoryTableResponse(*spec, *lookup.table)
                    : BuildGetTableResponse(
                          *spec, TableSlice(lookup.table).sub(0, bytes));
    call.Finish(absl::OkStatus(), response->Length());
    return call.reactor();
  }
  // A miss. Its answer is charged to the inflight budget only if the table
  // ends up outside the cache (not admitted): a cached table is sent from
  // the cache's own bytes.
  auto ticket = std::make_shared<MissTicket>();
  absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
      AcquireMissSlot(context);
  absl::Status admitted = slot.status();
  if (slot.ok()) {
    ticket->slot = std::move(*slot);
    admitted =
        PostMiss(context, MissCost(lookup, *spec, bytes),
                 [this, call, response, ticket, spec = *spec, accept_shm,
                  whole = lookup.compute_whole] {
                   const uint64_t bytes = spec.table_bytes();
                   std::shared_ptr<const Table> table =
                       whole ? cache_->ComputeWhole(spec) : nullptr;
                   if (table != nullptr && accept_shm &&
                       table->shared_memory() != nullptr) {
                     ticket->slot.reset();
                     *response = BuildSharedMemoryTableResponse(spec, *table);
                     call.Finish(absl::OkStatus(), response->Length());
                     return;
                   }
                   absl::StatusOr<grpc::Slice> data;
                   if (table != nullptr) {
                     data = TableSlice(std::move(table)).sub(0, bytes);
                   } else if (absl::Status s = ChargeInflight(bytes); !s.ok()) {
                     data = s;
                   } else {  // not admitted: compute just this answer
                     ticket->charge = InflightCharge(inflight_, bytes);
                     data = ticket->charge.IntoSlice();
                     if (data.ok()) {
                       ComputeRowsParallel(EncodingPlan(spec), 0, spec.max_len,
                                           MutableData(*data), pool_);
                       cache_->RecordRowsComputed(spec, spec.max_len);
                     }
                   }
                   ticket->slot.reset();  // before the client sees the answer
                   if (!data.ok()) {
                     call.Finish(data.status(), 0);
                     return;
                   }
                   *response = BuildGetTableResponse(spec, std::move(*data));
                   call.Finish(absl::OkStatus(), response->Length());
                 });
  }
  if (!admitted.ok()) {
    if (lookup.compute_whole) cache_->CancelWhole(*spec);
    call.Finish(admitted, 0);
  }
  return call.reactor();
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamRows(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* raw) {
  auto* stream = new TableStream(Method::kStreamRows, context, this);
  if (RequestMissing(raw)) {
    stream->Start(RequestMissingStatus());
    return stream;
  }
  absl::Status draining = CheckNotDraining();
  stream->Start(draining.ok() ? PlanStreamRows(*raw, limits_)
                              : absl::StatusOr<RangePlan>(draining));
  return stream;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>*
PositionalEncodingService::StreamBatches(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* raw) {
  auto* stream = new TableStream(Method::kStreamBatches, context, this);
  if (RequestMissing(raw)) {
    stream->Start(RequestMissingStatus());
    return stream;
  }
  absl::Status draining = CheckNotDraining();
  stream->Start(draining.ok() ? PlanStreamBatches(*raw, limits_)
                              : absl::StatusOr<RangePlan>(draining));
  return stream;
}

grpc::ServerUnaryReactor* PositionalEncodingService::GetRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  if (RequestMissing(raw)) {
    return FinishRequestMissing(context, Method::kGetRows);
  }
  UnaryCall call(context, calls_, stats_, Method::kGetRows);
  absl::Status draining = CheckNotDraining();
  absl::StatusOr<GatherPlan> planned =
      draining.ok() ? PlanGetRows(*raw, limits_) : draining;
  if (!planned.ok()) {
    call.Finish(planned.status(), 0);
    return call.reactor();
  }
  auto plan = std::make_shared<const GatherPlan>(std::move(*planned));
  const uint64_t rows = plan->positions.size();
  const uint64_t answer_bytes = rows * plan->spec.row_bytes();
  // Hit or miss, the answer is a fresh buffer of answer_bytes.
  auto ticket = std::make_shared<MissTicket>();
  if (absl::Status s = ChargeInflight(answer_bytes); !s.ok()) {
    call.Finish(s, 0);
    return call.reactor();
  }
  ticket->charge = InflightCharge(inflight_, answer_bytes);
  const TableCache::Lookup lookup = cache_->Find(plan->spec, rows);
  auto respond = [call, response, plan, ticket](const Table* table) {
    absl::StatusOr<grpc::Slice> data = ticket->charge.IntoSlice();
    if (!data.ok()) {
      call.Finish(data.status(), 0);
      return;
    }
    if (table != nullptr) {
      GatherRows(*plan, *table, MutableData(*data));
    } else {
      ComputePositions(plan->spec, plan->positions, MutableData(*data));
    }
    *response = BuildGetRowsResponse(*plan, std::move(*data));
    call.Finish(absl::OkStatus(), response->Length());
  };
  if (lookup.table != nullptr) {
    respond(lookup.table.get());
    return call.reactor();
  }
  absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
      AcquireMissSlot(context);
  absl::Status admitted = slot.status();
  if (slot.ok()) {
    ticket->slot = std::move(*slot);
    const bool whole = lookup.compute_whole;
    admitted =
        PostMiss(context, MissCost(lookup, plan->spec, answer_bytes),
                 [this, respond, plan, ticket, whole, rows] {
                   std::shared_ptr<const Table> table =
                       whole ? cache_->ComputeWhole(plan->spec) : nullptr;
                   if (table == nullptr)
                     cache_->RecordRowsComputed(plan->spec, rows);
                   ticket->slot.reset();  // before the client sees the answer
                   respond(table.get());
                 });
  }
  if (!admitted.ok()) {
    if (lookup.compute_whole) cache_->CancelWhole(plan->spec);
    call.Finish(admitted, 0);
  }
  return call.reactor();
}

grpc::ServerUnaryReactor* PositionalEncodingService::Encode(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw,
    grpc::ByteBuffer* response) {
  if (RequestMissing(raw)) {
    return FinishRequestMissing(context, Method::kEncode);
  }
  UnaryCall call(context, calls_, stats_, Method::kEncode);
  absl::Status draining = CheckNotDraining();
  absl::StatusOr<EncodePlan> planned =
      draining.ok() ? PlanEncode(*raw, limits_) : draining;
  if (!planned.ok()) {
    call.Finish(planned.status(), 0);
    return call.reactor();
  }
  auto plan = std::make_shared<const EncodePlan>(std::move(*planned));
  const uint64_t answer_bytes = plan->answer_bytes();
  auto ticket = std::make_shared<MissTicket>();
  absl::Status admitted = ChargeInflight(answer_bytes);
  if (admitted.ok()) {
    ticket->charge = InflightCharge(inflight_, answer_bytes);
    absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
        AcquireMissSlot(context);
    admitted = slot.status();
    if (slot.ok()) ticket->slot = std::move(*slot);
  }
  if (admitted.ok()) {
    // The frequencies (O(half) MPFR products, or a kept plan) and the
    // rows, on the pool.
    admitted =
        PostMiss(context, answer_bytes, [this, call, response, plan, ticket] {
          absl::StatusOr<std::shared_ptr<const RealEncodingPlan>> encoding =
              encode_plans_.Get(plan->spec);
          absl::Status status =
              !encoding.ok() ? encoding.status()
              : plan->grid.has_value()
                  ? (*encoding)->ValidateGrid(*plan->grid,
                                              limits_.max_rows_per_request)
                  : (*encoding)->ValidatePositions(
                        plan->positions, limits_.max_rows_per_request);
          absl::StatusOr<grpc::Slice> data =
              status.ok() ? ticket->charge.IntoSlice()
                          : absl::StatusOr<grpc::Slice>(status);
          if (data.ok()) {
            if (plan->grid.has_value()) {
              (*encoding)->ComputeGridRows(*plan->grid, MutableData(*data));
            } else {
              (*encoding)->ComputeRows(plan->positions, MutableData(*data));
            }
          }
          ticket->slot.reset();  // before the client sees the answer
          if (!data.ok()) {
            call.Finish(data.status(), 0);
            return;
          }
          *response = BuildEncodeResponse(*plan, std::move(*data));
          call.Finish(absl::OkStatus(), response->Length());
        });
  }
  if (!admitted.ok()) call.Finish(admitted, 0);
  return call.reactor();
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
  v1::RefusalStats* refused = response->mutable_refusals();
  refused->set_queue_full(refusals_.Get(RefusalReason::kQueueFull));
  refused->set_connection_misses(
      refusals_.Get(RefusalReason::kConnectionMisses));
  refused->set_inflight_bytes(refusals_.Get(RefusalReason::kInflightBytes));
  refused->set_draining(refusals_.Get(RefusalReason::kDraining));
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
  if (resolved.ok()) *response = *std::move(resolved);
  return call.Finish(resolved.status(),
                     resolved.ok() ? response->ByteSizeLong() : 0);
}

}  // namespace posenc
