// Admission in isolation, on real parts (a ComputePool, a ByteBudget, the
// MissLimiter inside): each refusal's exact status, its reason counted, and
// what an admitted computation holds (its slot, its inflight bytes) given
// back when it lets go. The service's calls of it are covered end to end
// by bounded_cost_test and lifecycle_test.
#include "server/admission.h"

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

constexpr char kPeer[] = "ipv4:127.0.0.1:40000";
constexpr char kOtherPeer[] = "ipv4:127.0.0.1:40001";

class AdmissionTest : public ::testing::Test {
 protected:
  static ComputePool::Options PoolOptions() {
    ComputePool::Options options;
    options.threads = 1;
    options.max_queued_bytes = 1000;
    return options;
  }

  // Occupies the pool's one thread until Unblock, so posted tasks queue.
  void BlockPool() {
    absl::Notification started;
    pool_.Post([this, &started] {
      started.Notify();
      unblock_.WaitForNotification();
    });
    started.WaitForNotification();
  }
  void Unblock() {
    if (!unblock_.HasBeenNotified()) unblock_.Notify();
  }
  void TearDown() override { Unblock(); }

  // grpc::Slice (InflightCharge::IntoSlice) needs gRPC's C++ library set
  // up, which a test with no channel or server would not link in:
  // credentials do (their file starts the library).
  const std::shared_ptr<grpc::ChannelCredentials> grpc_library_ =
      grpc::InsecureChannelCredentials();
  ComputePool pool_{PoolOptions()};
  ByteBudget inflight_{4096};
  Admission admission_{/*max_misses_per_connection=*/1, &pool_, &inflight_};
  absl::Notification unblock_;
};

TEST_F(AdmissionTest, Draining_UnavailableAndCounted) {
  EXPECT_TRUE(admission_.CheckNotDraining().ok());
  admission_.StartDraining();
  absl::Status s = admission_.CheckNotDraining();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("shutting down"));
  EXPECT_EQ(admission_.refusals().Get(RefusalReason::kDraining), 1u);
  EXPECT_EQ(admission_.refusals().Get(RefusalReason::kInflightBytes), 0u);
}

TEST_F(AdmissionTest, ChargeOverBudget_ResourceExhaustedNamingFlag) {
  absl::StatusOr<InflightCharge> held = admission_.ChargeInflight(4000);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(inflight_.used(), 4000u);
  absl::StatusOr<InflightCharge> refused = admission_.ChargeInflight(100);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("hold 4000 bytes outside the cache and this answer "
                        "needs 100, over the limit --max_inflight_bytes=4096"));
  EXPECT_EQ(admission_.refusals().Get(RefusalReason::kInflightBytes), 1u);
  EXPECT_EQ(inflight_.used(), 4000u);  // the refusal took nothing
}

TEST_F(AdmissionTest, ChargeDropped_BytesReturned) {
  {
    absl::StatusOr<InflightCharge> charge = admission_.ChargeInflight(1000);
    ASSERT_TRUE(charge.ok());
    InflightCharge moved = *std::move(charge);
    EXPECT_EQ(inflight_.used(), 1000u);
  }
  EXPECT_EQ(inflight_.used(), 0u);
}

TEST_F(AdmissionTest, ChargeIntoSlice_BytesReturnedWhenSliceDropped) {
  absl::StatusOr<InflightCharge> charge = admission_.ChargeInflight(1000);
  ASSERT_TRUE(charge.ok());
  absl::StatusOr<grpc::Slice> slice = charge->IntoSlice();
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->size(), 1000u);
  charge->Reset();  // the slice holds the bytes now, not the charge
  EXPECT_EQ(inflight_.used(), 1000u);
  slice = absl::CancelledError("dropped");
  EXPECT_EQ(inflight_.used(), 0u);
}

TEST_F(AdmissionTest, ComputationAdmitted_RunsHoldingSlotUntilReleased) {
  MissTicket ticket;
  absl::Notification ran;
  ASSERT_TRUE(
      admission_.AdmitComputation(kPeer, 10, ticket, [&] { ran.Notify(); })
          .ok());
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_NE(ticket.slot, nullptr);
  // The connection's one slot is taken until the ticket lets it go.
  MissTicket second;
  absl::Status s = admission_.AdmitComputation(kPeer, 10, second, [] {});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--max_misses_per_connection=1"));
  EXPECT_EQ(second.slot, nullptr);
  EXPECT_EQ(admission_.refusals().Get(RefusalReason::kConnectionMisses), 1u);
  // Another connection has its own.
  MissTicket other;
  EXPECT_TRUE(admission_.AdmitComputation(kOtherPeer, 10, other, [] {}).ok());
  ticket.slot.reset();
  EXPECT_TRUE(admission_.AdmitComputation(kPeer, 10, second, [] {}).ok());
}

TEST_F(AdmissionTest, QueueFull_ResourceExhaustedAndSlotReleased) {
  BlockPool();
  MissTicket queued;
  ASSERT_TRUE(admission_.AdmitComputation(kPeer, 900, queued, [] {}).ok());
  MissTicket refused;
  bool ran = false;
  absl::Status s = admission_.AdmitComputation(kOtherPeer, 200, refused,
                                               [&] { ran = true; });
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--max_queued_compute_bytes"));
  EXPECT_EQ(admission_.refusals().Get(RefusalReason::kQueueFull), 1u);
  // Nothing queued, and the connection's slot is free again.
  EXPECT_EQ(refused.slot, nullptr);
  EXPECT_EQ(pool_.GetStats().queued_bytes, 900u);
  Unblock();
  // What fits beside the queued work (100 + 900 <= 1000) is admitted.
  MissTicket retry;
  absl::Notification done;
  ASSERT_TRUE(
      admission_
          .AdmitComputation(kOtherPeer, 100, retry, [&] { done.Notify(); })
          .ok());
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(ran);
}

TEST(AdmissionMissCostTest, WholeRowsOrJoined_CostOfTheWorkAdded) {
  TableSpec spec;
  spec.d = 8;
  spec.max_len = 100;  // 3200 bytes of float32
  TableCache::Lookup rows;
  EXPECT_EQ(Admission::MissCost(rows, spec, 64), 64u);
  TableCache::Lookup whole;
  whole.compute_whole = true;
  EXPECT_EQ(Admission::MissCost(whole, spec, 64), spec.table_bytes());
  whole.joins_flight = true;
  EXPECT_EQ(Admission::MissCost(whole, spec, 64), 0u);
}

}  // namespace
}  // namespace posenc
