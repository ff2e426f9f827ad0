// libFuzzer target: arbitrary bytes as one request message of a posenc table
// method (chosen at compile time by POSENC_FUZZ_METHOD), through the
// server's real planning (parse + validate, server/request_handler.h) and,
// for a valid request, the real cache and response encoding, exactly as the
// service does it. Each response message is parsed back and checked
// against the plan. Limits are small so an iteration stays cheap.
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/encoding.h"
#include "core/encoding_plan.h"
#include "core/table_cache.h"
#include "posenc/v1/posenc.pb.h"
#include "server/request_handler.h"
#include "server/tensor_message.h"

#ifndef POSENC_FUZZ_METHOD
#error \
    "define POSENC_FUZZ_METHOD: 0 GetTable, 1 StreamRows, 2 StreamBatches, 3 GetRows"
#endif

namespace posenc {
namespace {

ServiceLimits Limits() {
  ServiceLimits limits;
  limits.spec.max_d = 64;
  limits.spec.max_len_limit = 512;
  limits.max_rows_per_request = 64;
  limits.max_message_bytes = 16 * 1024;
  return limits;
}

TableCache& Cache() {
  static TableCache* cache =
      new TableCache(TableCache::Options{.budget_bytes = 1 << 20});
  return *cache;
}

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "posenc fuzz check failed: %s\n", what);
    std::abort();
  }
}

// Parses `message` as Response and checks its tensor against the plan.
template <typename Response>
void CheckTensor(const grpc::ByteBuffer& message, const TableSpec& spec,
                 uint32_t rows, bool one_row) {
  Response response;
  Check(ParseRequest(message, &response).ok(), "response does not parse");
  const v1::Tensor* tensor = nullptr;
  if constexpr (std::is_same_v<Response, v1::StreamRowsResponse>) {
    tensor = &response.row();
  } else if constexpr (std::is_same_v<Response, v1::StreamBatchesResponse>) {
    tensor = &response.batch();
  } else if constexpr (std::is_same_v<Response, v1::GetTableResponse>) {
    tensor = &response.table();
  } else {
    tensor = &response.rows();
  }
  Check(tensor->data().size() == size_t{rows} * spec.row_bytes(),
        "data size does not match the shape");
  if (one_row) {
    Check(tensor->shape_size() == 1 && tensor->shape(0) == spec.width(),
          "row shape");
  } else {
    Check(tensor->shape_size() == 2 && tensor->shape(0) == rows &&
              tensor->shape(1) == spec.width(),
          "tensor shape");
  }
}

#if POSENC_FUZZ_METHOD == 1 || POSENC_FUZZ_METHOD == 2
void FuzzRange(const RangePlan& plan, bool rows_stream) {
  std::shared_ptr<const Table> table = Cache().GetIfResident(plan.spec);
  if (table == nullptr) table = Cache().GetOrCompute(plan.spec);
  std::unique_ptr<EncodingPlan> encoding;
  if (table == nullptr) encoding = std::make_unique<EncodingPlan>(plan.spec);
  const size_t row_bytes = plan.spec.row_bytes();
  for (uint32_t next = plan.start; next < plan.end;) {
    const uint32_t rows = std::min(plan.rows_per_message, plan.end - next);
    grpc::Slice data;
    if (table != nullptr) {
      data = TableSlice(table).sub(next * row_bytes, (next + rows) * row_bytes);
    } else {
      data = NewSlice(rows * row_bytes);
      ComputeRows(*encoding, next, rows, MutableData(data));
    }
    const grpc::ByteBuffer message =
        BuildRangeMessage(plan, rows_stream, next, rows, std::move(data));
    if (rows_stream) {
      CheckTensor<v1::StreamRowsResponse>(message, plan.spec, rows, true);
    } else {
      CheckTensor<v1::StreamBatchesResponse>(message, plan.spec, rows, false);
    }
    next += rows;
  }
}
#endif

}  // namespace
}  // namespace posenc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace posenc;
  static const ServiceLimits limits = Limits();
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer raw(&slice, 1);
#if POSENC_FUZZ_METHOD == 0
  absl::StatusOr<TableSpec> spec = PlanGetTable(raw, limits);
  if (!spec.ok()) return 0;
  Check(spec->table_bytes() <= limits.max_message_bytes, "over the limit");
  std::shared_ptr<const Table> table = Cache().GetOrCompute(*spec);
  grpc::Slice bytes;
  if (table != nullptr) {
    bytes = TableSlice(std::move(table)).sub(0, spec->table_bytes());
  } else {
    bytes = NewSlice(spec->table_bytes());
    ComputeRows(*spec, 0, spec->max_len, MutableData(bytes));
  }
  CheckTensor<v1::GetTableResponse>(
      BuildGetTableResponse(*spec, std::move(bytes)), *spec, spec->max_len,
      false);
#elif POSENC_FUZZ_METHOD == 1
  absl::StatusOr<RangePlan> plan = PlanStreamRows(raw, limits);
  if (!plan.ok()) return 0;
  Check(plan->start < plan->end && plan->end <= plan->spec.max_len, "range");
  FuzzRange(*plan, /*rows_stream=*/true);
#elif POSENC_FUZZ_METHOD == 2
  absl::StatusOr<RangePlan> plan = PlanStreamBatches(raw, limits);
  if (!plan.ok()) return 0;
  Check(plan->start < plan->end && plan->end <= plan->spec.max_len, "range");
  Check(plan->rows_per_message >= 1 &&
            uint64_t{plan->rows_per_message} * plan->spec.row_bytes() <=
                limits.max_message_bytes,
        "rows per message");
  FuzzRange(*plan, /*rows_stream=*/false);
#else
  absl::StatusOr<GatherPlan> plan = PlanGetRows(raw, limits);
  if (!plan.ok()) return 0;
  Check(plan->positions.size() <= static_cast<int>(limits.max_rows_per_request),
        "positions");
  const TableCache::Lookup lookup =
      Cache().Find(plan->spec, plan->positions.size());
  std::shared_ptr<const Table> table = lookup.table;
  if (table == nullptr && lookup.compute_whole) {
    table = Cache().ComputeWhole(plan->spec);
  }
  grpc::Slice rows = NewSlice(plan->positions.size() * plan->spec.row_bytes());
  if (table != nullptr) {
    GatherRows(*plan, *table, MutableData(rows));
  } else {
    ComputePositions(plan->spec, plan->positions, MutableData(rows));
  }
  CheckTensor<v1::GetRowsResponse>(BuildGetRowsResponse(*plan, std::move(rows)),
                                   plan->spec, plan->positions.size(), false);
#endif
  return 0;
}
