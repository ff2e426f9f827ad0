#include "server/admission.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/limit_flags.h"
#include "server/tensor_message.h"

namespace posenc {

InflightCharge::InflightCharge(InflightCharge&& o) noexcept
    : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_) {}

InflightCharge& InflightCharge::operator=(InflightCharge&& o) noexcept {
  Reset();
  budget_ = std::exchange(o.budget_, nullptr);
  bytes_ = o.bytes_;
  return *this;
}

absl::StatusOr<grpc::Slice> InflightCharge::IntoSlice() {
  std::optional<grpc::Slice> slice = NewChargedSlice(bytes_, budget_);
  if (!slice.has_value()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes_, " bytes for the answer"));
  }
  budget_ = nullptr;  // the slice returns them now
  return std::move(*slice);
}

void InflightCharge::Reset() {
  if (budget_ != nullptr) budget_->Release(bytes_);
  budget_ = nullptr;
}

Admission::Admission(uint32_t max_misses_per_connection, ComputePool* pool,
                     ByteBudget* inflight)
    : pool_(pool),
      inflight_(inflight),
      miss_limiter_(max_misses_per_connection) {}

absl::Status Admission::Refuse(RefusalReason reason, absl::Status status) {
  refusals_.Count(reason);
  return status;
}

absl::Status Admission::CheckNotDraining() {
  if (!draining_.load(std::memory_order_relaxed)) return absl::OkStatus();
  return Refuse(RefusalReason::kDraining,
                absl::UnavailableError(
                    "posenc is shutting down; retry on another replica"));
}

absl::StatusOr<InflightCharge> Admission::ChargeInflight(uint64_t bytes) {
  if (inflight_->TryAcquire(bytes)) return InflightCharge(inflight_, bytes);
  return Refuse(
      RefusalReason::kInflightBytes,
      absl::ResourceExhaustedError(absl::StrCat(
          "calls in progress hold ", inflight_->used(),
          " bytes outside the cache and this answer needs ", bytes,
          ", over the limit --max_inflight_bytes=", inflight_->limit(),
          "; retry with backoff, or ask for fewer rows per call")));
}

absl::Status Admission::AdmitComputation(const std::string& peer,
                                         uint64_t cost_bytes,
                                         MissTicket& ticket,
                                         std::function<void()> task) {
  absl::StatusOr<std::unique_ptr<MissLimiter::Slot>> slot =
      miss_limiter_.Acquire(peer);
  if (!slot.ok()) {
    return Refuse(RefusalReason::kConnectionMisses, slot.status());
  }
  ticket.slot = std::move(*slot);
  absl::Status posted = pool_->TryPost(peer, cost_bytes, std::move(task));
  if (!posted.ok()) {
    ticket.slot.reset();
    return Refuse(RefusalReason::kQueueFull, NameServerFlag(posted));
  }
  return posted;
}

bool Admission::CallEndedWhileQueued(
    const grpc::CallbackServerContext& context) {
  // gRPC cancels a call whose deadline passed, but on its timer thread,
  // which may not have run yet: the deadline is checked too.
  if (!context.IsCancelled() &&
      std::chrono::system_clock::now() < context.deadline()) {
    return false;
  }
  skipped_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t Admission::MissCost(const TableCache::Lookup& lookup,
                             const TableSpec& spec, uint64_t answer_bytes) {
  if (!lookup.compute_whole) return answer_bytes;
  return lookup.joins_flight ? 0 : spec.table_bytes();
}

}  // namespace posenc
