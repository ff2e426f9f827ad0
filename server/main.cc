// posenc_server: parses flags into ServerOptions, runs the server until
// SIGTERM or SIGINT, then drains gracefully and exits 0.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/log.h"
#include "server/posenc_server.h"
#include "server/server_options.h"

namespace {
const posenc::ServerOptions kDefaults;

// posenc's own flags are the ones defined in the project's server/ directory
// (this file, today): --help and --helpshort list those, with their defaults;
// --helpfull lists Abseil's too. New flags there need nothing else.
bool IsPosencServerFlagFile(absl::string_view file) {
  return absl::StrContains(absl::StrCat("/", file), "/server/");
}

// "server/main.cc" rather than the build machine's absolute path.
std::string ShortFlagFileName(absl::string_view file) {
  const size_t at = absl::StrCat("/", file).rfind("/server/");
  return std::string(at == std::string::npos ? file : file.substr(at));
}
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.listen,
          "host:port to serve gRPC on (use 0.0.0.0:50051 in containers; port "
          "0 picks a free port)");
ABSL_FLAG(uint64_t, cache_bytes, kDefaults.cache_bytes,
          "byte budget of the table cache (LRU)");
ABSL_FLAG(uint32_t, max_d, kDefaults.max_d,
          "largest model dimension d (at most 65536, the proven range)");
ABSL_FLAG(uint32_t, max_len_limit, kDefaults.max_len_limit,
          "largest max_len of a table (at most 16777216, the proven range)");
ABSL_FLAG(uint32_t, max_rows_per_request, kDefaults.max_rows_per_request,
          "most positions in one GetRows request");
ABSL_FLAG(uint64_t, max_message_bytes, kDefaults.max_message_bytes,
          "largest tensor payload in one response message, in bytes");
ABSL_FLAG(uint64_t, max_request_bytes, kDefaults.max_request_bytes,
          "largest request message accepted, in bytes");
ABSL_FLAG(uint32_t, max_concurrent_streams, kDefaults.max_concurrent_streams,
          "concurrent calls allowed on one HTTP/2 connection");
ABSL_FLAG(uint32_t, max_metadata_bytes, kDefaults.max_metadata_bytes,
          "largest request header block (metadata) in bytes; gRPC refuses a "
          "call past it with RESOURCE_EXHAUSTED (1024..1048576)");
ABSL_FLAG(uint32_t, max_ping_strikes, kDefaults.max_ping_strikes,
          "PINGs a connection may send sooner than --min_ping_interval_seconds "
          "apart while the server sends no data; one more and it gets GOAWAY "
          "(too_many_pings) and is closed (1..1000)");
ABSL_FLAG(double, min_ping_interval_seconds,
          kDefaults.min_ping_interval_seconds,
          "shortest interval between a client's PINGs that is not a strike "
          "while the server sends no data (1..86400)");
ABSL_FLAG(double, max_connection_idle_seconds,
          kDefaults.max_connection_idle_seconds,
          "a connection with no call for this long gets GOAWAY and is closed "
          "(0 = never)");
ABSL_FLAG(double, max_connection_age_seconds,
          kDefaults.max_connection_age_seconds,
          "a connection older than this (+-10% jitter) gets GOAWAY; clients "
          "reconnect (0 = never)");
ABSL_FLAG(double, max_connection_age_grace_seconds,
          kDefaults.max_connection_age_grace_seconds,
          "after --max_connection_age_seconds, how long the calls on the "
          "connection may take to finish before it is closed");
ABSL_FLAG(double, handshake_timeout_seconds,
          kDefaults.handshake_timeout_seconds,
          "a new connection that has not finished its handshake (TLS, HTTP/2 "
          "preface and SETTINGS) within this is closed (0.1..3600)");
ABSL_FLAG(int, threads, kDefaults.threads,
          "threads computing tables (0 = one per core)");
