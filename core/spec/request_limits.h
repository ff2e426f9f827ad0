// Arithmetic and checks for the parts of a request that are not the table
// spec: how many rows go in one streamed message, which positions a gather
// may name, and whether an answer fits in one message.
//
// Pure functions; no gRPC.
#ifndef POSENC_CORE_SPEC_REQUEST_LIMITS_H_
#define POSENC_CORE_SPEC_REQUEST_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace posenc {

// Target payload of a streamed batch when the caller leaves rows_per_batch
// unset: gRPC streams best with messages of 16-64 KiB.
inline constexpr uint64_t kDefaultBatchBytes = 64 * 1024;

// Rows per StreamBatches message. `requested` 0 picks
// max(1, kDefaultBatchBytes / row_bytes). INVALID_ARGUMENT when
// requested * row_bytes exceeds max_message_bytes (the message names the
// largest allowed value) or a single row does not fit.
absl::StatusOr<uint32_t> ResolveRowsPerBatch(uint32_t requested,
                                             size_t row_bytes,
                                             uint64_t max_message_bytes);

// Checks the positions of a gather: INVALID_ARGUMENT when there are none or
// more than max_rows; OUT_OF_RANGE naming the first position >= max_len.
absl::Status ValidatePositions(absl::Span<const uint32_t> positions,
                               uint32_t max_len, uint32_t max_rows);

// RESOURCE_EXHAUSTED when `payload_bytes` exceed max_message_bytes; `what`
// names the answer and `hint` tells the caller what to do instead.
absl::Status CheckMessageSize(uint64_t payload_bytes,
                              uint64_t max_message_bytes, const char* what,
                              const char* hint);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_REQUEST_LIMITS_H_
