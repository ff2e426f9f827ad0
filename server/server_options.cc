#include "server/server_options.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace posenc {
namespace {

// gRPC takes these durations as an int of milliseconds.
constexpr double kMaxGrpcSeconds = 2147483;

// OK if `value` (seconds) is finite and within [min, max], or is 0 when
// `zero_means_off`; else INVALID_ARGUMENT naming the flag and the range.
absl::Status CheckSeconds(const char* flag, double value, double min,
                          double max, bool zero_means_off) {
  if (zero_means_off && value == 0) return absl::OkStatus();
  if (std::isfinite(value) && value >= min && value <= max) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s must be %s%.15g..%.15g seconds, got %g", flag,
                      zero_means_off ? "0 (off) or " : "", min, max, value));
}

}  // namespace

absl::Status ValidateServerOptions(const ServerOptions& o) {
  const size_t colon = o.listen.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(absl::string_view(o.listen).substr(colon + 1), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen must be host:port (e.g. 127.0.0.1:50051), got '",
                     o.listen, "'"));
  }
  if (o.cache_bytes < (uint64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cache_bytes must be at least 1048576 (1 MiB), got ", o.cache_bytes));
  }
  if (o.max_d < 2 || o.max_d > kProvenMaxD) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_d must be 2..", kProvenMaxD, ", got ", o.max_d,
        ": exactness is proven and tested only up to d=", kProvenMaxD,
        " (docs/numerics.md)"));
  }
  if (o.max_len_limit < 1 || o.max_len_limit > kProvenMaxLen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_len_limit must be 1..", kProvenMaxLen, ", got ", o.max_len_limit,
        ": exactness is proven and tested only for positions "
        "up to 2^24 (docs/numerics.md)"));
  }
  if (o.max_rows_per_request < 1) {
    return absl::InvalidArgumentError(
        "--max_rows_per_request must be at least 1");
  }
  if (o.max_message_bytes < 1024 || o.max_message_bytes > (uint64_t{1} << 31)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_message_bytes must be 1024..2147483648 (gRPC's limit), got ",
        o.max_message_bytes));
  }
  if (o.max_request_bytes < 1024 || o.max_request_bytes > (uint64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_request_bytes must be 1024..1073741824, got ",
                     o.max_request_bytes));
  }
  if (o.max_concurrent_streams < 1 ||
      o.max_concurrent_streams > uint32_t{INT32_MAX}) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_concurrent_streams must be 1..2147483647, got ",
                     o.max_concurrent_streams));
  }
  if (o.max_metadata_bytes < 1024 || o.max_metadata_bytes > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_metadata_bytes must be 1024..1048576, got ",
                     o.max_metadata_bytes));
  }
  if (o.max_ping_strikes < 1 || o.max_ping_strikes > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_ping_strikes must be 1..1000 (gRPC's 0 would allow PINGs "
        "without limit), got ",
        o.max_ping_strikes));
  }
  for (absl::Status s : {
           CheckSeconds("min_ping_interval_seconds",
                        o.min_ping_interval_seconds, 1, 86400, false),
           CheckSeconds("max_connection_idle_seconds",
                        o.max_connection_idle_seconds, 0.001, kMaxGrpcSeconds,
                        true),
           CheckSeconds("max_connection_age_seconds",
                        o.max_connection_age_seconds, 0.001, kMaxGrpcSeconds,
                        true),
           CheckSeconds("max_connection_age_grace_seconds",
                        o.max_connection_age_grace_seconds, 0, kMaxGrpcSeconds,
                        false),
           CheckSeconds("handshake_timeout_seconds",
                        o.handshake_timeout_seconds, 0.1, 3600, false),
       }) {
    if (!s.ok()) return s;
  }
  if (o.grpc_max_threads < 2 || o.grpc_max_threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grpc_max_threads must be 2..1024, got ", o.grpc_max_threads));
  }
  if (o.failure_log_lines_per_second > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--failure_log_lines_per_second must be 0..1000000, got ",
                     o.failure_log_lines_per_second));
  }
  if (o.threads < 0 || o.threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads must be 0..1024 (0 = one per core), got ", o.threads));
  }
  if (o.max_queued_compute_bytes < 1) {
    return absl::InvalidArgumentError(
        "--max_queued_compute_bytes must be at least 1");
  }
  if (o.max_misses_per_connection < 1) {
    return absl::InvalidArgumentError(
        "--max_misses_per_connection must be at least 1");
  }
  if (o.max_inflight_bytes < (uint64_t{1} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_inflight_bytes must be at least 1048576 (1 MiB), "
                     "got ",
                     o.max_inflight_bytes));
  }
  if (o.warm_reserve_bytes != 0 &&
      (o.warm_reserve_bytes < (uint64_t{2} << 20) ||
       o.warm_reserve_bytes > (uint64_t{1} << 30))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--warm_reserve_bytes must be 0 (off) or 2097152 (2 MiB) .. "
        "1073741824 (1 GiB), got ",
        o.warm_reserve_bytes));
  }
  if (o.grpc_memory_bytes < (uint64_t{4} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--grpc_memory_bytes must be at least 4194304 (4 MiB), "
                     "got ",
                     o.grpc_memory_bytes));
  }
  if (!std::isfinite(o.grace_seconds) || o.grace_seconds < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grace_seconds must be finite and >= 0, got ", o.grace_seconds));
  }
  if (!std::isfinite(o.lame_duck_seconds) || o.lame_duck_seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--lame_duck_seconds must be finite and >= 0, got ",
                     o.lame_duck_seconds));
  }
  if (!o.metrics_listen.empty()) {
    const size_t mc = o.metrics_listen.rfind(':');
    uint32_t mport = 0;
    if (mc == std::string::npos || mc == 0 ||
        !absl::SimpleAtoi(absl::string_view(o.metrics_listen).substr(mc + 1),
                          &mport) ||
        mport > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metrics_listen must be host:port (e.g. 127.0.0.1:9090) or empty, "
          "got '",
          o.metrics_listen, "'"));
    }
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key must be given together");
  }
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls_client_ca needs --tls_cert and --tls_key");
  }
  return absl::OkStatus();
}

}  // namespace posenc
