#include "core/spec/request_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/runtime/limit_error.h"

namespace posenc {

absl::StatusOr<uint32_t> ResolveRowsPerBatch(uint32_t requested,
                                             size_t row_bytes,
                                             uint64_t max_message_bytes) {
  const uint64_t max_rows = max_message_bytes / row_bytes;
  if (max_rows == 0) {
    return LimitError(
        absl::StatusCode::kInvalidArgument, Limit::kMessageBytes,
        absl::StrCat("one row is ", row_bytes, " bytes, over the limit of ",
                     max_message_bytes, " bytes a message"));
  }
  if (requested == 0) {
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(kDefaultBatchBytes / row_bytes, 1, max_rows));
  }
  if (requested > max_rows) {
    return LimitError(
        absl::StatusCode::kInvalidArgument, Limit::kMessageBytes,
        absl::StrCat("rows_per_batch is ", requested, ", over the limit ",
                     max_rows, " (", max_message_bytes, " bytes a message / ",
                     row_bytes, " bytes per row)"));
  }
  return requested;
}

absl::Status ValidatePositions(absl::Span<const uint32_t> positions,
                               uint32_t max_len, uint32_t max_rows) {
  if (positions.empty()) {
    return absl::InvalidArgumentError(
        "positions is empty: name at least one position");
  }
  if (positions.size() > max_rows) {
    return LimitError(absl::StatusCode::kInvalidArgument,
                      Limit::kRowsPerRequest,
                      absl::StrCat("positions has ", positions.size(),
                                   " entries, over the limit ", max_rows));
  }
  for (size_t k = 0; k < positions.size(); ++k) {
    if (positions[k] >= max_len) {
      return absl::OutOfRangeError(
          absl::StrCat("positions[", k, "] is ", positions[k],
                       ", past spec.max_len=", max_len));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMessageSize(uint64_t payload_bytes,
                              uint64_t max_message_bytes, const char* what,
                              const char* hint) {
  if (payload_bytes <= max_message_bytes) return absl::OkStatus();
  return LimitError(
      absl::StatusCode::kResourceExhausted, Limit::kMessageBytes,
      absl::StrCat(what, " is ", payload_bytes, " bytes, over the limit of ",
                   max_message_bytes, " bytes a message; ", hint));
}

}  // namespace posenc
