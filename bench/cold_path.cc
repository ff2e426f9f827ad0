// cold_path: what a user waits for on a cold call, against a running
// posenc_server, measured end to end by the C++ client (issue 13).
//
// Each round takes a table family nobody asked for before (a fresh base):
//   - GetTable rounds, fresh memory: cold (computed and sent), then the same
//     table hot three times (sent from the cache; their median is the
//     round's hot time); the ratio cold / hot per round, median over
//     rounds. The cache never fills (checked: rounds x table bytes must fit
//     the server's free cache), so every cold table is written into newly
//     mapped pages;
//   - GetTable rounds, steady state (with --steady_target: a server whose
//     cache holds a few tables, e.g. --cache_bytes=50331648): the cache is
//     first filled (one table asked for three times, then tables asked for
//     once until the next would not fit), then one unmeasured cold call;
//     each round then a cold table of a new family (refused by the full
//     cache's admission rule and computed for the call alone, into memory
//     an earlier answer freed: the server's warm reserve) and a hot call of
//     the resident table asked for three times (three hot calls, their
//     median the round's hot time). GetStats deltas show which
//     path the cold calls took;
//   - then StreamBatches rounds over a whole table: cold, then hot; MB/s of
//     each and their ratio, median over rounds. (Nine 128 MiB tables pass a
//     512 MiB cache: the later ones are streamed without being cached.)
// Each ratio is reported as the median over rounds with a distribution-free
// 95% confidence interval of that median (see MedianCi): "met" only when the
// whole interval meets the target, "within noise" when it contains it
// (IntervalVerdict, the rule of every benchmark). Exits 1 when a target is
// MISSED.
// Usage: cold_path --target=127.0.0.1:50051 [--rounds=25] [--d=512]
//        [--max_len=8192] [--stream_max_len=65536]
//        [--steady_target=127.0.0.1:50052]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "bench/median_ci.h"
#include "client/posenc_client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "posenc_server address");
ABSL_FLAG(int, rounds, 25, "rounds (each a new table family)");
ABSL_FLAG(uint32_t, d, 512, "d of every table");
ABSL_FLAG(uint32_t, max_len, 8192, "max_len of the GetTable case");
ABSL_FLAG(uint32_t, stream_max_len, 65536, "max_len of the stream case");
ABSL_FLAG(std::string, steady_target, "",
          "posenc_server with a cache of a few tables, for the steady-state "
          "GetTable case (empty: not run)");

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

using posenc::bench::IntervalVerdict;  // bench/median_ci.h
using posenc::bench::MedianCi;

// Targets MISSED so far (the exit status).
int g_missed = 0;

