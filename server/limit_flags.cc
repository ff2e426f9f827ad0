#include "server/limit_flags.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "core/runtime/limit_error.h"

namespace posenc {
namespace {

// The server flag that sets `limit` (server/server_options.h).
const char* FlagOf(Limit limit) {
  switch (limit) {
    case Limit::kD:
      return "--max_d";
    case Limit::kMaxLen:
      return "--max_len_limit";
    case Limit::kRowsPerRequest:
      return "--max_rows_per_request";
    case Limit::kMessageBytes:
      return "--max_message_bytes";
    case Limit::kQueuedComputeBytes:
      return "--max_queued_compute_bytes";
  }
  return nullptr;
}

}  // namespace

absl::Status NameServerFlag(absl::Status status) {
  const std::optional<Limit> limit = LimitOf(status);
  if (!limit.has_value()) return status;
  const char* flag = FlagOf(*limit);
  if (flag == nullptr) return status;
  absl::Status named(
      status.code(),
      absl::StrCat(status.message(), " (posenc_server ", flag, ")"));
  status.ForEachPayload([&named](absl::string_view url, const absl::Cord& v) {
    named.SetPayload(url, v);
  });
  return named;
}

}  // namespace posenc
