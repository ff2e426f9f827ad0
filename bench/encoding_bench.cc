// Table generation speed, d=512, max_len=8192, float32 (16 MiB per table):
// posenc's exact path on one thread and on all cores, the scalar libm
// double-precision loop (frequencies computed once, as PyTorch does; the
// old loop that calls pow per element is a second, labelled row), and
// memset of the same bytes (memory floor). Then every dtype x layout x
// frequency convention on one thread with the plan built once, in values
// per second, and float32 with Highway limited to AVX2 (to measure what
// AVX-512 gains). And a cold 64 x 64 grid table (integer and rational
// positions) against the cold plain table of as many values, per dtype.
// Then the multi-axis RoPE kinds of Encode, cold (the plan built inside the
// timing, as every Encode call builds it): FLUX's rotation matrices of a
// 64 x 64 image grid and a Qwen2-VL batch (text, a 32 x 32 image, text),
// against the plain float32 table's values/s (target >= 0.5, issue 24
// item 7), counting the distinct sin/cos values (2K per point; the layouts
// repeat them); bench/multi_axis_cold measures them in every dtype against
// the plain table of the same dtype, in interleaved rounds.
//
//   build/bench/encoding_bench --benchmark_min_time=2
//
// Runs every benchmark 9 times unless --benchmark_repetitions is given and
// prints, after the table, the target ratios from the medians with a noise
// band from the 95% confidence intervals of the medians (see Get): "met"
// only if the whole band meets the target, "within noise" if the target
// lies inside it, else "MISSED" (bench/median_ci.h's IntervalVerdict, the
// rule of every benchmark), and exits 1 when a target is MISSED.
// bench/report.sh runs 15 repetitions in random order
// (--benchmark_enable_random_interleaving), so a slow spell of the machine
// is spread over every benchmark instead of landing on one.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/median_ci.h"
#include "bench/multi_axis_batch.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/plan/encoding.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/position_grid.h"
#include "hwy/targets.h"

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

// Values per second of every repetition, by benchmark name: by wall-clock
// time ([0]) and by the benchmark thread's CPU time ([1]; less affected by
// preemption on a shared machine, still affected by cache and memory
// contention).
std::map<std::string, std::vector<double>>& Results(int clock = 0) {
  static std::map<std::string, std::vector<double>> results[2];
  return results[clock];
}