std::pair<double, double> Spread(const std::vector<double>& v) {
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Hot calls per GetTable round; the round's hot time is their median.
constexpr int kHotCalls = 3;

// "median (95% CI lo..hi; rounds min..max; target <op> t: verdict)".
std::string Summary(const std::vector<double>& ratios, double target,
                    bool at_most) {
  const auto ci = MedianCi(ratios);
  const auto [lo, hi] = Spread(ratios);
  const char* verdict =
      IntervalVerdict(ci, target, /*higher_is_better=*/!at_most);
  if (posenc::bench::Missed(verdict)) ++g_missed;
  char out[200];
  std::snprintf(out, sizeof(out),
                "%.2f (95%% CI of the median %.2f..%.2f; rounds %.2f..%.2f; "
                "target %s %.1f: %s)",
                Median(ratios), ci.first, ci.second, lo, hi,
                at_most ? "<=" : ">=", target, verdict);
  return out;
}

// The float32 table of --d with `max_len` rows and `base` (a new base per
// round is a new table family).
posenc::TableSpec FlagSpec(uint32_t max_len,
                           double base = posenc::kDefaultBase) {
  posenc::TableSpec spec;
  spec.d = absl::GetFlag(FLAGS_d);
  spec.max_len = max_len;
  spec.base = base;
  return spec;
}

struct SteadyResult {
  std::vector<double> cold, hot, ratio;
  uint64_t budget_bytes = 0;
  // GetStats deltas over the measured rounds.
  uint64_t admissions = 0, rejections = 0, reserve_reuses = 0;
};

// The steady-state GetTable case (see the top of the file); an error message
// on failure.
absl::StatusOr<SteadyResult> RunSteady(const std::string& target, int rounds,
                                       double stamp) {
  posenc::PosencClient::Options options;
  options.target = target;
  options.timeout = absl::Seconds(120);
  posenc::PosencClient client(options);
  auto spec_at = [&](double base) {
    return FlagSpec(absl::GetFlag(FLAGS_max_len), base + stamp);
  };
  auto get = [&](const posenc::TableSpec& spec) -> absl::StatusOr<double> {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
    if (!table.ok()) return table.status();
    return Seconds(start);
  };
  absl::StatusOr<posenc::v1::GetStatsResponse> stats = client.GetStats();
  if (!stats.ok()) return stats.status();
  SteadyResult result;
  result.budget_bytes = stats->cache().budget_bytes();
  const uint64_t table_bytes = spec_at(0).table_bytes();
  const uint64_t fits = result.budget_bytes / table_bytes;
  if (fits < 1 || stats->cache().resident_bytes() != 0) {
    return absl::FailedPreconditionError(
        "--steady_target needs a fresh server whose --cache_bytes holds at "
        "least one table");
  }
  // Fill: the hot table (asked for three times, so the admission rule keeps
  // it), then tables asked for once until the cache is full.
  const posenc::TableSpec hot = spec_at(61000.5);
  for (int i = 0; i < 3; ++i) {
    if (absl::StatusOr<double> t = get(hot); !t.ok()) return t.status();
  }
  for (uint64_t i = 1; i < fits; ++i) {
    if (absl::StatusOr<double> t = get(spec_at(62000.5 + i)); !t.ok()) {
      return t.status();
    }
  }
  // One unmeasured cold call: its answer, once sent, is the first buffer the
  // reserve can hand out.
  if (absl::StatusOr<double> t = get(spec_at(63000.5)); !t.ok()) {
    return t.status();
  }
  stats = client.GetStats();
  if (!stats.ok()) return stats.status();
  const posenc::v1::GetStatsResponse before = *stats;
  for (int r = 0; r < rounds; ++r) {
    absl::StatusOr<double> cold = get(spec_at(64000.5 + r));
    if (!cold.ok()) return cold.status();
    std::vector<double> hits;
    for (int i = 0; i < kHotCalls; ++i) {
      absl::StatusOr<double> hit = get(hot);
      if (!hit.ok()) return hit.status();
      hits.push_back(*hit);
    }
    result.cold.push_back(*cold);
    result.hot.push_back(Median(hits));
    result.ratio.push_back(*cold / Median(hits));
  }
  stats = client.GetStats();
  if (!stats.ok()) return stats.status();
  result.admissions = stats->cache().admissions() - before.cache().admissions();
  result.rejections = stats->cache().rejections() - before.cache().rejections();
  result.reserve_reuses = stats->compute().warm_reserve_reuses() -
                          before.compute().warm_reserve_reuses();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As posenc_server and the CLI do: no Abseil deadlock detector per lock.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  posenc::PosencClient::Options options;
  options.target = absl::GetFlag(FLAGS_target);
  options.timeout = absl::Seconds(120);
  posenc::PosencClient client(options);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  std::vector<double> table_cold, table_hot, table_ratio;
  std::vector<double> stream_cold, stream_hot, stream_ratio;
  // The two cases run one after the other, so the streams' 128 MiB tables
  // do not crowd the GetTable case's tables out of the cache.
  const double stamp =
      1e-3 *
      (std::chrono::steady_clock::now().time_since_epoch().count() % 1000);
  // Fresh memory only while every round's table fits the cache beside the
  // others (nothing evicted, no freed buffer to reuse).
  {
    absl::StatusOr<posenc::v1::GetStatsResponse> stats = client.GetStats();
    if (!stats.ok()) {
      std::fprintf(stderr, "GetStats: %s\n", stats.status().ToString().c_str());
      return 1;
    }
    const posenc::TableSpec spec = FlagSpec(absl::GetFlag(FLAGS_max_len));
    const uint64_t need = uint64_t(rounds) * spec.table_bytes();
    const uint64_t budget = stats->cache().budget_bytes();
    const uint64_t free_bytes =
        budget - std::min(budget, stats->cache().resident_bytes());
    if (need > free_bytes) {
      std::fprintf(stderr,
                   "--rounds=%d tables of %llu bytes do not fit the cache of "
                   "--target (%llu of %llu bytes free): the fresh-memory case "
                   "would reuse evicted memory\n",
                   rounds, static_cast<unsigned long long>(spec.table_bytes()),
                   static_cast<unsigned long long>(free_bytes),
                   static_cast<unsigned long long>(budget));
      return 1;
    }
  }
  for (int r = 0; r < rounds; ++r) {
    const posenc::TableSpec spec =
        FlagSpec(absl::GetFlag(FLAGS_max_len), 31000.5 + r + stamp);
    // The cold call, then kHotCalls hot ones (their median is the round's
    // hot time: a single call swings with the VM's scheduling).
    std::vector<double> t;
    for (int pass = 0; pass < 1 + kHotCalls; ++pass) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
      t.push_back(Seconds(start));
      if (!table.ok()) {
        std::fprintf(stderr, "GetTable: %s\n",
                     table.status().ToString().c_str());
        return 1;
      }
    }
    const double hot = Median({t.begin() + 1, t.end()});
    table_cold.push_back(t[0]);
    table_hot.push_back(hot);
    table_ratio.push_back(t[0] / hot);
  }
  const std::string steady_target = absl::GetFlag(FLAGS_steady_target);
  absl::StatusOr<SteadyResult> steady =
      absl::FailedPreconditionError("not run (no --steady_target)");
  if (!steady_target.empty()) {
    steady = RunSteady(steady_target, rounds, stamp);
    if (!steady.ok()) {
      std::fprintf(stderr, "steady state: %s\n",
                   steady.status().ToString().c_str());
      return 1;
    }
  }
  for (int r = 0; r < rounds; ++r) {
    const posenc::TableSpec spec =
        FlagSpec(absl::GetFlag(FLAGS_stream_max_len), 41000.25 + r + stamp);
    double t[2];
    for (int pass = 0; pass < 2; ++pass) {
      const auto start = std::chrono::steady_clock::now();
      absl::Status s = client.StreamBatches(
          spec, 0, std::nullopt, 0,
          [](uint32_t, const posenc::Tensor&) { return absl::OkStatus(); });
      t[pass] = Seconds(start);
      if (!s.ok()) {
        std::fprintf(stderr, "StreamBatches: %s\n", s.ToString().c_str());
        return 1;
      }
    }
    const double mb = spec.table_bytes() / 1e6;
    stream_cold.push_back(mb / t[0]);
    stream_hot.push_back(mb / t[1]);
    stream_ratio.push_back(t[1] / t[0]);
  }
  const uint32_t d = absl::GetFlag(FLAGS_d);
  std::printf(
      "GetTable d=%u max_len=%u float32 (%.1f MiB), %d rounds, medians: cold "
      "%.1f ms, hot %.1f ms (median of %d calls per round), cold/hot %s\n",
      d, absl::GetFlag(FLAGS_max_len),
      absl::GetFlag(FLAGS_max_len) * d * 4 / 1048576.0, rounds,
      Median(table_cold) * 1e3, Median(table_hot) * 1e3, kHotCalls,
      Summary(table_ratio, 1.5, /*at_most=*/true).c_str());
  if (steady.ok()) {
    std::printf(
        "GetTable steady state (cache of %.0f MiB full, 1 warm-up call) d=%u "
        "max_len=%u float32, %d rounds, medians: cold %.1f ms, hot %.1f ms, "
        "cold/hot %s; cold calls: %llu admitted, %llu refused, %llu warm "
        "reserve reuses\n",
        steady->budget_bytes / 1048576.0, d, absl::GetFlag(FLAGS_max_len),
        rounds, Median(steady->cold) * 1e3, Median(steady->hot) * 1e3,
        Summary(steady->ratio, 1.5, /*at_most=*/true).c_str(),
        static_cast<unsigned long long>(steady->admissions),
        static_cast<unsigned long long>(steady->rejections),
        static_cast<unsigned long long>(steady->reserve_reuses));
  } else {
    std::printf("GetTable steady state, cache full: %s\n",
                std::string(steady.status().message()).c_str());
  }
  std::printf(
      "StreamBatches d=%u max_len=%u float32 (%.0f MiB), %d rounds, medians: "
      "cold %.0f MB/s, hot %.0f MB/s, cold/hot %s\n",
      d, absl::GetFlag(FLAGS_stream_max_len),
      absl::GetFlag(FLAGS_stream_max_len) * d * 4 / 1048576.0, rounds,
      Median(stream_cold), Median(stream_hot),
      Summary(stream_ratio, 0.8, /*at_most=*/false).c_str());
  if (g_missed > 0) {
    std::fprintf(stderr, "cold_path: %d target(s) MISSED\n", g_missed);
    return 1;
  }
  return 0;
}
