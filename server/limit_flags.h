// NameServerFlag: names the posenc_server flag that sets the limit a core
// error is about.
//
// The core reports a request over a limit in its own terms ("spec.d is
// 70000, over the limit 65536") and tags the status with the limit
// (core/runtime/limit_error.h); it knows nothing of the server's command
// line. A client that hits such a limit needs to know which server flag
// sets it, so the server names it on the way out:
//
//   "spec.d is 70000, over the limit 65536 (posenc_server --max_d)"
//
// Thread safety: a pure function.
#ifndef POSENC_SERVER_LIMIT_FLAGS_H_
#define POSENC_SERVER_LIMIT_FLAGS_H_

#include "absl/status/status.h"

namespace posenc {

// `status` with " (posenc_server --FLAG)" appended when it carries a Limit
// (LimitOf) that a server flag sets; the same code and payloads. Unchanged
// otherwise.
absl::Status NameServerFlag(absl::Status status);

}  // namespace posenc

#endif  // POSENC_SERVER_LIMIT_FLAGS_H_
