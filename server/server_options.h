// ServerOptions: everything that configures a posenc server, with defaults.
//
// Each option is declared once, in POSENC_SERVER_OPTIONS below: its type,
// name (the Options field and the flag --name), default, valid range and
// help. From that one table come the ServerOptions struct, the flags of
// posenc_server (main.cc, bound straight to the fields), their help text
// (with the range) and ValidateServerOptions (the range checks). A new
// option is one line there, one row in docs/operations.md's flag table
// (ctest server_flags_doc checks they agree) and the code that uses it.
//
// Thread safety: a plain struct; ValidateServerOptions is pure.
#ifndef POSENC_SERVER_SERVER_OPTIONS_H_
#define POSENC_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"

namespace posenc {

// The range over which the numerics are proven and tested (docs/numerics.md):
// positions up to 2^24 and d up to 65536.
inline constexpr uint32_t kProvenMaxD = 65536;
inline constexpr uint32_t kProvenMaxLen = 1u << 24;

// What values an option accepts. Numbers: min..max (inclusive, finite),
// or also 0 when zero_means_off; strings: host:port, or any value.
struct OptionRule {
  enum class Kind { kAny, kRange, kHostPort, kOneOf };
  Kind kind = Kind::kAny;
  double min = 0;
  double max = 0;
  bool zero_means_off = false;
  bool empty_means_off = false;  // kHostPort: "" is allowed (off)
  const char* unit = "";         // " seconds" for durations
  const char* choices = "";      // kOneOf: "a|b"
  const char* why = "";          // appended to the error: why the range
};

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();
// gRPC takes durations as an int of milliseconds.
inline constexpr double kMaxGrpcSeconds = 2147483;

constexpr OptionRule AnyValue() { return {}; }
constexpr OptionRule Between(double min, double max, const char* why = "") {
  return {OptionRule::Kind::kRange, min, max, false, false, "", "", why};
}
constexpr OptionRule AtLeast(double min) { return Between(min, kUnbounded); }
constexpr OptionRule ZeroOrBetween(double min, double max) {
  return {OptionRule::Kind::kRange, min, max, true, false, "", "", ""};
}
constexpr OptionRule Seconds(double min, double max) {
  return {OptionRule::Kind::kRange, min, max, false, false, " seconds", "", ""};
}
constexpr OptionRule ZeroOrSeconds(double min, double max) {
  return {OptionRule::Kind::kRange, min, max, true, false, " seconds", "", ""};
}
constexpr OptionRule HostPort() {
  return {OptionRule::Kind::kHostPort, 0, 0, false, false, "", "", ""};
}
constexpr OptionRule HostPortOrEmpty() {
  return {OptionRule::Kind::kHostPort, 0, 0, false, true, "", "", ""};
}
constexpr OptionRule OneOf(const char* choices) {
  return {OptionRule::Kind::kOneOf, 0, 0, false, false, "", choices, ""};
}

// X(type, name, default, rule, help) for each option. The help is for the
// operator (--help appends the range); docs/operations.md says more, and the
// comments here say why a default or bound is what it is.
//
// max_concurrent_streams: not lower than 256: HAProxy's front advertises 256
// and multiplexes its clients onto replica connections; gRPC 1.51 answers a
// stream past the limit with a connection error, ending every call on it.
// max_metadata_bytes: 8 KiB is gRPC's default; posenc clients send a few
// hundred bytes. max_ping_strikes / min_ping_interval_seconds: gRPC's
// defaults, which clients' keepalive settings are designed around.
// warm_reserve_bytes: process-wide (the last server created sets it).
#define POSENC_SERVER_OPTIONS(X)                                               \
  X(std::string, listen, "127.0.0.1:50051", HostPort(),                        \
    "host:port to serve gRPC on (use 0.0.0.0:50051 in containers; port 0 "     \
    "picks a free port)")                                                      \
  X(uint64_t, cache_bytes, uint64_t{512} << 20, AtLeast(1 << 20),              \
    "byte budget of the table cache (LRU order, TinyLFU admission, "           \
    "single-flight: docs/cache-and-costs.md)")                                 \
  X(uint32_t, max_d, kProvenMaxD,                                              \
    Between(2, kProvenMaxD,                                                    \
            "exactness is proven and tested only up to d=65536 "               \
            "(docs/numerics.md)"),                                             \
    "largest model dimension d")                                               \
  X(uint32_t, max_len_limit, kProvenMaxLen,                                    \
    Between(1, kProvenMaxLen,                                                  \
            "exactness is proven and tested only for positions up to 2^24 "    \
            "(docs/numerics.md)"),                                             \
    "largest max_len of a table")                                              \
  X(uint32_t, max_rows_per_request, 65536, AtLeast(1),                         \
    "most positions in one GetRows request")                                   \
  X(uint64_t, max_message_bytes, uint64_t{64} << 20,                           \
    Between(1024, 2147483648.0, "gRPC's limit"),                               \
    "largest tensor payload in one response message, in bytes")                \
  X(uint64_t, max_request_bytes, uint64_t{4} << 20,                            \
    Between(1024, 1073741824.0), "largest request message accepted, in bytes") \
  X(uint32_t, max_concurrent_streams, 256, Between(1, 2147483647.0),           \
    "concurrent calls allowed on one HTTP/2 connection")                       \
  X(uint32_t, max_metadata_bytes, 8192, Between(1024, 1048576),                \
    "largest request header block (metadata) in bytes; gRPC refuses a call "   \
    "past it with RESOURCE_EXHAUSTED")                                         \
  X(uint32_t, max_ping_strikes, 2,                                             \
    Between(1, 1000, "gRPC's 0 would allow PINGs without limit"),              \
    "PINGs a connection may send sooner than --min_ping_interval_seconds "     \
    "apart while the server sends no data; one more and it gets GOAWAY "       \
    "(too_many_pings) and is closed")                                          \
  X(double, min_ping_interval_seconds, 300, Seconds(1, 86400),                 \
    "shortest interval between a client's PINGs that is not a strike while "   \
    "the server sends no data")                                                \
  X(double, max_connection_idle_seconds, 300,                                  \
    ZeroOrSeconds(0.001, kMaxGrpcSeconds),                                     \
    "a connection with no call for this long gets GOAWAY and is closed "       \
    "(0 = never)")                                                             \
  X(double, max_connection_age_seconds, 1800,                                  \
    ZeroOrSeconds(0.001, kMaxGrpcSeconds),                                     \
    "a connection older than this (+-10% jitter) gets GOAWAY; clients "        \
    "reconnect (0 = never)")                                                   \
  X(double, max_connection_age_grace_seconds, 300,                             \
    Seconds(0, kMaxGrpcSeconds),                                               \
    "after --max_connection_age_seconds, how long the calls on the "           \
    "connection may take to finish before it is closed")                       \
  X(double, handshake_timeout_seconds, 10, Seconds(0.1, 3600),                 \
    "a new connection that has not finished its handshake (TLS, HTTP/2 "       \
    "preface and SETTINGS) within this is closed")                             \
  X(int, threads, 0, Between(0, 1024),                                         \
    "threads computing tables (0 = one per core)")                             \
  X(uint64_t, max_queued_compute_bytes, uint64_t{256} << 20, AtLeast(1),       \
    "bytes of computation that may wait for a compute thread; a cache miss "   \
    "past it gets RESOURCE_EXHAUSTED")                                         \
  X(uint32_t, max_misses_per_connection, 32, AtLeast(1),                       \
    "computations (cache misses) one client connection may have in "           \
    "progress; more get RESOURCE_EXHAUSTED")                                   \
  X(uint64_t, max_inflight_bytes, uint64_t{256} << 20, AtLeast(1 << 20),       \
    "bytes calls in progress may hold outside the cache (response buffers, "   \
    "evicted tables still being sent); peak memory stays near cache_bytes + "  \
    "2 x max_inflight_bytes + grpc_memory_bytes + warm_reserve_bytes")         \
  X(uint64_t, warm_reserve_bytes, uint64_t{32} << 20,                          \
    ZeroOrBetween(2 << 20, 1 << 30),                                           \
    "warm memory for the next cold table: freed table and answer buffers "     \
    "(>= 2 MiB) kept mapped, and fresh pages faulted in by a "                 \
    "lowest-priority background thread, up to this many bytes (0 = off; "      \
    "resident while on, counts in the RSS margin)")                            \
  X(uint64_t, grpc_memory_bytes, uint64_t{64} << 20, AtLeast(4 << 20),         \
    "gRPC's ResourceQuota: memory for its own buffers")                        \
  X(int, grpc_max_threads, 16, Between(2, 1024),                               \
    "threads gRPC may run for its synchronous services (reflection, "          \
    "channelz); one per open call, past it RESOURCE_EXHAUSTED")                \
  X(uint32_t, failure_log_lines_per_second, 20, Between(0, 1000000),           \
    "failed calls logged per second, and gRPC's own log lines per second; "    \
    "the rest are counted in one 'suppressed K ...' line a second")            \
  X(double, lame_duck_seconds, 2.0, Seconds(0, kUnbounded),                    \
    "on SIGTERM/SIGINT, seconds the server keeps serving with health "         \
    "NOT_SERVING, so health checks and proxies move traffic away, before it "  \
    "stops taking calls (0 = stop taking calls at once)")                      \
  X(double, grace_seconds, 10.0, Seconds(0, kUnbounded),                       \
    "after the lame-duck period, seconds in-flight calls may take to finish "  \
    "(streams keep sending to slow readers) before they are cancelled")        \
  X(std::string, log_format, "text", OneOf("text|json"),                       \
    "the server's log lines on stderr: text (time level event key=value...) "  \
    "or json (one object a line: time, level, event, fields)")                 \
  X(std::string, metrics_listen, "", HostPortOrEmpty(),                        \
    "host:port serving Prometheus metrics at http://host:port/metrics "        \
    "(empty = off; port 0 picks a free port)")                                 \
  X(std::string, tls_cert, "", AnyValue(),                                     \
    "PEM server certificate chain; with --tls_key, serve TLS only")            \
  X(std::string, tls_key, "", AnyValue(), "PEM private key of --tls_cert")     \
  X(std::string, tls_client_ca, "", AnyValue(),                                \
    "PEM CA bundle; when set, clients must present a certificate it signed "   \
    "(mutual TLS)")                                                            \
  X(bool, channelz, false, AnyValue(),                                         \
    "serve grpc.channelz.v1.Channelz (connection and call counters) on the "   \
    "gRPC port")                                                               \
  X(std::string, shm_dir, "", AnyValue(),                                      \
    "a directory on a tmpfs (/dev/shm, an emptyDir with medium: Memory) "      \
    "where cached tables live as read-only files that same-host clients map "  \
    "(docs/shared_memory.md); empty: bytes only")

struct ServerOptions {
#define POSENC_DECLARE_OPTION_FIELD(type, name, default_value, rule, help) \
  type name = default_value;
  POSENC_SERVER_OPTIONS(POSENC_DECLARE_OPTION_FIELD)
#undef POSENC_DECLARE_OPTION_FIELD
};

// The help of option `help` with the values `rule` accepts appended, e.g.
// "largest model dimension d (2..65536)".
std::string OptionHelp(const char* help, const OptionRule& rule);

// OK, or INVALID_ARGUMENT naming the first invalid option (as its flag,
// --name), its valid range and the value given; then the checks between
// options (TLS files come in pairs).
absl::Status ValidateServerOptions(const ServerOptions& options);

}  // namespace posenc

#endif  // POSENC_SERVER_SERVER_OPTIONS_H_
