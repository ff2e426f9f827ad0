// CallScope: the bookkeeping of one posenc.v1 call, held from the handler's
// start until gRPC is done with the call (a unary call's context, see
// server/unary_call.h; a stream's reactor):
//   - counts the call in CallCounters::live while it exists and once in
//     CallCounters::started. After the handler's Finish, gRPC may still hold
//     the call's last messages and trailers, queued for a slow reader; the
//     drain waits for `live` to reach 0 (see PosencServer::Shutdown);
//   - counts it in MethodStats from its start to End (its status, latency
//     and bytes sent);
//   - echoes the client's routing key (x-posenc-table) in the response's
//     initial metadata;
//   - names that key in the one log line of a failed call (End),
//     within the process-wide rate limit of FailureLogLimiter().
//
// This was a gRPC server interceptor; interception hooks run on every batch
// of every call, which cost 4-7 us of CPU per 1-row GetRows (15% of the
// server's CPU for it).
//
// Thread safety: constructed on the handler's thread, before the call sends
// anything; End (once) and LogIfFailed may run on any thread.
#ifndef POSENC_SERVER_CALL_SCOPE_H_
#define POSENC_SERVER_CALL_SCOPE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/log_rate_limiter.h"
#include "server/method_stats.h"

namespace posenc {

// The process-wide limit on failed-call log lines (CallScope::LogIfFailed):
// at most max_lines() a second. PosencServer::Create sets the limit from
// ServerOptions::failure_log_lines_per_second (the last server created in
// a process sets it).
LogRateLimiter& FailureLogLimiter();

// Logs "suppressed K failed-call log lines in the last S s" if the limit
// held any back since the last report. PosencServer calls it once a second
// and when it stops. Thread-safe.
void ReportSuppressedFailureLogLines();

struct CallCounters {
  std::atomic<int64_t> live{0};      // posenc.v1 calls not yet done
  std::atomic<uint64_t> started{0};  // since the server started
};

class CallScope {
 public:
  // `counters` and `stats` must outlive the scope.
  CallScope(grpc::CallbackServerContext* context, CallCounters* counters,
            MethodStats* stats, Method method);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Ends the call's record in MethodStats (`status`, the latency since the
  // scope began, `bytes_sent` response bytes), logs it if it failed
  // (LogIfFailed), and returns it as the grpc::Status to finish the call
  // with: the one conversion of a call's status. Call once.
  grpc::Status End(const absl::Status& status, uint64_t bytes_sent);

  // Logs `status` with the method and the routing key unless it is OK or
  // CANCELLED (the client's own doing), or FailureLogLimiter() holds the
  // line back (it is then counted, and reported in a summary line). Under a
  // flood of failures a held-back line costs an atomic increment: no lock,
  // no allocation, no formatting.
  void LogIfFailed(const grpc::Status& status) const;

 private:
  CallCounters* const counters_;
  MethodStats* const stats_;
  const Method method_;
  const absl::Time start_;
  std::string key_;  // the client's x-posenc-table, empty if none
};

}  // namespace posenc

#endif  // POSENC_SERVER_CALL_SCOPE_H_
