// ServerOptions: everything that configures a posenc server, with defaults.
// main.cc fills it from flags; PosencServer::Create validates it.
#ifndef POSENC_SERVER_SERVER_OPTIONS_H_
#define POSENC_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace posenc {

// The range over which the numerics are proven and tested (docs/numerics.md):
// positions up to 2^24 and d up to 65536.
inline constexpr uint32_t kProvenMaxD = 65536;
inline constexpr uint32_t kProvenMaxLen = 1u << 24;

struct ServerOptions {
  // host:port to listen on; port 0 picks a free port (see PosencServer::port).
  std::string listen = "127.0.0.1:50051";
  // Byte budget of the table cache.
  uint64_t cache_bytes = uint64_t{512} << 20;
  // Largest model dimension d accepted; at most kProvenMaxD.
  uint32_t max_d = kProvenMaxD;
  // Largest max_len accepted; at most kProvenMaxLen.
  uint32_t max_len_limit = kProvenMaxLen;
  // Most positions in one GetRows request.
  uint32_t max_rows_per_request = 65536;
  // Largest tensor payload in one response message, in bytes.
  uint64_t max_message_bytes = uint64_t{64} << 20;
  // Largest request message accepted, in bytes.
  uint64_t max_request_bytes = uint64_t{4} << 20;
  // Concurrent streams allowed on one HTTP/2 connection.
  uint32_t max_concurrent_streams = 256;
  // Threads computing tables; 0 means one per core.
  int threads = 0;
  // Bytes of computation (the output it will write) that may wait for a
  // compute thread; a miss past it gets RESOURCE_EXHAUSTED.
  uint64_t max_queued_compute_bytes = uint64_t{256} << 20;
  // Computations one client connection may have in progress.
  uint32_t max_misses_per_connection = 32;
  // Bytes calls in progress may hold outside the cache: response buffers
  // and evicted tables still being sent. Peak memory stays near
  // cache_bytes + max_inflight_bytes + grpc_memory_bytes.
  uint64_t max_inflight_bytes = uint64_t{256} << 20;
  // Freed table and answer buffers of 2 MiB or more kept mapped (pages
  // already faulted in) for the next cold table, up to this many bytes
  // (core/buffer_reserve.h); 0 keeps none. Process-wide: the last server
  // created in a process sets it. Part of the 64 MiB margin of the
  // peak-RSS bound (docs/operations.md); 0 or 2 MiB..1 GiB.
  uint64_t warm_reserve_bytes = uint64_t{32} << 20;
  // gRPC's ResourceQuota: memory for its own buffers (reads, HTTP/2 frames).
  uint64_t grpc_memory_bytes = uint64_t{64} << 20;
  // Failed calls logged per second, process-wide; the rest are counted and
  // reported as one line a second ("suppressed K failed-call log lines in
  // the last S s"). 0..1000000 (0 logs only those summaries).
  uint32_t failure_log_lines_per_second = 20;
  // On SIGTERM/SIGINT, health goes NOT_SERVING at once but the server keeps
  // serving every call for this long (the lame-duck period), so health
  // checks and proxies move traffic away before it stops taking calls.
  double lame_duck_seconds = 2.0;
  // After the lame-duck period, how long in-flight calls may take to finish
  // (streams keep sending to slow readers) before they are cancelled.
  double grace_seconds = 10.0;
  // host:port serving Prometheus metrics over HTTP at /metrics; empty
  // disables it. Port 0 picks a free port (see PosencServer::metrics_port).
  std::string metrics_listen;
  // PEM files. With tls_cert and tls_key the gRPC port speaks TLS only;
  // with tls_client_ca too, clients must present a certificate signed by
  // that CA (mutual TLS).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // Registers grpc.channelz.v1.Channelz on the gRPC port.
  bool channelz = false;
};

// OK, or INVALID_ARGUMENT naming the option and its valid range.
absl::Status ValidateServerOptions(const ServerOptions& options);

}  // namespace posenc

#endif  // POSENC_SERVER_SERVER_OPTIONS_H_
