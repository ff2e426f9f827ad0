// encode_bench: what one Encode costs, and how its cold throughput compares
// with the plain float32 table's, measured side by side in one run.
//
// The call: 1024 real timesteps t = (k + 0.5) / 1024 at dim 320, FLUX's
// timestep_embedding (LAYOUT_CONCAT_COS_SIN, scale 1000), the batch of
// bench/ghz/encode_timesteps.json. No value of Encode is cached, so every
// call computes its rows; the server keeps the plans of its last specs
// (core/cache/real_encoding_plan_cache.h: the 160 exact frequencies, MPFR), so
// a repeated spec skips the plan and a new one pays for it.
//
//   1. core CPU per call, float32: RealEncodingPlan::Create + ComputeRows on
//      this thread (CLOCK_THREAD_CPUTIME_ID), --rounds samples; target
//      <= --target_us (1000 us).
//   2. server CPU per call through gRPC (with --server): a posenc_server
//      started here (bench/server_process.h), one client, one call at a
//      time; the server process's CPU clock (every thread, gRPC's
//      included) read with the server idle before and after a batch of
//      --batch_calls calls, divided by the calls: one sample per batch,
//      --batches samples. The loop is bounded in calls and in time
//      (--max_seconds). Same target.
//   3. cold throughput, values per second of thread CPU, every dtype:
//      Encode's rows (ComputeRows, 1024 x 320 values, the plan kept as the
//      server keeps it) against the plain float32 table of the same dim
//      (TableSpec d = 320, max_len 1024: EncodingPlan built once,
//      ComputeRows of rows 0..1023: the table kernel's rate); target:
//      Encode (plan kept) / table kernel >= --target_ratio (0.5). For
//      reference, a spec's first call (Create + ComputeRows) against the
//      cold table (its plan built in the timing too).
//      Each round times every case once, in a new random order, so a slow
//      spell of the machine falls on all of them, and each ratio is taken
//      within a round: its median and interval are those of the rounds'
//      ratios (paired samples).
//      With them, in the same rounds, the sin/cos floor
//      (bench/sincos_floor.h): for the same 1024 points x 160 frequencies,
//      angle = x * F_i in double (F_i the double nearest the exact scaled
//      frequency, computed once outside the timing), Highway's vectorised
//      double hwy::Sin and hwy::Cos (about 1-3 ulp), each cast to float32
//      into rows laid out as Encode's (cos half, sin half). It is not exact
//      (the rounding is not decided; the run counts the values that differ
//      from Encode float32's), but it is a floor: a batch of arbitrary real
//      points admits no recurrence across rows (x arbitrary) nor across
//      frequencies (F_i geometric), so every pair needs its own sin/cos of
//      a fresh angle, and deciding even a float32 rounding takes a
//      double-grade sin/cos; any exact Encode pays at least this once per
//      pair. Printed, informational (neither in the exit status nor a
//      verdict line of bench/report_verdicts.py): the floor / table
//      kernel ratio, the best any exact Encode could reach, with "target
//      impossible on this machine" when its whole interval lies below
//      --target_ratio, "target feasible" when the whole interval reaches
//      it; and each dtype's Encode / floor, the ratio to the floor that
//      the project's rule asks for when a target proves impossible.
//
// Every figure is a median with its 95% confidence interval
// (bench/median_ci.h); every verdict is IntervalVerdict, the one rule of
// the benchmarks: "met" when the whole interval meets the target, "within
// noise" when the target lies inside it, else "MISSED". A core ratio's
// interval is MedianCi of the rounds' ratios, widened to at least -+5% of
// its median (bench/encoding_bench's floor of noise); the server's ratio
// to the gRPC floor (separate batches) is the ratio of the medians times
// 1 -+ the two relative half-widths in quadrature (at least 5%), as
// bench/encoding_bench does.
//
// Usage: encode_bench [--server=build/server/posenc_server] [--rounds=101]
//        [--batches=15] [--batch_calls=20] [--max_seconds=120]
// Exit status: 1 when a target is MISSED, a call fails or the server does
// not start; else 0.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/median_ci.h"
#include "bench/run_conditions.h"
#include "bench/server_process.h"
#include "bench/sincos_floor.h"
#include "client/posenc_client.h"
#include "core/plan/encoding_plan.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/real_frequencies.h"
#include "core/spec/table_spec.h"
#include "floor.grpc.pb.h"

ABSL_FLAG(std::string, server, "",
          "posenc_server binary: also measure the server's CPU per call "
          "(empty: core only)");
