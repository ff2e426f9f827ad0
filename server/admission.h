// Admission: the service's policy on what a call may take before it does
// any work. A call is refused up front, with a status naming the limit:
//   - UNAVAILABLE once the server drains (StartDraining);
//   - RESOURCE_EXHAUSTED when the memory it needs outside the cache (its
//     answer, or a stream's chunks) would take the calls in progress past
//     the inflight budget (--max_inflight_bytes);
//   - RESOURCE_EXHAUSTED when a computation (a miss, or an Encode) finds its
//     connection with max_misses_per_connection computations in progress,
//     or the compute queue full (--max_queued_compute_bytes).
// Each refusal is counted by reason in refusals(). Cache hits never reach
// the pool, so they take no slot and never wait behind computations.
//
// Usage, for a computation whose answer is `bytes` long:
//   absl::StatusOr<InflightCharge> charge = admission.ChargeInflight(bytes);
//   if (!charge.ok()) return charge.status();
//   auto ticket = std::make_shared<MissTicket>();
//   ticket->charge = *std::move(charge);
//   absl::Status admitted = admission.AdmitComputation(
//       peer, bytes, *ticket, [ticket] { ...; ticket->slot.reset(); ... });
//
// Thread-safe. The pool and the budget must outlive the Admission, and the
// Admission every ticket and charge it handed out.
#ifndef POSENC_SERVER_ADMISSION_H_
#define POSENC_SERVER_ADMISSION_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/slice.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cache/table_cache.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "core/spec/table_spec.h"
#include "server/miss_limiter.h"
#include "server/refusal_stats.h"

namespace posenc {

// Bytes taken from the inflight budget, returned on destruction (or Reset)
// unless handed to a response buffer first (IntoSlice). Move-only.
class InflightCharge {
 public:
  InflightCharge() = default;
  InflightCharge(InflightCharge&& o) noexcept;
  InflightCharge& operator=(InflightCharge&& o) noexcept;
  ~InflightCharge() { Reset(); }

  // A writable buffer of the charged size that returns the bytes to the
  // budget when gRPC lets go of it; RESOURCE_EXHAUSTED if malloc fails (the
  // bytes are then returned with the charge).
  absl::StatusOr<grpc::Slice> IntoSlice();
  // Returns the bytes now (no-op when none are held).
  void Reset();

 private:
  friend class Admission;
  InflightCharge(ByteBudget* budget, uint64_t bytes)
      : budget_(budget), bytes_(bytes) {}

  ByteBudget* budget_ = nullptr;  // null: nothing held
  uint64_t bytes_ = 0;
};

// What a computation holds until it is done: its connection's slot and the
// inflight bytes of its answer. Reset the slot before the client can see
// the answer, so its next call finds the slot free.
struct MissTicket {
  std::unique_ptr<MissLimiter::Slot> slot;
  InflightCharge charge;
};

class Admission {
 public:
  // `max_misses_per_connection`: computations one connection may have in
  // progress (>= 1).
  Admission(uint32_t max_misses_per_connection, ComputePool* pool,
            ByteBudget* inflight);

  // From now on CheckNotDraining refuses.
  void StartDraining() { draining_.store(true, std::memory_order_relaxed); }
  // UNAVAILABLE while draining (counted), else OK.
  absl::Status CheckNotDraining();

  // Takes `bytes` of the inflight budget, or RESOURCE_EXHAUSTED (counted)
  // naming what calls in progress hold and the limit.
  absl::StatusOr<InflightCharge> ChargeInflight(uint64_t bytes);

  // Admits a computation of `peer`'s connection (gRPC's peer string): takes
  // its connection slot into `ticket.slot`, then queues `task` on the pool
  // for `cost_bytes` of work. On a refusal (RESOURCE_EXHAUSTED, counted)
  // nothing is queued and `ticket.slot` is left empty.
  absl::Status AdmitComputation(const std::string& peer, uint64_t cost_bytes,
                                MissTicket& ticket, std::function<void()> task);

  // Bytes of work a miss adds to the compute queue: the whole table, or just
  // its answer (`answer_bytes`); nothing when it joins a computation already
  // on its way.
  static uint64_t MissCost(const TableCache::Lookup& lookup,
                           const TableSpec& spec, uint64_t answer_bytes);

  // For an admitted computation at the start of its turn: true (counted in
  // skipped()) when its call ended while it waited in the queue, cancelled
  // by its client or past its deadline. Nobody would read the answer, so
  // the caller finishes the call CANCELLED without computing (calling
  // TableCache::CancelWhole if Find told it to compute whole). Otherwise a
  // client that cancels, or sets a deadline shorter than the queue's wait,
  // buys work for nothing, and an overloaded server computes answers
  // nobody waits for while live calls queue behind them.
  bool CallEndedWhileQueued(const grpc::CallbackServerContext& context);
  uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

  const RefusalStats& refusals() const { return refusals_; }

 private:
  // `status`, counted under `reason`.
  absl::Status Refuse(RefusalReason reason, absl::Status status);

  ComputePool* const pool_;
  ByteBudget* const inflight_;
  MissLimiter miss_limiter_;
  RefusalStats refusals_;
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> skipped_{0};
};

}  // namespace posenc

#endif  // POSENC_SERVER_ADMISSION_H_
