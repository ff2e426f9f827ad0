// LimitError: a status that says which configurable limit a request is over.
//
// The core reports a request over a limit in its own terms ("spec.d is
// 70000, over the limit 65536") and knows nothing of who set the limit. The
// status also carries the limit as a payload, so that the layer that set it
// (the server, from its command line) can name its own knob without parsing
// the message: server/limit_flags.h turns Limit::kD into "--max_d".
//
//   return LimitError(absl::StatusCode::kInvalidArgument, Limit::kD,
//                     absl::StrCat("spec.d is ", d, ", over the limit ", max));
//   ...
//   if (std::optional<Limit> limit = LimitOf(status)) { ... }
//
// Thread safety: pure functions.
#ifndef POSENC_CORE_RUNTIME_LIMIT_ERROR_H_
#define POSENC_CORE_RUNTIME_LIMIT_ERROR_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace posenc {

// The limits a caller of the core configures (SpecLimits, ComputePool and
// the batching of answers).
enum class Limit {
  kD,                  // largest d / dim / channel count (SpecLimits::max_d)
  kMaxLen,             // largest max_len (SpecLimits::max_len_limit)
  kRowsPerRequest,     // most positions or points in one request
  kMessageBytes,       // largest answer message, in bytes
  kQueuedComputeBytes  // bytes of work the compute pool lets wait
};

// A status with `code` and `message` that carries `limit`. `code` must not
// be kOk.
absl::Status LimitError(absl::StatusCode code, Limit limit,
                        absl::string_view message);

// The limit `status` carries, if it was made by LimitError (the message may
// have been changed since; the payload stays).
std::optional<Limit> LimitOf(const absl::Status& status);

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_LIMIT_ERROR_H_