ABSL_FLAG(std::string, server_flags, "",
          "extra posenc_server flags, comma-separated");
ABSL_FLAG(std::string, floor_server, "",
          "bench/floor_server binary: with --server, also measure gRPC's own "
          "CPU per call for the same request size and reply bytes, side by "
          "side (empty: not measured)");
ABSL_FLAG(int, rounds, 101,
          "samples of each core case (a round of every case takes ~20 ms)");
ABSL_FLAG(int, batches, 15, "samples of the server's CPU per call");
ABSL_FLAG(int, batch_calls, 20, "Encode calls per server sample");
ABSL_FLAG(double, max_seconds, 120,
          "bound on the server loop's wall time (it stops early, with the "
          "samples it has)");
ABSL_FLAG(double, target_us, 1000, "CPU per call target (at most)");
ABSL_FLAG(double, target_ratio, 0.5,
          "Encode's values/s over the float32 table's (at least)");

namespace posenc {
using bench::LoadAverage;
using bench::Summarize;
using bench::Summary;
using bench::ThreadCpuNs;
namespace {

constexpr uint32_t kPoints = 1024;
constexpr uint32_t kDim = 320;
constexpr double kValues = double{kPoints} * kDim;
constexpr double kMinNoise = 0.05;  // as bench/encoding_bench

const DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                         DType::kBFloat16};

EncodingSpec FluxSpec(DType dtype) {
  EncodingSpec spec;
  spec.dim = kDim;
  spec.layout = Layout::kConcatCosSin;
  spec.scale = 1000;
  spec.dtype = dtype;
  return spec;
}

std::vector<double> Timesteps() {
  std::vector<double> ts;
  for (uint32_t k = 0; k < kPoints; ++k) ts.push_back((k + 0.5) / kPoints);
  return ts;
}

int g_missed = 0;

const char* Verdict(std::pair<double, double> ci, double target,
                    bool higher_is_better) {
  const char* verdict = bench::IntervalVerdict(ci, target, higher_is_better);
  if (bench::Missed(verdict)) ++g_missed;
  return verdict;
}

// Prints a per-call CPU figure (microseconds) and its verdict.
void PrintPerCall(const char* what, const std::vector<double>& us,
                  double target) {
  const Summary s = Summarize(us);
  std::printf(
      "%s: median %.0f us, 95%% CI [%.0f, %.0f] us, %zu samples (target <= "
      "%.0f us): %s\n",
      what, s.median, s.lo, s.hi, us.size(), target,
      Verdict({s.lo, s.hi}, target, /*higher_is_better=*/false));
}

// Ratio of two medians, with the two relative half-widths in quadrature (at
// least kMinNoise).
std::pair<double, double> RatioCi(const Summary& a, const Summary& b) {
  const double r = a.median / b.median;
  const double noise = std::max(kMinNoise, std::hypot(a.spread(), b.spread()));
  return {r * (1 - noise), r * (1 + noise)};
}

// The rounds' ratios a[r] / b[r] (each round timed both): median, and
// MedianCi widened to at least -+kMinNoise of the median.
Summary PairedRatio(const std::vector<double>& a,
                    const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t r = 0; r < a.size() && r < b.size(); ++r) {
    ratios.push_back(a[r] / b[r]);
  }
  Summary s = Summarize(ratios);
  s.lo = std::min(s.lo, s.median * (1 - kMinNoise));
  s.hi = std::max(s.hi, s.median * (1 + kMinNoise));
  return s;
}

