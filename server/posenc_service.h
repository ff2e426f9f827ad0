// PositionalEncodingService: the gRPC adapter for posenc.v1.PositionalEncoding.
//
// Thin: it plans each request with server/request_handler.h (parsing and
// validation), calls core/ (cache, encoding), and converts absl::Status to
// grpc::Status once. Table methods are raw
// (ByteBuffer) callback methods so that a cache hit is sent from the cached
// bytes without a copy; GetStats is a typed callback method.
//
// Streams write one message at a time and start the next write only after
// OnWriteDone, so a slow reader never makes the server buffer a table. Table
// computations run on the ComputePool, never on gRPC's callback threads.
//
// What a call costs follows what it asks for: the cache (TableCache::Find)
// says whether a miss computes the whole table or just the call's rows. A
// miss is refused up front with RESOURCE_EXHAUSTED, before any work, when
// its connection already has max_misses_per_connection computations in
// progress, when the compute queue is full, or when the memory it needs
// outside the cache (its response buffer) would take calls in progress past
// the inflight budget. Cache hits never wait for the pool. A call whose
// request never arrived (the client reset the stream, half-closed it
// without a message, or its deadline passed first) ends CANCELLED before
// any of that, with no log line.
//
// Register it on a server whose contexts come from a CallContextAllocator
// (server/unary_call.h), as PosencServer::Create does:
//   builder.RegisterService(&service);
//   builder.SetContextAllocator(std::make_unique<CallContextAllocator>());
//
// Thread-safe. The cache, pool and stats must outlive the service and every
// call it started (shut the grpc::Server down before destroying them).
#ifndef POSENC_SERVER_POSENC_SERVICE_H_
#define POSENC_SERVER_POSENC_SERVICE_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "core/byte_budget.h"
#include "core/compute_pool.h"
#include "core/real_encoding_plan_cache.h"
#include "core/table_cache.h"
#include "core/table_spec.h"
#include "posenc/v1/posenc.grpc.pb.h"
#include "server/call_scope.h"
#include "server/method_stats.h"
#include "server/miss_limiter.h"
#include "server/refusal_stats.h"
#include "server/request_handler.h"

namespace posenc {

using RawTableMethods = v1::PositionalEncoding::WithRawCallbackMethod_GetTable<
    v1::PositionalEncoding::WithRawCallbackMethod_StreamRows<
        v1::PositionalEncoding::WithRawCallbackMethod_StreamBatches<
            v1::PositionalEncoding::WithRawCallbackMethod_GetRows<
                v1::PositionalEncoding::WithRawCallbackMethod_Encode<
                    v1::PositionalEncoding::WithCallbackMethod_GetStats<
                        v1::PositionalEncoding::
                            WithCallbackMethod_ResolvePreset<
                                v1::PositionalEncoding::Service>>>>>>>;

class PositionalEncodingService final : public RawTableMethods {
 public:
  // `inflight` bounds the bytes calls hold outside the cache; the cache
  // should charge evicted tables to the same budget.
  // `calls` counts the calls alive in gRPC (see server/call_scope.h).
  PositionalEncodingService(const ServiceLimits& limits, TableCache* cache,
                            ComputePool* pool, ByteBudget* inflight,
                            MethodStats* stats, CallCounters* calls);

  grpc::ServerUnaryReactor* GetTable(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* StreamRows(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* StreamBatches(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* GetRows(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  // Real-valued points: never cached; every call is a computation on the
  // pool, admitted like a miss (connection slot, queue, inflight bytes).
  grpc::ServerUnaryReactor* Encode(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::GetStatsRequest* request,
                                     v1::GetStatsResponse* response) override;
  // Resolves a preset (core/presets.h), reading config_json when given
  // (common/model_config.h). Computes nothing, never queues.
  grpc::ServerUnaryReactor* ResolvePreset(
      grpc::CallbackServerContext* context,
      const v1::ResolvePresetRequest* request,
      v1::ResolvePresetResponse* response) override;

  // From now on table RPCs answer UNAVAILABLE at once (GetStats still
  // answers), so a draining server finishes only the calls it already has.
  void StartDraining() { draining_.store(true, std::memory_order_relaxed); }

  const RefusalStats& refusals() const { return refusals_; }

 private:
  class TableStream;
  struct MissTicket;

  // A unary call whose request never arrived (reset, half-closed without
  // a message, deadline): ends CANCELLED at once, counted in the stats, no
  // other work and no log line.
  grpc::ServerUnaryReactor* FinishRequestMissing(
      grpc::CallbackServerContext* context, Method method);
  // Status of a refused call, counted under `reason`.
  absl::Status Refuse(RefusalReason reason, absl::Status status);
  // UNAVAILABLE while draining (counted), else OK.
  absl::Status CheckNotDraining();
  // Takes `bytes` of the inflight budget, or RESOURCE_EXHAUSTED (counted).
  absl::Status ChargeInflight(uint64_t bytes);
  // A connection slot for a miss, or RESOURCE_EXHAUSTED (counted).
  absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> AcquireMissSlot(
      grpc::CallbackServerContext* context);
  // pool_->TryPost for the call's connection; a refusal is counted.
  absl::Status PostMiss(grpc::CallbackServerContext* context,
                        uint64_t cost_bytes, std::function<void()> task);

  const ServiceLimits limits_;
  TableCache* const cache_;
  ComputePool* const pool_;
  ByteBudget* const inflight_;
  MethodStats* const stats_;
  CallCounters* const calls_;
  MissLimiter miss_limiter_;
  // Encode's plans of the last specs (their frequencies), not values.
  RealEncodingPlanCache encode_plans_;
  RefusalStats refusals_;
  const absl::Time start_time_;
  std::atomic<bool> draining_{false};
};

}  // namespace posenc

#endif  // POSENC_SERVER_POSENC_SERVICE_H_