ABSL_FLAG(uint64_t, max_queued_compute_bytes,
          kDefaults.max_queued_compute_bytes,
          "bytes of computation that may wait for a compute thread; a cache "
          "miss past it gets RESOURCE_EXHAUSTED");
ABSL_FLAG(uint32_t, max_misses_per_connection,
          kDefaults.max_misses_per_connection,
          "computations (cache misses) one client connection may have in "
          "progress; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_inflight_bytes, kDefaults.max_inflight_bytes,
          "bytes calls in progress may hold outside the cache (response "
          "buffers, evicted tables still being sent)");
ABSL_FLAG(uint64_t, warm_reserve_bytes, kDefaults.warm_reserve_bytes,
          "warm memory for the next cold table: freed table and answer "
          "buffers (>= 2 MiB) kept mapped, and fresh pages faulted in by a "
          "lowest-priority background thread, up to this many bytes (0 = "
          "off; else 2 MiB..1 GiB; resident while on, counts in the RSS "
          "margin)");
ABSL_FLAG(uint64_t, grpc_memory_bytes, kDefaults.grpc_memory_bytes,
          "gRPC's ResourceQuota: memory for its own buffers");
ABSL_FLAG(int, grpc_max_threads, kDefaults.grpc_max_threads,
          "threads gRPC may run for its synchronous services (reflection, "
          "channelz); one per open call, past it RESOURCE_EXHAUSTED (2..1024)");
ABSL_FLAG(uint32_t, failure_log_lines_per_second,
          kDefaults.failure_log_lines_per_second,
          "failed calls logged per second, and gRPC's own log lines per "
          "second; the rest are counted in one 'suppressed K ...' line a "
          "second (0..1000000)");
ABSL_FLAG(double, lame_duck_seconds, kDefaults.lame_duck_seconds,
          "on SIGTERM/SIGINT, seconds the server keeps serving with health "
          "NOT_SERVING, so health checks and proxies move traffic away, "
          "before it stops taking calls (0 = stop taking calls at once)");
ABSL_FLAG(double, grace_seconds, kDefaults.grace_seconds,
          "after the lame-duck period, seconds in-flight calls may take to "
          "finish (streams keep sending to slow readers) before they are "
          "cancelled");

ABSL_FLAG(std::string, metrics_listen, kDefaults.metrics_listen,
          "host:port serving Prometheus metrics at http://host:port/metrics "
          "(empty = off; port 0 picks a free port)");
ABSL_FLAG(std::string, tls_cert, kDefaults.tls_cert,
          "PEM server certificate chain; with --tls_key, serve TLS only");
ABSL_FLAG(std::string, tls_key, kDefaults.tls_key,
          "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, kDefaults.tls_client_ca,
          "PEM CA bundle; when set, clients must present a certificate it "
          "signed (mutual TLS)");
ABSL_FLAG(bool, channelz, kDefaults.channelz,
          "serve grpc.channelz.v1.Channelz (connection and call counters) on "
          "the gRPC port");
