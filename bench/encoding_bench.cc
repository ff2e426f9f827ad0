// Table generation speed, d=512, max_len=8192, float32 (16 MiB per table):
// posenc's exact path on one thread and on all cores, the obvious scalar
// libm double-precision loop, and memset of the same bytes (memory floor).
//
//   build/bench/encoding_bench --benchmark_min_time=2
//
// Prints the ratios after the benchmark table.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "core/encoding.h"
#include "core/row_kernel_simd.h"

namespace posenc {
namespace {

constexpr uint32_t kD = 512;
constexpr uint32_t kMaxLen = 8192;
constexpr size_t kBytes = size_t{kD} * kMaxLen * sizeof(float);

TableSpec BenchSpec() {
  TableSpec s;
  s.d = kD;
  s.base = 10000;
  s.max_len = kMaxLen;
  s.dtype = DType::kFloat32;
  s.layout = Layout::kInterleaved;
  s.frequency = Frequency::kPaper;
  return s;
}

struct Buffer {
  Buffer() : p(static_cast<std::byte*>(std::aligned_alloc(64, kBytes))) {
    std::memset(p, 1, kBytes);  // fault the pages in before timing
  }
  ~Buffer() { std::free(p); }
  std::byte* p;
};

std::map<std::string, double>& Results() {
  static std::map<std::string, double> results;
  return results;
}

void Record(benchmark::State& state) {
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t{kBytes});
  state.counters["GB/s"] = benchmark::Counter(
      double(kBytes), benchmark::Counter::kIsIterationInvariantRate);
}

// Exact path, one thread (the plan is built inside, as ComputeRows does).
void BM_ExactSingleThread(benchmark::State& state) {
  Buffer buf;
  const TableSpec spec = BenchSpec();
  for (auto _ : state) {
    ComputeRows(spec, 0, kMaxLen, buf.p);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  Record(state);
}

// The same with the plan built once outside the timing loop, as the server
// does for a stream (its angle-addition table is built by the first call).
void BM_ExactSingleThreadPlanOnce(benchmark::State& state) {
  Buffer buf;
  const EncodingPlan plan(BenchSpec());
  for (auto _ : state) {
    ComputeRows(plan, 0, kMaxLen, buf.p);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  Record(state);
}

void BM_ExactAllCores(benchmark::State& state) {
  Buffer buf;
  const TableSpec spec = BenchSpec();
  const int threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (auto _ : state) {
    ComputeRowsParallel(spec, 0, kMaxLen, buf.p, threads);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = threads;
  Record(state);
}

void BM_ExactAllCoresPlanOnce(benchmark::State& state) {
  Buffer buf;
  const EncodingPlan plan(BenchSpec());
  const int threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (auto _ : state) {
    ComputeRowsParallel(plan, 0, kMaxLen, buf.p, threads);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = threads;
  Record(state);
}

// The obvious loop: frequency and angle in double, libm sin/cos, cast.
void BM_LibmDoubleBaseline(benchmark::State& state) {
  Buffer buf;
  float* out = reinterpret_cast<float*>(buf.p);
  for (auto _ : state) {
    for (uint32_t pos = 0; pos < kMaxLen; ++pos) {
      for (uint32_t i = 0; i < kD / 2; ++i) {
        const double angle = pos * std::pow(10000.0, -2.0 * i / kD);
        out[size_t{pos} * kD + 2 * i] = static_cast<float>(std::sin(angle));
        out[size_t{pos} * kD + 2 * i + 1] = static_cast<float>(std::cos(angle));
      }
    }
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  Record(state);
}

void BM_Memset(benchmark::State& state) {
  Buffer buf;
  int v = 0;
  for (auto _ : state) {
    std::memset(buf.p, ++v, kBytes);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  Record(state);
}

BENCHMARK(BM_ExactSingleThread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExactSingleThreadPlanOnce)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ExactAllCores)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExactAllCoresPlanOnce)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LibmDoubleBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Memset)->Unit(benchmark::kMillisecond)->UseRealTime();

// Collects GB/s per benchmark and prints the ratios the targets are about.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const double secs = run.GetAdjustedRealTime() /
                          benchmark::GetTimeUnitMultiplier(run.time_unit);
      Results()[run.benchmark_name()] = double(kBytes) / secs / 1e9;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

void PrintRatios() {
  auto& r = Results();
  auto get = [&](const char* prefix) {
    for (auto& [name, gbs] : r) {
      if (name.rfind(prefix, 0) == 0) return gbs;
    }
    return 0.0;
  };
  // Exact names (one prefix is a prefix of the other).
  auto exact = [&](const char* name) {
    const std::string real = std::string(name) + "/real_time";
    return r.count(real) ? r[real] : 0.0;
  };
  const double one = exact("BM_ExactSingleThread");
  const double all = exact("BM_ExactAllCores");
  const double one_plan = exact("BM_ExactSingleThreadPlanOnce");
  const double all_plan = exact("BM_ExactAllCoresPlanOnce");
  const double libm = get("BM_LibmDoubleBaseline"), mem = get("BM_Memset");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) {
      load[0] = load[1] = load[2] = 0;
    }
    std::fclose(f);
  }
  std::printf("\nSIMD target: %s; load average now %.2f %.2f %.2f\n",
              SimdKernelTargetName(), load[0], load[1], load[2]);
  std::printf(
      "float32 d=%u max_len=%u (%zu bytes), GB/s: exact 1 thread "
      "%.2f (plan once %.2f), exact %u threads %.2f (plan once %.2f), "
      "libm %.3f, memset %.2f\n",
      kD, kMaxLen, kBytes, one, one_plan, cores, all, all_plan, libm, mem);
  std::printf("exact 1 thread / libm = %.1fx, plan once %.1fx (target >= 5x)\n",
              one / libm, one_plan / libm);
  std::printf(
      "exact per core = %.2f GB/s, plan once %.2f GB/s (target >= 3 GB/s)\n",
      one, one_plan);
  std::printf(
      "memset / exact all cores = %.2fx, plan once %.2fx (target <= 4x)\n",
      mem / all, mem / all_plan);
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  posenc::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  posenc::PrintRatios();
  return 0;
}
