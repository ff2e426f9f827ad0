// CallScope: the bookkeeping of one posenc.v1 call, held by the call's
// reactor from the handler's start until gRPC is done with the call (the
// reactor's OnDone):
//   - counts the call in CallCounters::live while it exists and once in
//     CallCounters::started. After the handler's Finish, gRPC may still hold
//     the call's last messages and trailers, queued for a slow reader; the
//     drain waits for `live` to reach 0 (see PosencServer::Shutdown);
//   - echoes the client's routing key (x-posenc-table) in the response's
//     initial metadata;
//   - names that key in the one log line of a failed call (LogIfFailed),
//     within the process-wide rate limit of FailureLogLimiter().
//
// This was a gRPC server interceptor; interception hooks run on every batch
// of every call, which cost 4-7 us of CPU per 1-row GetRows (15% of the
// server's CPU for it).
//
// Thread safety: constructed on the handler's thread, before the reactor
// sends anything; LogIfFailed is const and may run on any thread.
#ifndef POSENC_SERVER_CALL_SCOPE_H_
#define POSENC_SERVER_CALL_SCOPE_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <cstdint>
#include <string>

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
  CallScope(grpc::CallbackServerContext* context, CallCounters* counters,
            Method method);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Logs `status` with the method and the routing key unless it is OK or
  // CANCELLED (the client's own doing), or FailureLogLimiter() holds the
  // line back (it is then counted, and reported in a summary line). Under a
  // flood of failures a held-back line costs an atomic increment: no lock,
  // no allocation, no formatting.
  void LogIfFailed(const grpc::Status& status) const;

 private:
  CallCounters* const counters_;
  const Method method_;
  std::string key_;  // the client's x-posenc-table, empty if none
};

// A unary call's reactor: Finish as gRPC's, plus the call's CallScope, and
// deletes itself in OnDone.
class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  UnaryCall(grpc::CallbackServerContext* context, CallCounters* counters,
            Method method)
      : scope_(context, counters, method) {}
  const CallScope& scope() const { return scope_; }
  void OnDone() override { delete this; }
  // Lets gRPC run OnDone (and the default, empty OnCancel) inline, as it
  // does for its own DefaultReactor, instead of handing every call's
  // OnDone to its executor thread: that hop cost a futex wake-up and a
  // context switch per call (0.6 per 1-row GetRows against 0.05 for the
  // floor server; BENCHMARKS.md at faa88c3, section 9: git show
  // faa88c3:BENCHMARKS.md). Safe because both reactions are
  // trivial: an atomic decrement and a delete, no lock, no blocking. gRPC
  // marks this hook "not API"; if a release drops it, `override` stops the
  // build here.
  bool InternalInlineable() override { return true; }

 private:
  CallScope scope_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_CALL_SCOPE_H_
