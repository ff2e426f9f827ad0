// The one place where absl::Status becomes grpc::Status (and back, for the
// client): codes map one to one, messages are kept.
#ifndef POSENC_CONVERT_GRPC_STATUS_H_
#define POSENC_CONVERT_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace posenc {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace posenc

#endif  // POSENC_CONVERT_GRPC_STATUS_H_