// Part of 3: the floor's values/s, floor / table kernel (the best an exact
// Encode could reach: informational, not counted in the exit status), and
// how many of the floor's float32 values differ from Encode float32's exact
// ones (outside the timing).
void PrintFloor(const std::vector<double>& ts, const std::vector<double>& freqs,
                const Summary& floor_rate, const Summary& floor_over_table,
                double target_ratio) {
  std::printf(
      "\n  floor (Highway's double hwy::Sin + hwy::Cos of x * F_i, cast to "
      "float32; not exact): median %.1f Mvalues/s, 95%% CI %.1f .. %.1f\n",
      floor_rate.median / 1e6, floor_rate.lo / 1e6, floor_rate.hi / 1e6);
  const std::pair<double, double> ci{floor_over_table.lo, floor_over_table.hi};
  const char* verdict =
      bench::IntervalVerdict(ci, target_ratio, /*higher_is_better=*/true);
  // Not a target line (no ">=": bench/report_verdicts.py leaves it out of
  // the verdict table), but read with the same rule.
  const char* reading =
      bench::Missed(verdict)
          ? "the whole interval below it: target impossible on this machine"
      : std::strcmp(verdict, "met") == 0
          ? "the whole interval at or above it: target feasible"
          : "within noise: neither proven impossible nor feasible";
  std::printf(
      "  floor            / table kernel = %.3f (95%% CI %.3f .. %.3f; the "
      "best any exact Encode could reach; the target %.2f): %s\n",
      floor_over_table.median, ci.first, ci.second, target_ratio, reading);

  const size_t values = ts.size() * kDim;
  std::vector<float> exact(values), approx(values);
  absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(FluxSpec(DType::kFloat32), {});
  plan->ComputeRows(ts, reinterpret_cast<std::byte*>(exact.data()));
  bench::SinCosFloorRows(ts.data(), ts.size(), freqs.data(), kDim / 2,
                         approx.data());
  size_t differ = 0;
  for (size_t k = 0; k < values; ++k) differ += exact[k] != approx[k];
  std::printf(
      "  floor values that differ from Encode float32's exact ones: %zu of "
      "%zu\n",
      differ, values);
}

// 1 and 3: the core cases, interleaved. Returns the float32 Encode's CPU
// per call (us), one sample a round.
std::vector<double> RunCore(int rounds, double target_us, double target_ratio) {
  const std::vector<double> ts = Timesteps();
  TableSpec table;
  table.d = kDim;
  table.max_len = kPoints;  // the answer's shape: 1024 rows of 320
  table.dtype = DType::kFloat32;
  const EncodingPlan table_plan(table);
  std::vector<std::byte> out(size_t{kPoints} * kDim * 8);

  // Each case writes its rows into `out` and returns its thread CPU (ns).
  struct Case {
    Case(std::string n, std::function<void()> r)
        : name(std::move(n)), run(std::move(r)) {}
    std::string name;
    std::function<void()> run;
    std::vector<double> values_per_s;
    std::vector<double> us;
  };
  std::vector<Case> cases;
  cases.emplace_back("table float32 (plan built once)",
                     [&] { table_plan.ComputeRows(0, kPoints, out.data()); });
  cases.emplace_back("table float32 (plan in the timing)", [&] {
    const EncodingPlan plan(table);
    plan.ComputeRows(0, kPoints, out.data());
  });
  // Encode with its plan kept (as the server keeps it for a repeated
  // spec), then a spec's first call (Create in the timing).
  std::vector<RealEncodingPlan> kept;
  for (DType dtype : kDTypes) {
    kept.push_back(*RealEncodingPlan::Create(FluxSpec(dtype), {}));
  }
  constexpr size_t kFirstEncode = 2;
  for (size_t k = 0; k < kept.size(); ++k) {
    cases.emplace_back(
        absl::StrCat("Encode ", DTypeName(kDTypes[k]), " (plan kept)"),
        [&, k] { kept[k].ComputeRows(ts, out.data()); });
  }
  const size_t first_call = cases.size();
  for (DType dtype : kDTypes) {
    cases.emplace_back(
        absl::StrCat("Encode ", DTypeName(dtype), " (first call)"), [&, dtype] {
          absl::StatusOr<RealEncodingPlan> plan =
              RealEncodingPlan::Create(FluxSpec(dtype), {});
          plan->ComputeRows(ts, out.data());
        });
  }
  const size_t end_encode = cases.size();
  // The floor: F_i = RN(scale * f_i), the first of the exact words.
  std::vector<double> freqs;
  for (const FrequencyWords& w : RealFrequencies(FluxSpec(DType::kFloat32))) {
    freqs.push_back(w.w0);
  }
  const uint32_t half = kDim / 2;
  const size_t floor_case = cases.size();
  cases.emplace_back(absl::StrCat("floor: hwy Sin+Cos double (",
                                  bench::SinCosFloorTarget(), ")"),
                     [&] {
                       bench::SinCosFloorRows(
                           ts.data(), ts.size(), freqs.data(), half,
                           reinterpret_cast<float*>(out.data()));
                     });
  bench::RunInterleavedRounds(cases, rounds, [](Case& c, double ns) {
    c.us.push_back(ns / 1e3);
    c.values_per_s.push_back(kValues / (ns * 1e-9));
  });

  std::printf(
      "core, one thread, thread CPU time, %d rounds (each case once a round, "
      "in a new random order), %u points x %u values:\n",
      rounds, kPoints, kDim);
  std::printf("  %-36s %12s %25s %10s\n", "case", "Mvalues/s", "95% CI",
              "us/call");
  for (const Case& c : cases) {
    const Summary s = Summarize(c.values_per_s);
    std::printf("  %-36s %12.1f %11.1f .. %-11.1f %10.0f\n", c.name.c_str(),
                s.median / 1e6, s.lo / 1e6, s.hi / 1e6, Summarize(c.us).median);
  }
  std::printf("\n");
  PrintPerCall(
      "1. core CPU per Encode (RealEncodingPlan::Create + ComputeRows, "
      "float32)",
      cases[first_call].us, target_us);
  std::printf(
      "\n3. cold Encode values/s over the float32 table's (ratios within "
      "each round):\n");
  const std::vector<double>& table_rate = cases[0].values_per_s;
  const std::vector<double>& cold_table_rate = cases[1].values_per_s;
  for (size_t k = kFirstEncode; k < first_call; ++k) {
    const Summary r = PairedRatio(cases[k].values_per_s, table_rate);
    std::printf(
        "  %-28s / table kernel = %.3f (95%% CI %.3f .. %.3f; target >= "
        "%.2f): %s\n",
        cases[k].name.c_str(), r.median, r.lo, r.hi, target_ratio,
        Verdict({r.lo, r.hi}, target_ratio, /*higher_is_better=*/true));
  }
  for (size_t k = first_call; k < end_encode; ++k) {
    const Summary r = PairedRatio(cases[k].values_per_s, cold_table_rate);
    std::printf(
        "  %-28s / cold table   = %.3f (95%% CI %.3f .. %.3f; for "
        "reference)\n",
        cases[k].name.c_str(), r.median, r.lo, r.hi);
  }
  const Summary floor_rate = Summarize(cases[floor_case].values_per_s);
  PrintFloor(ts, freqs, floor_rate,
             PairedRatio(cases[floor_case].values_per_s, table_rate),
             target_ratio);
  for (size_t k = kFirstEncode; k < first_call; ++k) {
    const Summary r =
        PairedRatio(cases[k].values_per_s, cases[floor_case].values_per_s);
    std::printf(
        "  %-28s / floor        = %.3f (95%% CI %.3f .. %.3f; the ratio to "
        "the floor)\n",
        cases[k].name.c_str(), r.median, r.lo, r.hi);
  }
  return cases[first_call].us;
}