void Record(benchmark::State& state, size_t bytes = kBytes,
            size_t values = size_t{kD} * kMaxLen) {
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["GB/s"] = benchmark::Counter(
      double(bytes), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["Mval/s"] = benchmark::Counter(
      double(values) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
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

// The obvious loop as PyTorch writes it, in double: frequencies computed
// once, angle pos * f_i in double, libm sin/cos, cast to float32.
void BM_LibmDoubleFreqOnce(benchmark::State& state) {
  Buffer buf;
  float* out = reinterpret_cast<float*>(buf.p);
  std::vector<double> freq(kD / 2);
  for (auto _ : state) {
    for (uint32_t i = 0; i < kD / 2; ++i) {
      freq[i] = std::pow(10000.0, -2.0 * i / kD);
    }
    for (uint32_t pos = 0; pos < kMaxLen; ++pos) {
      float* row = out + size_t{pos} * kD;
      for (uint32_t i = 0; i < kD / 2; ++i) {
        const double angle = pos * freq[i];
        row[2 * i] = static_cast<float>(std::sin(angle));
        row[2 * i + 1] = static_cast<float>(std::cos(angle));
      }
    }
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  Record(state);
}

// The old baseline: pow recomputed for every element (about 3x slower than
// the loop above; kept as a labelled second row, not used for the ratios).
void BM_LibmDoublePowPerElement(benchmark::State& state) {
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

// Every dtype x layout x frequency convention, one thread, plan built once
// (d=512, max_len=8192). Args: dtype, layout, frequency (enum values).
void BM_ExactDtype(benchmark::State& state) {
  TableSpec spec = BenchSpec();
  spec.dtype = static_cast<DType>(state.range(0));
  spec.layout = static_cast<Layout>(state.range(1));
  spec.frequency = static_cast<Frequency>(state.range(2));
  const size_t bytes = spec.table_bytes();
  std::byte* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes));
  std::memset(p, 1, bytes);
  const EncodingPlan plan(spec);
  ComputeRows(plan, 0, kMaxLen, p);  // builds the plan's lazy tables
  for (auto _ : state) {
    ComputeRows(plan, 0, kMaxLen, p);
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  Record(state, bytes);
  std::free(p);
}

// Every dtype (interleaved, paper) with Highway's dispatch limited to AVX2,
// against BM_ExactDtype of the same dtype (what AVX-512 gains per dtype).
void BM_ExactDtypeAvx2Only(benchmark::State& state) {
  if ((hwy::SupportedTargets() & HWY_AVX2) == 0) {
    state.SkipWithError("no AVX2");
    return;
  }
  TableSpec spec = BenchSpec();
  spec.dtype = static_cast<DType>(state.range(0));
  const size_t bytes = spec.table_bytes();
  std::byte* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes));
  std::memset(p, 1, bytes);
  const EncodingPlan plan(spec);
  hwy::SetSupportedTargetsForTest(HWY_AVX2);
  ComputeRows(plan, 0, kMaxLen, p);
  for (auto _ : state) {
    ComputeRows(plan, 0, kMaxLen, p);
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  state.SetLabel(SimdKernelTargetName());
  hwy::SetSupportedTargetsForTest(0);
  Record(state, bytes);
  std::free(p);
}

// Float32 plan-once with Highway's dispatch limited to AVX2 (what the
// AVX-512 target gains on this CPU). Skipped without AVX-512.
void BM_ExactSingleThreadPlanOnceAvx2Only(benchmark::State& state) {
  if ((hwy::SupportedTargets() & HWY_AVX2) == 0) {
    state.SkipWithError("no AVX2");
    return;
  }
  Buffer buf;
  const EncodingPlan plan(BenchSpec());
  hwy::SetSupportedTargetsForTest(HWY_AVX2);
  ComputeRows(plan, 0, kMaxLen, buf.p);
  for (auto _ : state) {
    ComputeRows(plan, 0, kMaxLen, buf.p);
    benchmark::DoNotOptimize(buf.p);
    benchmark::ClobberMemory();
  }
  state.SetLabel(SimdKernelTargetName());
  hwy::SetSupportedTargetsForTest(0);
  Record(state);
}

// A cold grid table (issue 24 item 2): a 64 x 64 grid of 768 channels
// (ViT-L-like, MAE's column block first), plan built every iteration, one
// thread, against the cold plain table of the same values (d = 768,
// max_len = 4096). Args: dtype, rational (0: integer positions, MAE; 1:
// positions k / 3, SD3's 64-patch crop at base_size 64 of a 192 grid).
constexpr uint32_t kGridSide = 64;
constexpr uint32_t kGridD = 768;

TableSpec GridBenchSpec(DType dtype, bool rational) {
  auto grid = std::make_shared<GridSpec>();
  GridSpecAxis axis;
  axis.size = kGridSide;
  axis.channels = kGridD / 2;
  if (rational) {
    axis.first_index = 64;
    axis.denominator = 3;
  }
  grid->axes = {axis, axis};
  grid->channel_order = {1, 0};
  TableSpec spec;
  spec.d = kGridD;
  spec.max_len = kGridSide * kGridSide;
  spec.dtype = dtype;
  spec.layout = Layout::kConcatSinCos;
  spec.grid = grid;
  return spec;
}

void ColdTable(benchmark::State& state, const TableSpec& spec) {
  const size_t bytes = spec.table_bytes();
  std::byte* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes));
  std::memset(p, 1, bytes);
  for (auto _ : state) {
    const EncodingPlan plan(spec);  // cold: the plan is part of the cost
    ComputeRows(plan, 0, spec.max_len, p);
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  Record(state, bytes, size_t{spec.d} * spec.max_len);
  std::free(p);
}

void BM_GridCold(benchmark::State& state) {
  ColdTable(state, GridBenchSpec(static_cast<DType>(state.range(0)),
                                 state.range(1) != 0));
}

void BM_PlainCold(benchmark::State& state) {
  TableSpec spec;
  spec.d = kGridD;
  spec.max_len = kGridSide * kGridSide;
  spec.dtype = static_cast<DType>(state.range(0));
  spec.layout = Layout::kConcatSinCos;
  ColdTable(state, spec);
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

// FLUX.1's EmbedND(axes_dim [16, 56, 56]) rotation matrices of a 64 x 64
// latent: ids (0, row, col) as a grid (RealEncodingPlan::ComputeGridRows),
// the plan built inside (every Encode call is cold).
void BM_MultiAxisFluxGrid(benchmark::State& state) {
  EncodingSpec spec;
  spec.axes_dim = {16, 56, 56};
  spec.coordinates = 3;
  spec.layout = Layout::kRotationMatrix;
  PositionGrid grid;
  grid.start = {0, 0, 0};
  grid.count = {1, 64, 64};
  std::vector<std::byte> out(4096 * spec.row_bytes());
  for (auto _ : state) {
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    if (!plan.ok()) state.SkipWithError("FLUX spec refused");
    plan->ComputeGridRows(grid, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Record(state, out.size(), size_t{4096} * 2 * spec.pairs());
}

// Qwen2-VL (head_dim 128, theta 1e6, mrope_section [16, 24, 24],
// rotate_half) of a batch as get_rope_index numbers it: 1024 text tokens
// (p, p, p), a 32 x 32 image (1024, 1024 + h, 1024 + w), 1024 more text
// tokens from 1056; the plan built inside.
void BM_MultiAxisQwen2VlBatch(benchmark::State& state) {
  const EncodingSpec spec = bench::Qwen2VlSpec();
  const std::vector<double> ids = bench::Qwen2VlBatchIds();
  const size_t points = ids.size() / 3;
  std::vector<std::byte> out(points * spec.row_bytes());
  for (auto _ : state) {
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    if (!plan.ok()) state.SkipWithError("Qwen2-VL spec refused");
    plan->ComputeRows(ids, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Record(state, out.size(), points * 2 * spec.pairs());
}

BENCHMARK(BM_ExactSingleThread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MultiAxisFluxGrid)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MultiAxisQwen2VlBatch)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ExactSingleThreadPlanOnce)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ExactAllCores)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExactAllCoresPlanOnce)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LibmDoubleFreqOnce)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LibmDoublePowPerElement)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Memset)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExactSingleThreadPlanOnceAvx2Only)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ExactDtypeAvx2Only)
    ->ArgNames({"dtype"})
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_GridCold)
    ->ArgNames({"dtype", "rational"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_PlainCold)
    ->ArgNames({"dtype"})
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ExactDtype)
    ->ArgNames({"dtype", "layout", "freq"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Collects values/s of every repetition per benchmark.
// Records every repetition (the ratios need the spread) but prints only the
// aggregates; run without --benchmark_*_aggregates_only, which would hide
// the repetitions from this reporter too. No colour codes unless stdout is
// a terminal (the report is pasted into BENCHMARKS.md).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter()
      : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> aggregates;
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate) aggregates.push_back(run);
    }
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const auto it = run.counters.find("Mval/s");
      if (it != run.counters.end()) {
        const double wall = it->second.value * 1e6;
        Results(0)[run.benchmark_name()].push_back(wall);
        if (run.cpu_accumulated_time > 0) {
          Results(1)[run.benchmark_name()].push_back(
              wall * run.real_accumulated_time / run.cpu_accumulated_time);
        }
      }
    }
    ConsoleReporter::ReportRuns(aggregates.empty() ? runs : aggregates);
  }
};

