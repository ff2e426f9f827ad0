// scheme_cold_ratio: how fast each RoPE scheme's table arrives cold through
// GetTable, as a ratio to the plain table's values per second (issue 24,
// item 7: >= 0.5 in every dtype; YaRN and LongRoPE used to take a
// per-value path at 0.045 in bfloat16).
//
// Against a running posenc_server (--target; it must allow the largest
// table, 32768 x 256 float64 = 64 MiB: --max_message_bytes=134217728).
// Each round, for each dtype: the plain table (rotate_half, no scaling)
// and then every scheme (bench/rope_schemes.h), each with a base nobody
// asked for before, so each call computes its table (cold) and sends it
// (the order of the calls rotates from round to round);
// values/s = max_len x width / the call's wall time at the client. A
// round's ratio is the scheme's values/s over the plain table's of that
// round. Reported per dtype and scheme: the median ratio over rounds with
// its distribution-free 95% confidence interval (bench/median_ci.h) and
// the verdict against --target_ratio. Exits 1 when a verdict is MISSED.
//
// Usage: scheme_cold_ratio --target=127.0.0.1:50051 [--rounds=9]
//        [--d=128] [--max_len=32768] [--target_ratio=0.5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "bench/median_ci.h"
#include "bench/rope_schemes.h"
#include "client/posenc_client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "posenc server");
ABSL_FLAG(int, rounds, 9, "rounds (each: every dtype, plain + schemes)");
ABSL_FLAG(uint32_t, d, 128, "head dimension");
ABSL_FLAG(uint32_t, max_len, 32768, "table length");
ABSL_FLAG(double, target_ratio, 0.5, "scheme values/s over plain, at least");

namespace posenc {
namespace {

const DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                         DType::kBFloat16};

// Values per second of one cold GetTable; 0 on failure (printed).
double ColdValuesPerSecond(PosencClient& client, const TableSpec& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<Tensor> table = client.GetTable(spec);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (!table.ok()) {
    std::fprintf(stderr, "GetTable %s: %s\n", spec.DebugString().c_str(),
                 table.status().ToString().c_str());
    return 0;
  }
  return static_cast<double>(spec.max_len) * spec.width() / s;
}

int Run() {
  PosencClient::Options options;
  options.target = absl::GetFlag(FLAGS_target);
  options.timeout = absl::Seconds(120);
  PosencClient client(options);
  const uint32_t d = absl::GetFlag(FLAGS_d);
  const uint32_t max_len = absl::GetFlag(FLAGS_max_len);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  // Schemes 2.. of kSchemes are the RoPE ones; index 2 (rope-default,
  // rotate_half without scaling) is the plain table here.
  constexpr size_t kFirstRope = 2;
  const size_t schemes = std::size(bench_schemes::kSchemes);
  // ratios[dtype][scheme]
  std::vector<std::vector<std::vector<double>>> ratios(
      4, std::vector<std::vector<double>>(schemes));
  double fresh = 0;  // a base offset nobody asked for before
  for (int r = 0; r < rounds; ++r) {
    for (int t = 0; t < 4; ++t) {
      // The call order rotates from round to round, so no scheme is
      // always the first (or last) of a round.
      std::vector<double> vps(schemes, 0);
      for (size_t n = 0; n < schemes - kFirstRope; ++n) {
        const size_t k = kFirstRope + (n + r) % (schemes - kFirstRope);
        TableSpec spec = bench_schemes::kSchemes[k].make(d, max_len);
        spec.dtype = kDTypes[t];
        spec.base = 10000 + (fresh += 0.001);
        vps[k] = ColdValuesPerSecond(client, spec);
        if (vps[k] == 0) return 1;
      }
      for (size_t k = kFirstRope; k < schemes; ++k) {
        ratios[t][k].push_back(vps[k] / vps[kFirstRope]);
      }
    }
  }
  std::printf(
      "GetTable cold, d=%u (rotate_half, %u values a row), max_len=%u, %d "
      "rounds; ratio = scheme values/s over rope-default's (the plain "
      "table) in the same round; target >= %.2f\n\n",
      d, 2 * d, max_len, rounds, absl::GetFlag(FLAGS_target_ratio));
  std::printf("| dtype | scheme | median ratio | 95%% CI | verdict |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  bool missed = false;
  for (int t = 0; t < 4; ++t) {
    for (size_t k = kFirstRope + 1; k < schemes; ++k) {
      std::vector<double> v = ratios[t][k];
      const auto ci = bench::MedianCi(v);
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      const char* verdict = bench::IntervalVerdict(
          ci, absl::GetFlag(FLAGS_target_ratio), /*higher_is_better=*/true);
      missed = missed || bench::Missed(verdict);
      std::printf("| %s | %s | %.3f | %.3f-%.3f | %s |\n",
                  DTypeName(kDTypes[t]), bench_schemes::kSchemes[k].name,
                  v[v.size() / 2], ci.first, ci.second, verdict);
    }
  }
  return missed ? 1 : 0;
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return posenc::Run();
}
