// PositionalEncodingService: the gRPC adapter for posenc.v1.PositionalEncoding.
//
// Thin: each method parses its request into a query (server/request_handler.h:
// parsing and validation), looks the table up in the cache, admits a miss
// (server/admission.h), has the answer built or computed on the ComputePool
// (server/table_answers.h; streams: server/table_stream.h), and finishes
// its call (server/unary_call.h), where absl::Status becomes grpc::Status
// once. Table methods are raw (ByteBuffer) callback methods so that a cache
// hit is sent from the cached bytes without a copy; GetStats and
// ResolvePreset are typed callback methods.
//
// What a call costs follows what it asks for: the cache (TableCache::Find)
// says whether a miss computes the whole table or just the call's rows.
// Cache hits never wait for the pool; computations never run on gRPC's
// callback threads. A call whose request never arrived (the client reset
// the stream, half-closed it without a message, or its deadline passed
// first) ends CANCELLED before any of that, with no log line.
//
// Usage: register it on a server whose contexts come from a
// CallContextAllocator (server/unary_call.h), as PosencServer::Create does:
//   builder.RegisterService(&service);
//   builder.SetContextAllocator(std::make_unique<CallContextAllocator>());
//
// Thread-safe. The cache, pool and stats must outlive the service and every
// call it started (shut the grpc::Server down before destroying them).
#ifndef POSENC_SERVER_POSENC_SERVICE_H_
#define POSENC_SERVER_POSENC_SERVICE_H_

#include <cstdint>

#include "absl/time/time.h"
#include "core/cache/encoding_plan_cache.h"
#include "core/cache/real_encoding_plan_cache.h"
#include "core/cache/table_cache.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "core/spec/table_spec.h"
#include "posenc/v1/posenc.grpc.pb.h"
#include "server/admission.h"
#include "server/call_scope.h"
#include "server/method_stats.h"
#include "server/refusal_stats.h"
#include "server/request_handler.h"
#include "server/table_stream.h"

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
  // Resolves a preset (presets/presets.h), reading config_json when given
  // (presets/model_config.h). Computes nothing, never queues.
  grpc::ServerUnaryReactor* ResolvePreset(
      grpc::CallbackServerContext* context,
      const v1::ResolvePresetRequest* request,
      v1::ResolvePresetResponse* response) override;

  // From now on table RPCs answer UNAVAILABLE at once (GetStats still
  // answers), so a draining server finishes only the calls it already has.
  void StartDraining() { admission_.StartDraining(); }

  const RefusalStats& refusals() const { return admission_.refusals(); }
  // Computations dropped because their call ended while they were queued.
  uint64_t skipped_tasks() const { return admission_.skipped(); }

 private:
  const ServiceLimits limits_;
  TableCache* const cache_;
  ComputePool* const pool_;
  ByteBudget* const inflight_;
  MethodStats* const stats_;
  CallCounters* const calls_;
  Admission admission_;
  const TableStream::Parts stream_parts_;
  // Encode's plans of the last specs (their frequencies), not values.
  RealEncodingPlanCache encode_plans_;
  // GetRows' plans of the last table families whose rows it computed.
  EncodingPlanCache row_plans_;
  const absl::Time start_time_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_POSENC_SERVICE_H_
