#include "server/grpc_log_sink.h"

#include <grpc/support/log.h>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/log.h"
#include "server/server_options.h"

namespace posenc {
namespace {

const char* SeverityName(gpr_log_severity severity) {
  switch (severity) {
    case GPR_LOG_SEVERITY_DEBUG:
      return "GRPC-DEBUG";
    case GPR_LOG_SEVERITY_INFO:
      return "GRPC-INFO";
    case GPR_LOG_SEVERITY_ERROR:
      return "GRPC-ERROR";
  }
  return "GRPC";
}

// The file's name without its directories, as gRPC's own format prints it.
absl::string_view BaseName(const char* file) {
  absl::string_view path = file == nullptr ? "" : file;
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

void LimitedGrpcLog(gpr_log_func_args* args) {
  if (!GrpcLogLimiter().Admit()) return;  // counted, reported later
  Log(SeverityName(args->severity), "%s:%d %s", BaseName(args->file),
      args->line, args->message == nullptr ? "" : args->message);
}

}  // namespace

LogRateLimiter& GrpcLogLimiter() {
  static LogRateLimiter* const limiter =
      new LogRateLimiter(ServerOptions().failure_log_lines_per_second);
  return *limiter;
}

void RouteGrpcLogsThroughLimit() { gpr_set_log_function(&LimitedGrpcLog); }

void ReportSuppressedGrpcLogLines() {
  const LogRateLimiter::Suppressed suppressed =
      GrpcLogLimiter().TakeSuppressed();
  if (suppressed.lines > 0) {
    Log("WARN", "suppressed %d gRPC log lines in the last %.1f s",
        suppressed.lines, absl::ToDoubleSeconds(suppressed.over));
  }
}

}  // namespace posenc