// Median and relative half-spread of a benchmark's repetitions; {0, 0} if
// it did not run. The spread is half the width of a distribution-free ~95%
// confidence interval of the median, over the median: the order statistics
// x(k), x(n+1-k) with the largest k such that P(Binomial(n, 1/2) < k) <=
// 2.5%. Up to 8 repetitions that is the whole range; with 9 it drops the
// fastest and the slowest, so one preempted repetition does not set the
// band (bench/report.sh runs 15, interleaved: x(4)..x(12)).
struct Measure {
  double median = 0;
  double spread = 0;
};

Measure Get(const std::string& name, int clock = 0) {
  auto it = Results(clock).find(name + "/real_time");
  if (it == Results(clock).end() || it->second.empty()) return {};
  std::vector<double> v = it->second;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  const auto [lo, hi] = bench::MedianCi(v);
  return {med, (hi - lo) / 2 / med};
}

// Noise band of a ratio a/b: the two half-spreads in quadrature, at least 5%
// (one repetition tells nothing about the spread; the machine is shared).
constexpr double kMinNoise = 0.05;

// Targets MISSED so far (the exit status).
int g_missed = 0;

// "met" / "within noise" / "MISSED" for ratio `r` with its noise band
// against a lower bound (`at_least`) or an upper bound: IntervalVerdict, the
// rule of every benchmark, on r * (1 -+ noise).
const char* Verdict(double r, double noise, double target, bool at_least) {
  if (r == 0) return "not run";
  const char* verdict =
      bench::IntervalVerdict({r * (1 - noise), r * (1 + noise)}, target,
                             /*higher_is_better=*/at_least);
  if (bench::Missed(verdict)) ++g_missed;
  return verdict;
}

