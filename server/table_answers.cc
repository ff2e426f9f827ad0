#include "server/table_answers.h"

#include <utility>

#include "core/plan/encoding.h"
#include "core/plan/encoding_plan.h"
#include "core/plan/real_encoding_plan.h"
#include "core/plan/slow_path_budget.h"
#include "server/limit_flags.h"
#include "server/tensor_message.h"

namespace posenc {

grpc::ByteBuffer TableAnswer(const TableQuery& query,
                             std::shared_ptr<const Table> table) {
  if (query.accept_shared_memory && table->shared_memory() != nullptr) {
    return BuildSharedMemoryTableResponse(query.spec, *table);
  }
  return BuildGetTableResponse(
      query.spec,
      TableSlice(std::move(table)).sub(0, query.spec.table_bytes()));
}

absl::StatusOr<grpc::ByteBuffer> ComputeTableAnswer(const TableQuery& query,
                                                    bool whole,
                                                    TableCache& cache,
                                                    ComputePool& pool,
                                                    Admission& admission) {
  const TableSpec& spec = query.spec;
  std::shared_ptr<const Table> table =
      whole ? cache.ComputeWhole(spec) : nullptr;
  if (table != nullptr) return TableAnswer(query, std::move(table));
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

absl::StatusOr<grpc::ByteBuffer> RowsAnswer(const RowsQuery& query,
                                            const Table* table,
                                            EncodingPlanCache& plans,
                                            InflightCharge& charge) {
  absl::StatusOr<grpc::Slice> data = charge.IntoSlice();
  if (!data.ok()) return data.status();
  if (table != nullptr) {
    GatherRows(query, *table, MutableData(*data));
  } else {
    absl::StatusOr<std::shared_ptr<const EncodingPlan>> plan =
        plans.Get(query.spec);
    if (!plan.ok()) return plan.status();
    ComputePositions(**plan, query.positions, MutableData(*data));
  }
  return BuildGetRowsResponse(query, std::move(*data));
}

absl::StatusOr<grpc::ByteBuffer> ComputeEncodeAnswer(
    const EncodeQuery& query, uint32_t max_rows_per_request,
    absl::Time deadline, RealEncodingPlanCache& plans, InflightCharge& charge) {
  absl::StatusOr<std::shared_ptr<const RealEncodingPlan>> encoding =
      plans.Get(query.spec);
  if (!encoding.ok()) return encoding.status();
  absl::Status valid =
      query.grid.has_value()
          ? (*encoding)->ValidateGrid(*query.grid, max_rows_per_request)
          : (*encoding)->ValidatePositions(query.positions,
                                           max_rows_per_request);
  if (!valid.ok()) return NameServerFlag(valid);
  absl::StatusOr<grpc::Slice> data = charge.IntoSlice();
  if (!data.ok()) return data.status();
  SlowPathBudget budget(SlowPathBudget::kEncodeUnits, deadline);
  if (query.grid.has_value()) {
    (*encoding)->ComputeGridRows(*query.grid, MutableData(*data), &budget);
  } else {
    (*encoding)->ComputeRows(query.positions, MutableData(*data), &budget);
  }
  if (!budget.status().ok()) return budget.status();
  return BuildEncodeResponse(query, std::move(*data));
}

}  // namespace posenc
