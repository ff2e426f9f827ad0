// cold_rows_cpu: server CPU per cold one-row GetRows, per call (issue 22,
// item 5), for every dtype, every frequency convention and RoPE scheme,
// d = 8..4096 and max_len 1 (the table is one row: computed whole), 4096
// and the server's limit 2^24.
//
// Starts its own posenc_server (--server, default flags plus
// --server_flags) on 127.0.0.1, a new one for each scheme
// (--fresh_server), and calls it from one client, one call at a time. Every
// call asks for one row of a table family nobody asked for before (a fresh
// base), so it takes the whole cold path: the request is parsed and checked,
// the cache misses, the compute pool builds the family's plan (its d/2 exact
// frequencies, MPFR) and computes one row.
//
// Two figures per call, side by side:
//   - server CPU: the server process's CPU-time clock (clock_getcpuclockid:
//     every thread, gRPC's included, and threads that exited), read once
//     the server is idle before the call and once it is idle again after
//     it. Idle: no thread of the server running or runnable (state R or D
//     in /proc/PID/task/*/stat) at two looks 200 us apart, with the clock
//     unchanged between them; only then is a thread's time fully accounted
//     (a running thread's advances at scheduler ticks, 4 ms at HZ=250).
//     Each call is one sample: the figure is this call's, not a mean.
//     Whatever else the server does meanwhile (timers, the warm reserve's
//     refill) is counted in it too, so the figures only overstate.
//   - core CPU: the same work done in this process on this thread
//     (CLOCK_THREAD_CPUTIME_ID): EncodingPlan(spec) and ComputeRow, i.e.
//     the part of the server's cost that grows with d and the scheme.
// Reported per case: median, p99 and max of each (microseconds), and at
// the end the cases whose server CPU p99 or max passes --limit_us.
//
// Usage: cold_rows_cpu --server=build/server/posenc_server [--calls=100]
//        [--quick] [--limit_us=1000] [--server_flags=--threads=2,...]
// Exit status: 0 when every call succeeded (whatever the figures), 1 when
// a call failed or the server did not start.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/rope_schemes.h"
#include "bench/server_process.h"
#include "client/posenc_client.h"
#include "core/plan/encoding_plan.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"

ABSL_FLAG(std::string, server, "", "posenc_server binary (required)");
ABSL_FLAG(std::string, server_flags, "",
          "extra posenc_server flags, comma-separated");
ABSL_FLAG(int, calls, 100, "cold calls per case (each a new family)");
ABSL_FLAG(bool, quick, false, "d in {64, 4096}, max_len 2^24 only");
ABSL_FLAG(std::string, schemes, "",
          "comma-separated schemes to run (paper, t2t, rope-default, "
          "rope-linear, rope-dynamic, rope-yarn, rope-llama3, rope-longrope); "
          "empty: all");
ABSL_FLAG(double, limit_us, 1000, "report cases whose p99 or max passes it");
ABSL_FLAG(bool, fresh_server, true,
          "a new server for each scheme (what a server has served before, "
          "e.g. thousands of one-row tables cached, stays out of the next "
          "scheme's figures)");
ABSL_FLAG(bool, core, true,
          "also time EncodingPlan + ComputeRow in this process (this "
          "binary's core/, which may not be the server's)");

namespace posenc {
namespace {

using bench_schemes::kSchemes;
using bench_schemes::Plain;
using bench_schemes::Scheme;

constexpr uint32_t kMaxLenLimit = 1u << 24;  // the server's default limit

using Server = bench::ServerProcess;

double ThreadCpuUs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

const DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                         DType::kBFloat16};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const double rank = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - lo);
}

