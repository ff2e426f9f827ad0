#include "core/runtime/limit_error.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"

namespace posenc {
namespace {

// The payload's type URL; its value is the Limit as a decimal number.
constexpr absl::string_view kLimitPayload = "type.posenc.dev/posenc.Limit";

}  // namespace

absl::Status LimitError(absl::StatusCode code, Limit limit,
                        absl::string_view message) {
  absl::Status status(code, message);
  status.SetPayload(kLimitPayload,
                    absl::Cord(std::to_string(static_cast<int>(limit))));
  return status;
}

std::optional<Limit> LimitOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kLimitPayload);  // absl::optional
  if (!payload.has_value()) return std::nullopt;
  const std::string value(*payload);
  for (Limit limit : {Limit::kD, Limit::kMaxLen, Limit::kRowsPerRequest,
                      Limit::kMessageBytes, Limit::kQueuedComputeBytes}) {
    if (value == std::to_string(static_cast<int>(limit))) return limit;
  }
  return std::nullopt;
}

}  // namespace posenc
