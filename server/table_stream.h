// TableStream: the reactor of one StreamRows or StreamBatches call. Serves
// rows [start, end) of one table as a server stream: one row per message
// (StreamRows) or rows_per_message rows (StreamBatches).
//
// Cached mode: rows come from a cached table (resident, or computed whole
// because the stream wants most of it); one write is outstanding at a time
// and each OnWriteDone starts the next.
//
// Computed mode (the table is not cached): rows are computed on the pool in
// chunks of whole messages (>= 256 KiB where a message is smaller), and
// computing the next chunk overlaps writing the current one. A chunk per
// pool task, not a message: a one-row message would take the slow per-row
// path and a turn in the connection's queue for every row. At most one
// chunk being written, one computed and one being computed exist at once,
// so a stream holds three chunks: it is admitted (Admission) for those
// inflight bytes, a connection slot and a place in the compute queue before
// any work, and refused with RESOURCE_EXHAUSTED otherwise.
//
// A slow reader never makes the server buffer a table: the next message is
// built only after OnWriteDone. A cancelled stream stops at its next write
// or chunk and ends CANCELLED.
//
// Usage, in a server-streaming handler:
//   auto* stream = new TableStream(Method::kStreamRows, context, parts);
//   stream->Start(ParseStreamRows(*raw, limits));  // or an error status
//   return stream;
//
// Lifetime and threads: gRPC holds one reference until OnDone, each pool
// task one; the last to let go deletes the stream (never delete it). Start
// runs once, on the handler's thread; then a pool thread and a gRPC thread
// may both move the stream on (computed mode guards its state with mu_).
// Everything in Parts must outlive every stream.
#ifndef POSENC_SERVER_TABLE_STREAM_H_
#define POSENC_SERVER_TABLE_STREAM_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>
#include <grpcpp/support/slice.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cache/table_cache.h"
#include "core/plan/encoding_plan.h"
#include "core/runtime/compute_pool.h"
#include "server/admission.h"
#include "server/call_scope.h"
#include "server/method_stats.h"
#include "server/request_handler.h"

namespace posenc {

class TableStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // What streams use, owned by the service.
  struct Parts {
    TableCache* cache = nullptr;
    ComputePool* pool = nullptr;
    Admission* admission = nullptr;
    MethodStats* stats = nullptr;
    CallCounters* calls = nullptr;
  };

  // `method` is kStreamRows or kStreamBatches.
  TableStream(Method method, grpc::CallbackServerContext* context,
              const Parts& parts);

  // With a query, looks the table up and starts writing; a miss is admitted
  // first (see above). With an error, ends the call with it.
  void Start(absl::StatusOr<RangeQuery> query);

  void OnWriteDone(bool ok) override;
  void OnCancel() override {}  // the outstanding write or task ends the call
  void OnDone() override { Unref(); }

  // Rows per pool task in computed mode: whole messages, at least 256 KiB
  // when a message is smaller (and so at least the rows the fast range
  // kernel needs, for rows up to 1 KiB), never more than the stream asks.
  static uint32_t ChunkRows(const RangeQuery& query);

 private:
  // A computed chunk: rows [first, first + rows), `written` of them sent.
  struct Computed {
    uint32_t first = 0;
    uint32_t rows = 0;
    uint32_t written = 0;
    grpc::Slice data;
  };

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The first pool task of a miss: the whole table from the cache if asked
  // and admitted (cached mode), else the computed mode.
  void FirstComputation(bool whole);
  // Cached mode: writes the next message, or finishes.
  void WriteNext();
  // Computed mode: decides under the lock what moves the stream on (write
  // the computed message, compute the next one, finish), then does it with
  // the lock released (gRPC may call back on another thread meanwhile).
  void Pump(std::unique_lock<std::mutex> lock);
  // Computed mode: rows [first, first + rows), then Pump.
  void ComputeMessage(uint32_t first, uint32_t rows);
  void FinishWith(const absl::Status& status);

  const Method method_;
  grpc::CallbackServerContext* const context_;
  const Parts parts_;
  const std::string peer_;
  CallScope scope_;  // until the last reference goes (after OnDone)
  RangeQuery query_;
  std::atomic<int> refs_{1};  // gRPC's, until OnDone
  uint64_t bytes_sent_ = 0;
  // Held while rows are computed per message.
  MissTicket ticket_;
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

}  // namespace posenc

#endif  // POSENC_SERVER_TABLE_STREAM_H_