int Run() {
  const std::string binary = absl::GetFlag(FLAGS_server);
  if (binary.empty()) {
    std::fprintf(stderr, "cold_rows_cpu: --server=PATH is required\n");
    return 1;
  }
  // A server and a client connected to it, first-call costs paid.
  std::unique_ptr<Server> server;
  std::unique_ptr<PosencClient> client;
  auto start = [&]() -> bool {
    client.reset();
    server =
        std::make_unique<Server>(binary, absl::GetFlag(FLAGS_server_flags));
    if (server->port() == 0) {
      std::fprintf(stderr, "cold_rows_cpu: %s did not start\n", binary.c_str());
      return false;
    }
    PosencClient::Options options;
    options.target = absl::StrCat("127.0.0.1:", server->port());
    options.timeout = absl::Seconds(60);
    client = std::make_unique<PosencClient>(options);
    // Connection up, and the server's first-call costs paid (not measured).
    for (int i = 0; i < 20; ++i) {
      TableSpec warm = Plain(64, kMaxLenLimit);
      warm.base = 3.5 + i;
      if (!client->GetRows(warm, {uint32_t(i)}).ok()) {
        std::fprintf(stderr, "cold_rows_cpu: warm-up call failed\n");
        return false;
      }
    }
    return true;
  };
  const bool fresh_server = absl::GetFlag(FLAGS_fresh_server);
  if (!start()) return 1;

  const bool quick = absl::GetFlag(FLAGS_quick);
  const int calls = absl::GetFlag(FLAGS_calls);
  const double limit = absl::GetFlag(FLAGS_limit_us);
  const bool core = absl::GetFlag(FLAGS_core);
  const std::vector<uint32_t> ds =
      quick ? std::vector<uint32_t>{64, 4096}
            : std::vector<uint32_t>{8, 64, 512, 4096};
  const std::vector<uint32_t> max_lens =
      quick ? std::vector<uint32_t>{kMaxLenLimit}
            : std::vector<uint32_t>{1, 4096, kMaxLenLimit};
  std::string load;
  {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    load = absl::StrCat(a, " ", b, " ", c);
  }
  const std::string flags = absl::GetFlag(FLAGS_server_flags);
  std::printf(
      "cold_rows_cpu: server CPU (the server process's CPU clock, all "
      "threads, read with the server idle before and after each call) "
      "and core CPU (EncodingPlan + ComputeRow in this process) per cold "
      "one-row GetRows, %d calls per case, each a new family (fresh base), "
      "one client, one call at a time; %s; server flags: %s; load average "
      "at start %s\n",
      calls, fresh_server ? "a new server per scheme" : "one server",
      flags.empty() ? "defaults" : flags.c_str(), load.c_str());
  std::printf("%-14s %-8s %5s %9s | %-29s | %-29s\n", "", "", "", "",
              "server CPU per call (us)", "core CPU per call (us)");
  std::printf("%-14s %-8s %5s %9s | %9s %9s %9s | %9s %9s %9s\n", "scheme",
              "dtype", "d", "max_len", "median", "p99", "max", "median", "p99",
              "max");
  std::mt19937_64 rng(22);
  uint64_t serial = 0;
  int failures = 0;
  uint64_t unsettled = 0;  // calls the server was not seen idle around
  std::vector<std::string> over;
  double worst_p99 = 0, worst_max = 0;
  std::string worst_p99_case, worst_max_case;
  std::vector<double> all;
  const std::vector<std::string> only =
      absl::StrSplit(absl::GetFlag(FLAGS_schemes), ',', absl::SkipEmpty());
  for (const Scheme& scheme : kSchemes) {
    if (!only.empty() &&
        std::find(only.begin(), only.end(), scheme.name) == only.end()) {
      continue;
    }
    if (fresh_server && &scheme != &kSchemes[0] && !start()) return 1;
    for (uint32_t d : ds) {
      for (uint32_t max_len : max_lens) {
        for (DType dtype : kDTypes) {
          std::vector<double> server_us, core_us;
          std::vector<std::byte> row;
          for (int k = 0; k < calls; ++k) {
            TableSpec spec = scheme.make(d, max_len);
            spec.dtype = dtype;
            // A family nobody asked for: bases 10000 + n/1024 (exact).
            spec.base = 10000 + static_cast<double>(++serial) / 1024;
            const uint32_t pos = static_cast<uint32_t>(rng() % max_len);
            bool settled_before = false, settled_after = false;
            const uint64_t before = server->IdleCpuNs(&settled_before);
            absl::StatusOr<Tensor> got = client->GetRows(spec, {pos});
            const uint64_t after = server->IdleCpuNs(&settled_after);
            if (!settled_before || !settled_after) ++unsettled;
            if (!got.ok()) {
              if (++failures <= 5) {
                std::fprintf(stderr, "cold_rows_cpu: %s: %s\n",
                             spec.DebugString().c_str(),
                             got.status().ToString().c_str());
              }
              continue;
            }
            server_us.push_back((after - before) / 1e3);
            if (!core) continue;
            // The same work in this process, on a family this process has
            // not built either.
            row.resize(spec.row_bytes());
            const double t0 = ThreadCpuUs();
            {
              const EncodingPlan plan(spec);
              plan.ComputeRow(pos, row.data());
            }
            core_us.push_back(ThreadCpuUs() - t0);
          }
          const double p99 = Percentile(server_us, 0.99);
          const double max = Percentile(server_us, 1.0);
          const std::string name =
              absl::StrCat(scheme.name, " ", DTypeName(dtype), " d=", d,
                           " max_len=", max_len);
          std::printf(
              "%-14s %-8s %5u %9u | %9.0f %9.0f %9.0f | %9.0f %9.0f %9.0f%s\n",
              scheme.name, DTypeName(dtype), d, max_len,
              Percentile(server_us, 0.5), p99, max, Percentile(core_us, 0.5),
              Percentile(core_us, 0.99), Percentile(core_us, 1.0),
              (p99 > limit || max > limit) ? "  > limit" : "");
          std::fflush(stdout);
          if (p99 > worst_p99) worst_p99 = p99, worst_p99_case = name;
          if (max > worst_max) worst_max = max, worst_max_case = name;
          if (p99 > limit || max > limit) {
            over.push_back(absl::StrCat(name, " (p99 ", static_cast<int>(p99),
                                        " us, max ", static_cast<int>(max),
                                        " us)"));
          }
          all.insert(all.end(), server_us.begin(), server_us.end());
        }
      }
    }
  }
  std::printf(
      "all %zu calls: server CPU median %.0f us, p99 %.0f us, max %.0f us\n",
      all.size(), Percentile(all, 0.5), Percentile(all, 0.99),
      Percentile(all, 1.0));
  std::printf("worst p99: %.0f us (%s); worst max: %.0f us (%s)\n", worst_p99,
              worst_p99_case.c_str(), worst_max, worst_max_case.c_str());
  std::printf(
      "calls around which the server was not seen idle within 50 ms (their "
      "figure may miss or add work): %llu\n",
      static_cast<unsigned long long>(unsettled));
  std::printf("cases over %.0f us (p99 or max): %zu\n", limit, over.size());
  for (const std::string& o : over) std::printf("  %s\n", o.c_str());
  if (failures > 0) {
    std::fprintf(stderr, "cold_rows_cpu: %d calls failed\n", failures);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return posenc::Run();
}
