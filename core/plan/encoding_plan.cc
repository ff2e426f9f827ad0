#include "core/plan/encoding_plan.h"

namespace posenc {

EncodingPlan::EncodingPlan(const TableSpec& spec)
    : spec_(spec),
      plain_(spec.grid == nullptr ? std::make_shared<const PlainTablePlan>(spec)
                                  : nullptr),
      grid_(spec.grid != nullptr ? std::make_shared<const GridPlan>(spec)
                                 : nullptr) {}

void EncodingPlan::ComputeRow(uint32_t pos, std::byte* out) const {
  if (grid_ != nullptr) {
    grid_->ComputeRow(pos, out);
  } else {
    plain_->ComputeRow(pos, out);
  }
}

void EncodingPlan::ComputeRows(uint32_t first, uint32_t count,
                               std::byte* out) const {
  if (grid_ != nullptr) {
    grid_->ComputeRows(first, count, out);
  } else {
    plain_->ComputeRows(first, count, out);
  }
}

size_t EncodingPlan::MemoryBytes() const {
  return plain_ != nullptr ? plain_->MemoryBytes() : grid_->MemoryBytes();
}

uint32_t EncodingPlan::AngleAdditionStep() const {
  return plain_ != nullptr ? plain_->AngleAdditionStep() : 0;
}

}  // namespace posenc
