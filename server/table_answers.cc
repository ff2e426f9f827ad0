#include "server/table_answers.h"

#include <utility>

#include "core/plan/encoding.h"
#include "core/plan/encoding_plan.h"
#include "core/plan/real_encoding_plan.h"
#include "server/limit_flags.h"
#include "server/tensor_message.h"

namespace posenc {

grpc::ByteBuffer TableAnswer(const TablePlan& plan,
                             std::shared_ptr<const Table> table) {
  if (plan.accept_shared_memory && table->shared_memory() != nullptr) {
    return BuildSharedMemoryTableResponse(plan.spec, *table);
  }
  return BuildGetTableResponse(
      plan.spec, TableSlice(std::move(table)).sub(0, plan.spec.table_bytes()));
}

absl::StatusOr<grpc::ByteBuffer> ComputeTableAnswer(const TablePlan& plan,
                                                    bool whole,
                                                    TableCache& cache,
                                                    ComputePool& pool,
                                                    Admission& admission) {
  const TableSpec& spec = plan.spec;
  std::shared_ptr<const Table> table =
      whole ? cache.ComputeWhole(spec) : nullptr;
  if (table != nullptr) return TableAnswer(plan, std::move(table));
  // Not admitted to the cache: compute just this answer, outside it.
  absl::StatusOr<InflightCharge> charge =
      admission.ChargeInflight(spec.table_bytes());
  if (!charge.ok()) return charge.status();
  absl::StatusOr<grpc::Slice> data = charge->IntoSlice();
  if (!data.ok()) return data.status();
  ComputeRowsParallel(EncodingPlan(spec), 0, spec.max_len, MutableData(*data),
                      &pool);
  cache.RecordRowsComputed(spec, spec.max_len);
  return BuildGetTableResponse(spec, std::move(*data));
}

absl::StatusOr<grpc::ByteBuffer> RowsAnswer(const GatherPlan& plan,
                                            const Table* table,
                                            InflightCharge& charge) {
  absl::StatusOr<grpc::Slice> data = charge.IntoSlice();
  if (!data.ok()) return data.status();
  if (table != nullptr) {
    GatherRows(plan, *table, MutableData(*data));
  } else {
    ComputePositions(plan.spec, plan.positions, MutableData(*data));
  }
  return BuildGetRowsResponse(plan, std::move(*data));
}

absl::StatusOr<grpc::ByteBuffer> ComputeEncodeAnswer(
    const EncodePlan& plan, uint32_t max_rows_per_request,
    RealEncodingPlanCache& plans, InflightCharge& charge) {
  absl::StatusOr<std::shared_ptr<const RealEncodingPlan>> encoding =
      plans.Get(plan.spec);
  if (!encoding.ok()) return encoding.status();
  absl::Status valid =
      plan.grid.has_value()
          ? (*encoding)->ValidateGrid(*plan.grid, max_rows_per_request)
          : (*encoding)->ValidatePositions(plan.positions,
                                           max_rows_per_request);
  if (!valid.ok()) return NameServerFlag(valid);
  absl::StatusOr<grpc::Slice> data = charge.IntoSlice();
  if (!data.ok()) return data.status();
  if (plan.grid.has_value()) {
    (*encoding)->ComputeGridRows(*plan.grid, MutableData(*data));
  } else {
    (*encoding)->ComputeRows(plan.positions, MutableData(*data));
  }
  return BuildEncodeResponse(plan, std::move(*data));
}

}  // namespace posenc
