// client_load: a fixed number of table calls through posenc's own C++
// client, from several threads sharing one channel, as a C++ service would
// make them; prints the calls per second and this process's CPU per call.
//
// h2load (bench/load.sh, bench/affinity.sh) is the harshest client: it does
// no gRPC work on a reply, so whatever sits between it and the server (a
// proxy) weighs the most against it. This tool is the view of the fastest
// real client: bench/affinity_bench.py runs it directly, through the proxy
// and through the L4 relay. Every call must succeed and return the expected
// bytes, or the tool exits 1.
//
// With --seconds=S it is the victim of bench/attacks/h2_attacks.py: it
// prints "warm" once the unmeasured first call succeeded, then calls for S
// seconds (at most --calls), each with a --timeout_seconds deadline; a failed
// call is counted, not fatal, and followed by a 10 ms pause so a dead target
// does not become a busy loop. "calls" is then every call made, "failed"
// those that did not return the expected bytes, and calls_per_second counts
// the successful calls only.
//
// Usage: client_load --target=127.0.0.1:50051 --method=GetTable|GetRows
//        [--calls=200] [--threads=4] [--d=512] [--max_len=2048]
//        [--seconds=0] [--timeout_seconds=60]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/posenc_client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "posenc_server or proxy");
ABSL_FLAG(std::string, method, "GetTable", "GetTable or GetRows (one row)");
ABSL_FLAG(int, calls, 200, "calls in all, split across the threads");
ABSL_FLAG(int, threads, 4, "client threads (one shared channel)");
ABSL_FLAG(uint32_t, d, 512, "d of the table");
ABSL_FLAG(uint32_t, max_len, 2048, "max_len of the table");
ABSL_FLAG(double, seconds, 0,
          "if > 0: call for this many seconds (at most --calls calls)");
ABSL_FLAG(double, timeout_seconds, 60, "deadline of each call");

namespace {

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As posenc_server and the CLI do: no Abseil deadlock detector per lock.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const std::string method = absl::GetFlag(FLAGS_method);
  const bool rows = method == "GetRows";
  if (!rows && method != "GetTable") {
    std::fprintf(stderr, "--method must be GetTable or GetRows\n");
    return 2;
  }
  const int calls = absl::GetFlag(FLAGS_calls);
  const int threads = absl::GetFlag(FLAGS_threads);
  const double run_seconds = absl::GetFlag(FLAGS_seconds);
  const double timeout_seconds = absl::GetFlag(FLAGS_timeout_seconds);
  if (calls < 1 || threads < 1 || calls > 10'000'000 || threads > 256 ||
      !(run_seconds >= 0 && run_seconds <= 3600) ||
      !(timeout_seconds > 0 && timeout_seconds <= 3600)) {
    std::fprintf(stderr,
                 "--calls in [1, 1e7], --threads in [1, 256], --seconds in "
                 "[0, 3600], --timeout_seconds in (0, 3600]\n");
    return 2;
  }
  const bool timed = run_seconds > 0;
  posenc::PosencClient::Options options;
  options.target = absl::GetFlag(FLAGS_target);
  options.timeout = absl::Seconds(timeout_seconds);
  posenc::PosencClient client(options);
  posenc::TableSpec spec;
  spec.d = absl::GetFlag(FLAGS_d);
  spec.max_len = absl::GetFlag(FLAGS_max_len);
  const uint32_t position = spec.max_len / 2;
  const size_t want_bytes =
      size_t{rows ? 1 : spec.max_len} * spec.d * sizeof(float);

  std::atomic<int> next{0};
  std::atomic<int> made{0};
  std::atomic<int> failed{0};
  absl::Mutex mu;
  std::string first_error;
  auto one_call = [&]() -> absl::Status {
    absl::StatusOr<posenc::Tensor> t =
        rows ? client.GetRows(spec, {position}) : client.GetTable(spec);
    if (!t.ok()) return t.status();
    if (t->data.size() != want_bytes) {
      return absl::DataLossError(absl::StrCat(t->data.size(), " bytes"));
    }
    return absl::OkStatus();
  };
  // One unmeasured call: connects and puts the table in the server's cache.
  if (absl::Status s = one_call(); !s.ok()) {
    std::fprintf(stderr, "warm-up call: %s\n", s.ToString().c_str());
    return 1;
  }
  if (timed) {
    std::printf("warm\n");
    std::fflush(stdout);
  }
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  const auto stop_at =
      t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(run_seconds));
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&] {
      while (next.fetch_add(1) < calls &&
             (!timed || std::chrono::steady_clock::now() < stop_at)) {
        made.fetch_add(1);
        if (absl::Status s = one_call(); !s.ok()) {
          failed.fetch_add(1);
          {
            absl::MutexLock lock(&mu);
            if (first_error.empty()) first_error = s.ToString();
          }
          if (timed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  const double cpu = CpuSeconds() - cpu0;
  const int n = made.load();
  std::printf(
      "calls %d failed %d seconds %.4f calls_per_second %.1f "
      "cpu_us_per_call %.1f\n",
      n, failed.load(), seconds, (timed ? n - failed.load() : n) / seconds,
      n > 0 ? 1e6 * cpu / n : 0.0);
  if (failed.load() > 0) {
    std::fprintf(stderr, "first error: %s\n", first_error.c_str());
    return 1;
  }
  return 0;
}