ABSL_FLAG(std::string, shm_dir, kDefaults.shm_dir,
          "a directory on a tmpfs (/dev/shm, an emptyDir with medium: Memory) "
          "where cached tables live as read-only files that same-host clients "
          "map (docs/shared_memory.md); empty: bytes only");

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = IsPosencServerFlagFile;
  usage_config.contains_helpshort_flags = IsPosencServerFlagFile;
  usage_config.normalize_filename = ShortFlagFileName;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Serves sinusoidal positional-encoding tables over gRPC "
      "(posenc.v1.PositionalEncoding).\nUsage: posenc_server [--flags]\n"
      "--help lists posenc_server's flags; --helpfull adds Abseil's.");
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock --
  // gRPC's included -- runs the deadlock detector (a lock graph): ~12% of
  // the server's CPU per 1-row GetRows (bench: 41-47 -> 36-41 us per call).
  // The tests keep it on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Block the stop signals in every thread (gRPC's threads inherit the
  // mask) and take them synchronously below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  posenc::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.cache_bytes = absl::GetFlag(FLAGS_cache_bytes);
  options.max_d = absl::GetFlag(FLAGS_max_d);
  options.max_len_limit = absl::GetFlag(FLAGS_max_len_limit);
  options.max_rows_per_request = absl::GetFlag(FLAGS_max_rows_per_request);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.max_metadata_bytes = absl::GetFlag(FLAGS_max_metadata_bytes);
  options.max_ping_strikes = absl::GetFlag(FLAGS_max_ping_strikes);
  options.min_ping_interval_seconds =
      absl::GetFlag(FLAGS_min_ping_interval_seconds);
  options.max_connection_idle_seconds =
      absl::GetFlag(FLAGS_max_connection_idle_seconds);
  options.max_connection_age_seconds =
      absl::GetFlag(FLAGS_max_connection_age_seconds);
  options.max_connection_age_grace_seconds =
      absl::GetFlag(FLAGS_max_connection_age_grace_seconds);
  options.handshake_timeout_seconds =
      absl::GetFlag(FLAGS_handshake_timeout_seconds);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_queued_compute_bytes =
      absl::GetFlag(FLAGS_max_queued_compute_bytes);
  options.max_misses_per_connection =
      absl::GetFlag(FLAGS_max_misses_per_connection);
  options.max_inflight_bytes = absl::GetFlag(FLAGS_max_inflight_bytes);
  options.warm_reserve_bytes = absl::GetFlag(FLAGS_warm_reserve_bytes);
  options.grpc_memory_bytes = absl::GetFlag(FLAGS_grpc_memory_bytes);
  options.grpc_max_threads = absl::GetFlag(FLAGS_grpc_max_threads);
  options.failure_log_lines_per_second =
      absl::GetFlag(FLAGS_failure_log_lines_per_second);
  options.lame_duck_seconds = absl::GetFlag(FLAGS_lame_duck_seconds);
  options.grace_seconds = absl::GetFlag(FLAGS_grace_seconds);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.channelz = absl::GetFlag(FLAGS_channelz);
  options.shm_dir = absl::GetFlag(FLAGS_shm_dir);

  absl::StatusOr<std::unique_ptr<posenc::PosencServer>> server =
      posenc::PosencServer::Create(options);
  if (!server.ok()) {
    posenc::Log("ERROR", "posenc_server cannot start: %s",
                server.status().ToString());
    return 2;
  }
  posenc::Log("INFO",
              "posenc_server listening on %s (port %d) pid=%d cache_bytes=%u "
              "max_message_bytes=%u grace_seconds=%g",
              options.listen, (*server)->port(), static_cast<int>(getpid()),
              options.cache_bytes, options.max_message_bytes,
              options.grace_seconds);
  posenc::Log("INFO", "transport: %s",
              options.tls_cert.empty()        ? "plaintext"
              : options.tls_client_ca.empty() ? "TLS"
                                              : "mutual TLS");
  if (!(*server)->shm_directory().empty()) {
    posenc::Log("INFO", "shared-memory tables in %s",
                (*server)->shm_directory());
  }
  if ((*server)->metrics_port() != 0) {
    posenc::Log("INFO", "metrics at http://%s/metrics (metrics_port %d)",
                options.metrics_listen, (*server)->metrics_port());
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  const absl::Time stop_start = absl::Now();
  posenc::Log("INFO",
              "received %s: draining for up to %gs (health NOT_SERVING, "
              "serving on for lame_duck_seconds=%g first)",
              signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
              options.grace_seconds, options.lame_duck_seconds);
  (*server)->Shutdown();
  posenc::Log("INFO", "posenc_server stopped after %.3fs",
              absl::ToDoubleSeconds(absl::Now() - stop_start));
  // Every call has ended. Skip the destructors: grpc::Server's calls
  // grpc_shutdown, which can sit up to ~10 s joining an executor thread that
  // polls for a pending timer, and would stretch `docker stop` for nothing.
  std::fflush(nullptr);
  std::_Exit(0);
}