void PrintRatio(const char* what, Measure a, Measure b, double target,
                bool at_least, double scale = 1) {
  const double r = b.median > 0 ? a.median / b.median * scale : 0;
  // Relative uncertainties of two independent medians add in quadrature.
  const double noise = std::max(kMinNoise, std::hypot(a.spread, b.spread));
  std::printf("%s = %.3g (noise +-%.0f%%; target %s %.3g): %s\n", what, r,
              noise * 100, at_least ? ">=" : "<=", target,
              Verdict(r, noise, target, at_least));
}

void PrintRatios() {
  const double gb = double(kBytes) / (double(kD) * kMaxLen) * 1e-9;
  const Measure one = Get("BM_ExactSingleThread");
  const Measure all = Get("BM_ExactAllCores");
  const Measure one_plan = Get("BM_ExactSingleThreadPlanOnce");
  const Measure all_plan = Get("BM_ExactAllCoresPlanOnce");
  const Measure avx2 = Get("BM_ExactSingleThreadPlanOnceAvx2Only");
  const Measure libm = Get("BM_LibmDoubleFreqOnce");
  const Measure libm_pow = Get("BM_LibmDoublePowPerElement");
  const Measure mem = Get("BM_Memset");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) {
      load[0] = load[1] = load[2] = 0;
    }
    std::fclose(f);
  }
  std::printf(
      "\nSIMD target that ran: %s (best this CPU supports: %s); load "
      "average now %.2f %.2f %.2f\n",
      SimdKernelTargetName(), SimdBestTargetName(), load[0], load[1], load[2]);
  std::printf(
      "float32 d=%u max_len=%u (%zu bytes), GB/s (medians): exact 1 thread "
      "%.2f (plan once %.2f; AVX2 only %.2f), exact %u threads %.2f (plan "
      "once %.2f), libm (frequencies once) %.3f, libm (pow per element) "
      "%.3f, memset %.2f\n",
      kD, kMaxLen, kBytes, one.median * gb, one_plan.median * gb,
      avx2.median * gb, cores, all.median * gb, all_plan.median * gb,
      libm.median * gb, libm_pow.median * gb, mem.median * gb);
  PrintRatio("exact 1 thread / libm (frequencies once)", one, libm, 5, true);
  PrintRatio("exact 1 thread plan once / libm (frequencies once)", one_plan,
             libm, 5, true);
  PrintRatio("exact per core GB/s", one, Measure{1 / gb, 0}, 3, true);
  PrintRatio("memset / exact all cores", mem, all, 4, false);
  PrintRatio("memset / exact all cores, plan once", mem, all_plan, 4, false);
  // Multi-axis RoPE, cold (plan inside), distinct sin/cos values/s against
  // the cold plain float32 table (issue 24 item 7: at least 0.5x, as the
  // grid tables below), and, for reference, against the table kernel.
  for (const char* name :
       {"BM_MultiAxisFluxGrid", "BM_MultiAxisQwen2VlBatch"}) {
    const Measure m = Get(name);
    if (m.median <= 0) continue;
    PrintRatio(
        (std::string(name + 3) + " cold / plain float32 table cold (values/s)")
            .c_str(),
        m, Get("BM_PlainCold/dtype:0"), 0.5, true);
    if (one_plan.median > 0) {
      std::printf("  (%s / the float32 table kernel, plan once: %.3g)\n",
                  name + 3, m.median / one_plan.median);
    }
  }
  if (avx2.median > 0) {
    PrintRatio("float32 plan once: dispatched target / AVX2 only", one_plan,
               avx2, 1, true);
  }
  // Grid tables, cold, against the cold plain table of the same values, per
  // dtype (issue 24 item 7: at least 0.5x).
  {
    static const char* const kNames[] = {"float32", "float64", "float16",
                                         "bfloat16"};
    for (int dt = 0; dt < 4; ++dt) {
      char plain[64];
      std::snprintf(plain, sizeof plain, "BM_PlainCold/dtype:%d", dt);
      for (int rational = 0; rational < 2; ++rational) {
        char grid[64], what[160];
        std::snprintf(grid, sizeof grid, "BM_GridCold/dtype:%d/rational:%d", dt,
                      rational);
        std::snprintf(what, sizeof what,
                      "grid table cold / plain table cold, %s, 64x64x768 %s "
                      "positions (values/s)",
                      kNames[dt], rational ? "rational" : "integer");
        PrintRatio(what, Get(grid), Get(plain), 0.5, true);
      }
    }
  }
  // Per dtype, values/s against float32 of the same layout and frequency.
  static const char* const kDtypeNames[] = {"float32", "float64", "float16",
                                            "bfloat16"};
  static const char* const kLayoutNames[] = {"interleaved", "concat_sin_cos",
                                             "concat_cos_sin"};
  static const char* const kFreqNames[] = {"paper", "t2t"};
  for (int clock = 0; clock < 2; ++clock) {
    const char* clock_name =
        clock == 0 ? "wall-clock time"
                   : "CPU time of the benchmark thread (less affected by "
                     "preemption on a shared machine)";
    auto dtype_run = [clock](int dt, int layout, int freq) {
      char name[96];
      std::snprintf(name, sizeof(name),
                    "BM_ExactDtype/dtype:%d/layout:%d/freq:%d", dt, layout,
                    freq);
      return Get(name, clock);
    };
    std::printf("\nOne thread, plan once, d=%u max_len=%u, Mvalues/s by %s:\n",
                kD, kMaxLen, clock_name);
    std::printf("%-15s %-6s %10s %10s %10s %10s\n", "layout", "freq",
                kDtypeNames[0], kDtypeNames[1], kDtypeNames[2], kDtypeNames[3]);
    for (int layout = 0; layout < 3; ++layout) {
      for (int freq = 0; freq < 2; ++freq) {
        std::printf("%-15s %-6s", kLayoutNames[layout], kFreqNames[freq]);
        for (int dt = 0; dt < 4; ++dt) {
          std::printf(" %10.1f", dtype_run(dt, layout, freq).median * 1e-6);
        }
        std::printf("\n");
      }
    }
    if (std::string(SimdBestTargetName()) != "AVX2") {
      for (int dt = 0; dt < 4; ++dt) {
        char what[160], name[64];
        std::snprintf(what, sizeof(what),
                      "[%s] %s interleaved paper: %s / AVX2 only values/s",
                      clock == 0 ? "wall" : "cpu", kDtypeNames[dt],
                      SimdBestTargetName());
        std::snprintf(name, sizeof(name), "BM_ExactDtypeAvx2Only/dtype:%d", dt);
        PrintRatio(what, dtype_run(dt, 0, 0), Get(name, clock), 1, true);
      }
    }
    for (int dt = 1; dt < 4; ++dt) {
      const double target = dt == 1 ? 0.25 : 0.5;
      for (int layout = 0; layout < 3; ++layout) {
        for (int freq = 0; freq < 2; ++freq) {
          char what[160];
          std::snprintf(what, sizeof(what), "[%s] %s / float32 values/s, %s %s",
                        clock == 0 ? "wall" : "cpu", kDtypeNames[dt],
                        kLayoutNames[layout], kFreqNames[freq]);
          PrintRatio(what, dtype_run(dt, layout, freq),
                     dtype_run(0, layout, freq), target, true);
        }
      }
    }
  }
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  // Nine repetitions by default: the ratios need a noise band, and from 9
  // the median's interval leaves out the fastest and the slowest (below 6 it
  // is the range, and covers the median with less than 95%).
  std::vector<char*> args(argv, argv + argc);
  bool has_reps = false;
  for (int i = 1; i < argc; ++i) {
    has_reps |= std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
  }
  static char reps[] = "--benchmark_repetitions=9";
  if (!has_reps) args.push_back(reps);
  argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  posenc::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  posenc::PrintRatios();
  if (posenc::g_missed > 0) {
    std::fprintf(stderr, "encoding_bench: %d target(s) MISSED\n",
                 posenc::g_missed);
    return 1;
  }
  return 0;
}
