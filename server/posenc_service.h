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
// Thread-safe. The cache, pool and stats must outlive the service and every
// call it started (shut the grpc::Server down before destroying them).
#ifndef POSENC_SERVER_POSENC_SERVICE_H_
#define POSENC_SERVER_POSENC_SERVICE_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "core/table_cache.h"
#include "core/table_spec.h"
#include "posenc/v1/posenc.grpc.pb.h"
#include "server/compute_pool.h"
#include "server/method_stats.h"
#include "server/request_handler.h"

namespace posenc {

using RawTableMethods = v1::PositionalEncoding::WithRawCallbackMethod_GetTable<
    v1::PositionalEncoding::WithRawCallbackMethod_StreamRows<
        v1::PositionalEncoding::WithRawCallbackMethod_StreamBatches<
            v1::PositionalEncoding::WithRawCallbackMethod_GetRows<
                v1::PositionalEncoding::WithCallbackMethod_GetStats<
                    v1::PositionalEncoding::Service>>>>>;

class PositionalEncodingService final : public RawTableMethods {
 public:
  PositionalEncodingService(const ServiceLimits& limits, TableCache* cache,
                            ComputePool* pool, MethodStats* stats);

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
  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::GetStatsRequest* request,
                                     v1::GetStatsResponse* response) override;

  // From now on table RPCs answer UNAVAILABLE at once (GetStats still
  // answers), so a draining server finishes only the calls it already has.
  void StartDraining() { draining_.store(true, std::memory_order_relaxed); }

 private:
  const ServiceLimits limits_;
  TableCache* const cache_;
  ComputePool* const pool_;
  MethodStats* const stats_;
  const absl::Time start_time_;
  std::atomic<bool> draining_{false};
};

}  // namespace posenc

#endif  // POSENC_SERVER_POSENC_SERVICE_H_
