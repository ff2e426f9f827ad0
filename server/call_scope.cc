#include "server/call_scope.h"

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "convert/grpc_status.h"
#include "convert/routing_key.h"
#include "server/log.h"
#include "server/server_options.h"

namespace posenc {

LogRateLimiter& FailureLogLimiter() {
  static LogRateLimiter* const limiter =
      new LogRateLimiter(ServerOptions().failure_log_lines_per_second);
  return *limiter;
}

void ReportSuppressedFailureLogLines() {
  const LogRateLimiter::Suppressed suppressed =
      FailureLogLimiter().TakeSuppressed();
  if (suppressed.lines > 0) {
    Log("WARN", "suppressed %d failed-call log lines in the last %.1f s",
        suppressed.lines, absl::ToDoubleSeconds(suppressed.over));
  }
}

CallScope::CallScope(grpc::CallbackServerContext* context,
                     CallCounters* counters, MethodStats* stats, Method method)
    : counters_(counters), stats_(stats), method_(method), start_(absl::Now()) {
  counters_->live.fetch_add(1, std::memory_order_relaxed);
  stats_->Begin(method_);
  counters_->started.fetch_add(1, std::memory_order_relaxed);
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kRoutingKeyHeader);
  if (it != metadata.end()) {
    key_.assign(it->second.data(), it->second.size());
    context->AddInitialMetadata(kRoutingKeyHeader, key_);
  }
}

CallScope::~CallScope() {
  counters_->live.fetch_sub(1, std::memory_order_relaxed);
}

grpc::Status CallScope::End(const absl::Status& status, uint64_t bytes_sent) {
  stats_->End(method_, status.code(), absl::Now() - start_, bytes_sent);
  grpc::Status grpc_status = ToGrpcStatus(status);
  LogIfFailed(grpc_status);
  return grpc_status;
}

void CallScope::LogIfFailed(const grpc::Status& status) const {
  if (status.ok() || status.error_code() == grpc::StatusCode::CANCELLED) {
    return;
  }
  if (!FailureLogLimiter().Admit()) return;  // counted, reported later
  // The one log line of a failed call (never a payload).
  Log("WARN", "%s -> %s: %s %s=%s", MethodName(method_),
      absl::StatusCodeToString(
          static_cast<absl::StatusCode>(status.error_code())),
      status.error_message(), kRoutingKeyHeader,
      key_.empty() ? "(none)" : key_);
}

}  // namespace posenc
