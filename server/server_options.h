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
  // Concurrent streams allowed on one HTTP/2 connection (HTTP/2
  // SETTINGS_MAX_CONCURRENT_STREAMS); 1..2147483647. The patched gRPC
  // (docs/grpc.md) also refuses new streams while a connection has twice
  // this many calls alive, which bounds a rapid reset. Not lower than 256:
  // HAProxy's front (deploy/haproxy) advertises 256 and multiplexes its
  // clients onto replica connections; gRPC 1.51 answers a stream past the
  // limit with a connection error, ending every call on that connection;
  // and what an attacker can hold is bounded per process (inflight bytes,
  // compute queue, grpc_memory_bytes), not per connection, since it can
  // open more connections.
  uint32_t max_concurrent_streams = 256;
  // Largest header block (metadata) of a request, in bytes: HTTP/2
  // SETTINGS_MAX_HEADER_LIST_SIZE and gRPC's own check
  // (GRPC_ARG_MAX_METADATA_SIZE). gRPC refuses a request past it
  // (RESOURCE_EXHAUSTED) before any handler runs. posenc clients send a
  // few hundred bytes (gRPC's headers and x-posenc-table); 8 KiB is gRPC's
  // default and leaves room for an auth token. 1 KiB..1 MiB. (gRPC 1.51
  // has one limit: no separate soft and absolute limits. Stock 1.51 checked
  // it per frame and only once the client had acknowledged it; the patched
  // gRPC checks the whole header block at once.)
  uint32_t max_metadata_bytes = 8192;
  // PINGs that arrive sooner than min_ping_interval_seconds after the
  // previous one, while the server sends no data, that a connection may
  // send (GRPC_ARG_HTTP2_MAX_PING_STRIKES); one more and the server sends
  // GOAWAY (ENHANCE_YOUR_CALM, "too_many_pings") and closes it. 1..1000
  // (gRPC's 0, no limit, is refused). 2 is gRPC's default, which gRPC
  // clients' keepalive settings are designed around.
  uint32_t max_ping_strikes = 2;
  // Shortest interval between a client's PINGs that is not a strike while
  // the server sends no data, in seconds
  // (GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS); 1..86400.
  // 300 is gRPC's default (clients' keepalive should not ping more often).
  // On a connection without calls gRPC 1.51 allows one PING per 2 hours
  // whatever this says.
  double min_ping_interval_seconds = 300;
  // A connection with no call for this long gets GOAWAY and is closed
  // (GRPC_ARG_MAX_CONNECTION_IDLE_MS), in seconds; 0 = never,
  // else 0.001..2147483. Idle connections cost ~45 KiB each and a file
  // descriptor; a gRPC client reconnects on its next call by itself.
  double max_connection_idle_seconds = 300;
  // A connection older than this (gRPC adds +-10% jitter) gets GOAWAY: no
  // new calls on it; the client opens another (GRPC_ARG_MAX_CONNECTION_AGE_MS),
  // in seconds; 0 = never, else 0.001..2147483. Bounds how long one
  // connection can hold state and rebalances clients across replicas.
  double max_connection_age_seconds = 1800;
  // After max_connection_age, how long calls already on the connection may
  // take to finish before it is closed (GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS),
  // in seconds; 0..2147483. 300 matches the proxies' 300 s timeouts for long
  // streams to slow readers.
  double max_connection_age_grace_seconds = 300;
  // How long a new connection may take to finish its handshake (TLS, then
  // the HTTP/2 preface and SETTINGS) before it is closed
  // (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS; gRPC's default is 120 s), in
  // seconds; 0.1..3600. Frees the descriptors of connections that never
  // speak; clients send the preface at once.
  double handshake_timeout_seconds = 10;
  // Threads gRPC may run for synchronous services (ResourceQuota::
  // SetMaxThreads): server reflection and channelz. Each of their open
  // calls holds a thread; past the limit gRPC answers RESOURCE_EXHAUSTED
  // ("Server Threadpool Exhausted"). posenc's own methods use the callback
  // API and are not counted. 2..1024.
  int grpc_max_threads = 16;
  // Failed calls logged per second, process-wide; the rest are counted and
  // reported as one line a second ("suppressed K failed-call log lines in
  // the last S s"). 0..1000000 (0 logs only those summaries). The same
  // number, counted apart, limits gRPC's own log lines (grpc_log_sink.h).
  uint32_t failure_log_lines_per_second = 20;
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
  // (core/runtime/buffer_reserve.h); 0 keeps none. Process-wide: the last
  // server created in a process sets it. Part of the 64 MiB margin of the
  // peak-RSS bound (docs/operations.md); 0 or 2 MiB..1 GiB.
  uint64_t warm_reserve_bytes = uint64_t{32} << 20;
  // gRPC's ResourceQuota: memory for its own buffers (reads, HTTP/2 frames).
  uint64_t grpc_memory_bytes = uint64_t{64} << 20;
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
  // A directory on a tmpfs (e.g. /dev/shm, a Kubernetes emptyDir with
  // medium: Memory) where cached tables live as read-only files that
  // clients on this host map instead of receiving the bytes
  // (docs/shared_memory.md). The server makes its own subdirectory there.
  // Empty: tables in ordinary memory, served as bytes only.
  std::string shm_dir;
};

// OK, or INVALID_ARGUMENT naming the option and its valid range.
absl::Status ValidateServerOptions(const ServerOptions& options);

}  // namespace posenc

#endif  // POSENC_SERVER_SERVER_OPTIONS_H_
