// multi_axis_cold: multi-axis RoPE Encode cold against the plain cold table
// of the same dtype, in values per second of thread CPU, measured side by
// side in one run (issue 24 item 7: at least 0.5x, every dtype).
//
// Cases, each cold (the plan built inside the timing, as every Encode call
// and every table miss builds it), one thread:
//   plain    the plain table d = 768, max_len = 4096, LAYOUT_CONCAT_SIN_COS
//            (EncodingPlan + ComputeRows, the range kernels), as
//            bench/encoding_bench's BM_PlainCold;
//   FLUX     FLUX.1's EmbedND (axes_dim [16, 56, 56], theta 1e4) rotation
//            matrices of a 64 x 64 latent, ids (0, row, col) as a grid
//            (RealEncodingPlan::Create + ComputeGridRows);
//   Qwen2-VL Qwen2-VL-7B's M-RoPE (head_dim 128, theta 1e6, mrope_section
//            [16, 24, 24], rotate_half) of a batch as get_rope_index numbers
//            it: 1024 text tokens (p, p, p), a 32 x 32 image (1024,
//            1024 + h, 1024 + w), 1024 more text tokens from 1056
//            (Create + ComputeRows);
//   Qwen3-VL the same batch with Qwen3-VL's interleaved sections
//            (mrope_section [24, 20, 20], mrope_interleaved).
// Values: the table's d per row; 2K distinct sin/cos values per point for
// the multi-axis kinds (their layouts repeat them), as encoding_bench
// counts them.
//
// Each round times every case of every dtype once, in a new random order
// (thread CPU time, CLOCK_THREAD_CPUTIME_ID), so a slow spell of the shared
// machine falls on all of them; a round's ratio is a kind's values/s over
// the plain table's of the same dtype in that round. The figure is the
// median of the rounds' ratios with its distribution-free 95% confidence
// interval (bench/median_ci.h), and the verdict IntervalVerdict, the rule
// of every benchmark: "met" when the whole interval is at or above the
// target, "within noise" when the target lies inside it, else "MISSED".
// Also printed, without a verdict: each kind against the plain float32
// table (the wording), and the medians' values/s.
//
// Usage: multi_axis_cold [--rounds=51] [--target_ratio=0.5] [--only=CASE]
// Exit status: 1 when a target is MISSED, else 0.
#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/median_ci.h"
#include "bench/multi_axis_batch.h"
#include "bench/run_conditions.h"
#include "core/plan/encoding_plan.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/position_grid.h"
#include "core/spec/table_spec.h"

ABSL_FLAG(int, rounds, 51, "samples of each case");
ABSL_FLAG(std::string, only, "",
          "run only the case of this name (e.g. \"Qwen2-VL batch float16\") "
          "--rounds times, for a profiler; prints its values/s, no ratios");
ABSL_FLAG(double, target_ratio, 0.5,
          "a kind's values/s over the plain table's (at least)");

