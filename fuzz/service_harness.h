// The posenc service fuzz harness: one input is the serialized request of
// one method (a table method, or Encode), sent as it is (any bytes, valid or
// not) to a real PosencServer through gRPC's public generic stub, exactly
// as a client's call goes: the server's handlers, reactors, CallScope,
// MissLimiter, byte budgets, compute pool and cache all run.
//
// Two modes (HarnessMode), the same checks:
//   - fast (the default): one server per process, reached through gRPC's
//     in-process channel, serves every input; it is replaced every 2,000
//     inputs (POSENC_FUZZ_RESTART_EVERY) and on demand (RestartServer), so
//     a fresh cache and counters. 322-1,127 inputs a second under ASan on
//     one idle core over the five service targets (fuzz/speed.sh at
//     c573fb4; fuzz/README.md#speed), the fresh mode 35-59.
//   - fresh (POSENC_FUZZ_FRESH=1, the reproducer): a fresh server and a
//     fresh TCP connection on 127.0.0.1 per input, shut down after it. A
//     finding of the fast mode is confirmed here; fuzz/agree.sh checks
//     that both modes give every input of a sample the same status code.
//
// Per input (RunInput):
//   1. the server is idle (no call, task or inflight byte left);
//   2. call A: the input's bytes to the method; the reply is checked:
//      status code in the documented set, an OK answer only for a request
//      the harness itself reads as valid, shapes, positions, sizes, the
//      echoed routing key, and a sample of the values bit for bit against
//      the independent MPFR references of tests/numerics
//      (mpfr_reference.h, rope_reference.h; grid_reference.h for grid
//      tables, read from the proto's GridSpec rules; real_reference.h for
//      Encode, its pad and input columns too; the request is read and the
//      columns mapped by the harness, not by core/ or server/);
//   3. the server must go idle again;
//   4. call B: the same bytes again (now a cache hit, or the rows rented
//      again; Encode computes again): same status code and byte-identical
//      messages;
//   5. idle again; the server's counters grew by both calls (by outcome),
//      a table over the cache budget was not computed whole, Encode did
//      not touch the cache, the cache is within its budget, and the
//      process-wide warm reserve holds nothing (in the fresh mode, after
//      the server is shut down and destroyed);
//   6. for a quarter of the inputs (by the input's hash), call C: the same
//      request cancelled by the client after 1-4 messages (streams) or
//      under a deadline of 1-32 ms, mid-computation: it ends as A did, or
//      CANCELLED / DEADLINE_EXCEEDED, with a prefix of A's messages; then
//      the server must be idle again.
// Streams are read up to kStreamMaxMessages / kStreamMaxBytes, then
// cancelled by the client (the cancellation path), so a legal stream of
// 2^24 rows costs what its first MiB costs. An Encode answer is at most
// the 512 KiB message limit (--max_message_bytes; more is RESOURCE_EXHAUSTED
// before any work), so a hostile one costs at most 256 k values and
// --max_d/2 MPFR frequencies; and nothing of it may be cached.
//
// Encode's frequency range (every F_i in [2^-800, 2^24]) and position bound
// (|x| F_max <= 2^24) are decided by the harness in double logarithms; a
// request within 10^-9 (relative) of either bound is "borderline", where
// both an answer (then checked value by value) and the refusal are right.
//
// State: in the fast mode the server's cache (tables of earlier inputs,
// its admission counts) carries over between inputs, so call A may be a
// hit where the fresh mode's is a miss; every check above holds either
// way, and the values are checked against MPFR, not against an earlier
// answer. Nothing else of posenc's survives an input but process-wide
// settings every server would set the same way (the failure-log rate and
// the warm reserve's bound 0, so it never holds a buffer), gRPC's library
// globals (kept initialised by InitHarness), MPFR's per-thread constant
// caches and core's constant tables (sincos_double_double.cc's Taylor
// tables, built once from constants). A failure of the fresh mode
// reproduces from its input alone in a fresh process.
//
// Not thread-safe: one input at a time (the references change MPFR's
// exponent range of the calling thread).
#ifndef POSENC_FUZZ_SERVICE_HARNESS_H_
#define POSENC_FUZZ_SERVICE_HARNESS_H_

#include <grpcpp/support/status.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/server_options.h"

namespace posenc::fuzz {

enum class FuzzMethod {
  kGetTable = 0,
  kStreamRows,
  kStreamBatches,
  kGetRows,
  kEncode
};
inline constexpr int kFuzzMethodCount = 5;

// "get_table", "stream_rows", "stream_batches", "get_rows", "encode": the
// fuzz target and the corpus directory fuzz/corpus/<name>/.
const char* FuzzMethodName(FuzzMethod method);

// The server each input gets: the real server's request limits (d up to
// 65536, max_len up to 2^24, 65536 rows per GetRows and points per Encode)
// with small budgets.
ServerOptions HarnessServerOptions();

// Keeps gRPC initialised for the life of the process (a gRPC shutdown and
// re-init between inputs would cost more than the input). Idempotent.
void InitHarness();

enum class HarnessMode { kFast, kFresh };
// The mode RunInput uses: kFresh when the environment has
// POSENC_FUZZ_FRESH=1, else kFast, until SetHarnessMode.
HarnessMode CurrentMode();
// (The fast mode's server, if any, stays for when the mode is fast again.)
void SetHarnessMode(HarnessMode mode);
// The fast mode's server is shut down (and checked: the warm reserve holds
// nothing); the next input starts a new one. Returns what failed, or "".
std::string RestartServer();

// Runs one input (see above). Returns "" when every check passed, else what
// failed, with the request and the values involved.
std::string RunInput(FuzzMethod method, const uint8_t* data, size_t size);

// What the harness did, for the end-of-run summary.
struct HarnessCounters {
  uint64_t inputs = 0;
  std::array<uint64_t, 17> calls_by_code{};  // gRPC status code 0..16
  uint64_t streams_cancelled_by_client = 0;
  uint64_t values_checked = 0;  // elements compared with the MPFR reference
  uint64_t hostile_calls = 0;   // calls C: cancelled mid-stream, deadlines
};
const HarnessCounters& Counters();
// The status code of the last input's first call (UNKNOWN when no call was
// made): what fuzz/agree.sh and the corpus replay compare between modes.
grpc::StatusCode LastCode();
// One line: "inputs=... ok=... invalid_argument=... values_checked=...".
std::string CountersLine();

}  // namespace posenc::fuzz

#endif  // POSENC_FUZZ_SERVICE_HARNESS_H_
