// gRPC's own log lines, within a rate limit.
//
// gRPC core writes a line to stderr for some peer mistakes: gRPC 1.51 logs
// "Error parsing metadata: error=invalid value key=te value=x" for every
// request with an invalid `te`, `:scheme` or `grpclb_client_stats` header.
// A client sending such requests in a loop (tens of thousands a second)
// would buy a log line with each cheap request. RouteGrpcLogsThroughLimit()
// installs a gpr_log function that writes gRPC's lines in posenc's format
// ("<time> GRPC-<SEVERITY> <file>:<line> <message>") within its own
// LogRateLimiter (GrpcLogLimiter(), at most max_lines() lines a second); the
// rest are counted, and ReportSuppressedGrpcLogLines() writes one line for
// them ("suppressed K gRPC log lines in the last S s").
//
// gRPC still decides which lines exist (GRPC_VERBOSITY, default ERROR): a
// line below that severity is never formatted.
//
// Thread safety: everything here may be called from any thread; the log
// function gRPC calls is lock-free until it writes (one fwrite a line).
#ifndef POSENC_SERVER_GRPC_LOG_SINK_H_
#define POSENC_SERVER_GRPC_LOG_SINK_H_

#include "server/log_rate_limiter.h"

namespace posenc {

// The process-wide limit on gRPC's log lines. PosencServer::Create sets it
// from ServerOptions::failure_log_lines_per_second.
LogRateLimiter& GrpcLogLimiter();

// Makes gRPC's log lines go through GrpcLogLimiter(). Process-wide and
// idempotent; PosencServer::Create calls it before building the server.
void RouteGrpcLogsThroughLimit();

// Logs "suppressed K gRPC log lines in the last S s" if the limit held any
// back since the last call. PosencServer calls it once a second.
void ReportSuppressedGrpcLogLines();

}  // namespace posenc

#endif  // POSENC_SERVER_GRPC_LOG_SINK_H_