namespace posenc {
using bench::LoadAverage;
using bench::Summarize;
using bench::Summary;
using bench::ThreadCpuNs;
namespace {

const DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                         DType::kBFloat16};

TableSpec PlainSpec(DType dtype) {
  TableSpec spec;
  spec.d = 768;
  spec.max_len = 4096;
  spec.dtype = dtype;
  spec.layout = Layout::kConcatSinCos;
  return spec;
}

EncodingSpec FluxSpec(DType dtype) {
  EncodingSpec spec;
  spec.axes_dim = {16, 56, 56};
  spec.coordinates = 3;
  spec.layout = Layout::kRotationMatrix;
  spec.dtype = dtype;
  return spec;
}

PositionGrid FluxGrid() {
  PositionGrid grid;
  grid.start = {0, 0, 0};
  grid.count = {1, 64, 64};
  return grid;
}

// Cases per dtype: plain, FLUX, Qwen2-VL, Qwen3-VL.
constexpr size_t kKinds = 4;

EncodingSpec Qwen3Spec(DType dtype) {
  EncodingSpec spec = bench::Qwen2VlSpec(dtype);
  spec.mrope_section = {24, 20, 20};
  spec.mrope_interleaved = true;
  return spec;
}

struct Case {
  Case(std::string n, double v, std::function<void()> r)
      : name(std::move(n)), values(v), run(std::move(r)) {}
  std::string name;
  double values;  // per call
  std::function<void()> run;
  std::vector<double> values_per_s;  // one per round
};

// The rounds' ratios a[r] / b[r].
std::vector<double> Ratios(const Case& a, const Case& b) {
  std::vector<double> r;
  for (size_t k = 0; k < a.values_per_s.size(); ++k) {
    r.push_back(a.values_per_s[k] / b.values_per_s[k]);
  }
  return r;
}

int Run() {
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  const double target = absl::GetFlag(FLAGS_target_ratio);
  std::printf(
      "multi_axis_cold: cold multi-axis RoPE Encode vs the cold plain table "
      "of the same dtype, one thread, thread CPU time; load average at start "
      "%s\n\n",
      LoadAverage().c_str());
  const std::vector<double> qwen_ids = bench::Qwen2VlBatchIds();
  const PositionGrid flux_grid = FluxGrid();
  // One output buffer, large enough for every case, touched before timing.
  size_t bytes = 0;
  for (DType dtype : kDTypes) {
    bytes =
        std::max({bytes, PlainSpec(dtype).table_bytes(),
                  size_t{4096} * FluxSpec(dtype).row_bytes(),
                  qwen_ids.size() / 3 * bench::Qwen2VlSpec(dtype).row_bytes()});
  }
  std::vector<std::byte> out(bytes, std::byte{1});

  // cases[kKinds * d + kind], kind 0 plain, 1 FLUX, 2 Qwen2-VL, 3 Qwen3-VL.
  std::vector<Case> cases;
  for (DType dtype : kDTypes) {
    const TableSpec plain = PlainSpec(dtype);
    cases.emplace_back(absl::StrCat("plain table ", DTypeName(dtype)),
                       double(plain.d) * plain.max_len, [plain, &out] {
                         const EncodingPlan plan(plain);
                         plan.ComputeRows(0, plain.max_len, out.data());
                       });
    const EncodingSpec flux = FluxSpec(dtype);
    cases.emplace_back(absl::StrCat("FLUX 64x64 ids ", DTypeName(dtype)),
                       4096.0 * 2 * flux.pairs(), [flux, &flux_grid, &out] {
                         absl::StatusOr<RealEncodingPlan> plan =
                             RealEncodingPlan::Create(flux, {});
                         if (!plan.ok()) std::abort();
                         plan->ComputeGridRows(flux_grid, out.data());
                       });
    const EncodingSpec qwen = bench::Qwen2VlSpec(dtype);
    cases.emplace_back(absl::StrCat("Qwen2-VL batch ", DTypeName(dtype)),
                       double(qwen_ids.size() / 3) * 2 * qwen.pairs(),
                       [qwen, &qwen_ids, &out] {
                         absl::StatusOr<RealEncodingPlan> plan =
                             RealEncodingPlan::Create(qwen, {});
                         if (!plan.ok()) std::abort();
                         plan->ComputeRows(qwen_ids, out.data());
                       });
    const EncodingSpec qwen3 = Qwen3Spec(dtype);
    cases.emplace_back(absl::StrCat("Qwen3-VL batch ", DTypeName(dtype)),
                       double(qwen_ids.size() / 3) * 2 * qwen3.pairs(),
                       [qwen3, &qwen_ids, &out] {
                         absl::StatusOr<RealEncodingPlan> plan =
                             RealEncodingPlan::Create(qwen3, {});
                         if (!plan.ok()) std::abort();
                         plan->ComputeRows(qwen_ids, out.data());
                       });
  }
  if (const std::string only = absl::GetFlag(FLAGS_only); !only.empty()) {
    for (Case& c : cases) {
      if (c.name != only) continue;
      for (int r = 0; r < rounds; ++r) {
        const double t0 = ThreadCpuNs();
        c.run();
        c.values_per_s.push_back(c.values / ((ThreadCpuNs() - t0) * 1e-9));
      }
      std::printf("%s: median %.1f Mvalues/s\n", c.name.c_str(),
                  Summarize(c.values_per_s).median / 1e6);
      return 0;
    }
    std::fprintf(stderr, "multi_axis_cold: no case named %s\n", only.c_str());
    return 1;
  }
  bench::RunInterleavedRounds(cases, rounds, [](Case& c, double ns) {
    c.values_per_s.push_back(c.values / (ns * 1e-9));
  });

  std::printf("%d rounds (each case once a round, in a new random order):\n",
              rounds);
  std::printf("  %-26s %12s %27s\n", "case", "Mvalues/s", "95% CI");
  for (const Case& c : cases) {
    const Summary s = Summarize(c.values_per_s);
    std::printf("  %-26s %12.1f %12.1f .. %-12.1f\n", c.name.c_str(),
                s.median / 1e6, s.lo / 1e6, s.hi / 1e6);
  }
  std::printf(
      "\nmedian of the rounds' ratios (values/s over the plain cold table's "
      "of the same dtype):\n");
  int missed = 0;
  for (size_t d = 0; d < std::size(kDTypes); ++d) {
    for (size_t kind = 1; kind < kKinds; ++kind) {
      const Case& c = cases[kKinds * d + kind];
      const Summary s = Summarize(Ratios(c, cases[kKinds * d]));
      const char* verdict = bench::IntervalVerdict({s.lo, s.hi}, target,
                                                   /*higher_is_better=*/true);
      if (bench::Missed(verdict)) ++missed;
      std::printf(
          "  %-26s / plain %-8s = %.3f (95%% CI %.3f .. %.3f; target >= "
          "%.2f): %s\n",
          c.name.c_str(), DTypeName(kDTypes[d]), s.median, s.lo, s.hi, target,
          verdict);
    }
  }
  std::printf(
      "\nfor reference, against the plain float32 table (no verdict):\n");
  for (size_t d = 1; d < std::size(kDTypes); ++d) {
    for (size_t kind = 1; kind < kKinds; ++kind) {
      const Case& c = cases[kKinds * d + kind];
      const Summary s = Summarize(Ratios(c, cases[0]));
      std::printf("  %-26s / plain float32  = %.3f (95%% CI %.3f .. %.3f)\n",
                  c.name.c_str(), s.median, s.lo, s.hi);
    }
  }
  std::printf("\nload average at end %s; targets MISSED: %d\n",
              LoadAverage().c_str(), missed);
  return missed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return posenc::Run();
}