// 2: the server's CPU per call, through gRPC.
int RunServer(const std::string& binary, int batches, int batch_calls,
              double max_seconds, double target_us) {
  bench::ServerProcess server(binary, absl::GetFlag(FLAGS_server_flags));
  if (server.port() == 0) {
    std::fprintf(stderr, "encode_bench: %s did not start\n", binary.c_str());
    return 1;
  }
  PosencClient::Options options;
  options.target = absl::StrCat("127.0.0.1:", server.port());
  options.timeout = absl::Seconds(30);
  PosencClient client(options);
  const std::vector<double> ts = Timesteps();
  const EncodingSpec spec = FluxSpec(DType::kFloat32);
  for (int k = 0; k < 10; ++k) {  // connection up, first-call costs paid
    absl::StatusOr<Tensor> got = client.Encode(spec, ts);
    if (!got.ok()) {
      std::fprintf(stderr, "encode_bench: warm-up Encode failed: %s\n",
                   got.status().ToString().c_str());
      return 1;
    }
  }
  // gRPC's floor (bench/floor_server): a unary call with a request as
  // large as this Encode's and a reply of the same bytes, built once.
  std::unique_ptr<bench::ServerProcess> floor;
  std::unique_ptr<bench::Floor::Stub> floor_stub;
  bench::FloorRequest floor_request;
  if (const std::string path = absl::GetFlag(FLAGS_floor_server);
      !path.empty()) {
    floor = std::make_unique<bench::ServerProcess>(path, "");
    if (floor->port() == 0) {
      std::fprintf(stderr, "encode_bench: %s did not start\n", path.c_str());
      return 1;
    }
    floor_stub = bench::Floor::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", floor->port()),
                            grpc::InsecureChannelCredentials()));
    floor_request.set_bytes(kPoints * kDim * 4);
    floor_request.set_padding(std::string(sizeof(double) * kPoints, 'x'));
  }
  auto call_floor = [&]() -> bool {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    bench::FloorReply reply;
    return floor_stub->Unary(&context, floor_request, &reply).ok() &&
           reply.payload().size() == floor_request.bytes();
  };
  for (int k = 0; floor != nullptr && k < 10; ++k) {
    if (!call_floor()) {
      std::fprintf(stderr, "encode_bench: warm-up floor call failed\n");
      return 1;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> us, floor_us;
  uint64_t unsettled = 0;
  for (int b = 0; b < batches; ++b) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() > max_seconds) {
      break;
    }
    bool settled_before = false, settled_after = false;
    const uint64_t before = server.IdleCpuNs(&settled_before);
    for (int k = 0; k < batch_calls; ++k) {
      absl::StatusOr<Tensor> got = client.Encode(spec, ts);
      if (!got.ok() || got->shape != std::vector<uint32_t>{kPoints, kDim}) {
        std::fprintf(stderr, "encode_bench: Encode failed: %s\n",
                     got.status().ToString().c_str());
        return 1;
      }
    }
    const uint64_t after = server.IdleCpuNs(&settled_after);
    if (!settled_before || !settled_after) ++unsettled;
    us.push_back((after - before) / 1e3 / batch_calls);
    if (floor == nullptr) continue;
    // The floor's batch right after: the same spell of the machine.
    settled_before = settled_after = false;
    const uint64_t floor_before = floor->IdleCpuNs(&settled_before);
    for (int k = 0; k < batch_calls; ++k) {
      if (!call_floor()) {
        std::fprintf(stderr, "encode_bench: floor call failed\n");
        return 1;
      }
    }
    const uint64_t floor_after = floor->IdleCpuNs(&settled_after);
    if (!settled_before || !settled_after) ++unsettled;
    floor_us.push_back((floor_after - floor_before) / 1e3 / batch_calls);
  }
  std::printf(
      "\n2. server CPU per Encode through gRPC (the server process's CPU "
      "clock, all threads, read idle around each batch of %d calls; one "
      "client, one call at a time; server flags: %s; batches the server "
      "was not seen idle around: %llu):\n",
      batch_calls,
      absl::GetFlag(FLAGS_server_flags).empty()
          ? "defaults"
          : absl::GetFlag(FLAGS_server_flags).c_str(),
      static_cast<unsigned long long>(unsettled));
  PrintPerCall("  server CPU per call", us, target_us);
  if (floor == nullptr) return 0;
  // gRPC alone: what any server answering this call pays before computing
  // a value. Its interval wholly above the target makes the target
  // impossible on this machine; posenc / floor is then the figure.
  const Summary f = Summarize(floor_us);
  const Summary p = Summarize(us);
  std::printf(
      "  gRPC floor CPU per call (floor_server: a %zu-byte request, a "
      "%u-byte reply; its batch right after each of posenc's): median %.0f "
      "us, 95%% CI [%.0f, %.0f] us, %zu samples%s\n",
      floor_request.padding().size(), floor_request.bytes(), f.median, f.lo,
      f.hi, floor_us.size(),
      f.lo > target_us
          ? absl::StrFormat(": its whole interval above the %.0f us target: "
                            "the target is impossible on this machine",
                            target_us)
                .c_str()
          : "");
  const auto ci = RatioCi(p, f);
  std::printf(
      "  server CPU per call / gRPC floor = %.3f (95%% CI %.3f .. %.3f; "
      "posenc's own share per call: %.0f us)\n",
      p.median / f.median, ci.first, ci.second, p.median - f.median);
  return 0;
}

int Run() {
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  std::printf(
      "encode_bench: Encode of %u timesteps t = (k + 0.5) / %u at dim %u, "
      "LAYOUT_CONCAT_COS_SIN, scale 1000 (FLUX); load average at start "
      "%s\n\n",
      kPoints, kPoints, kDim, LoadAverage().c_str());
  RunCore(rounds, absl::GetFlag(FLAGS_target_us),
          absl::GetFlag(FLAGS_target_ratio));
  int status = 0;
  const std::string server = absl::GetFlag(FLAGS_server);
  if (!server.empty()) {
    status = RunServer(server, std::max(1, absl::GetFlag(FLAGS_batches)),
                       std::max(1, absl::GetFlag(FLAGS_batch_calls)),
                       absl::GetFlag(FLAGS_max_seconds),
                       absl::GetFlag(FLAGS_target_us));
  }
  std::printf("\nload average at end %s; targets MISSED: %d\n",
              LoadAverage().c_str(), g_missed);
  return status != 0 || g_missed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return posenc::Run();
}
