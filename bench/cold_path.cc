// cold_path: what a user waits for on a cold call, against a running
// posenc_server, measured end to end by the C++ client (issue 13).
//
// Each round takes a table family nobody asked for before (a fresh base):
//   - GetTable rounds: cold (computed and sent), then the same table hot
//     (sent from the cache); the ratio cold / hot per round, median over
//     rounds;
//   - then StreamBatches rounds over a whole table: cold, then hot; MB/s of
//     each and their ratio, median over rounds. (Nine 128 MiB tables pass a
//     512 MiB cache: the later ones are streamed without being cached.)
// Usage: cold_path --target=127.0.0.1:50051 [--rounds=9] [--d=512]
//        [--max_len=8192] [--stream_max_len=65536]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "client/posenc_client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "posenc_server address");
ABSL_FLAG(int, rounds, 9, "rounds (each a new table family)");
ABSL_FLAG(uint32_t, d, 512, "d of every table");
ABSL_FLAG(uint32_t, max_len, 8192, "max_len of the GetTable case");
ABSL_FLAG(uint32_t, stream_max_len, 65536, "max_len of the stream case");

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

// "met" when every round meets the target, "MISSED" when none does, and
// "within noise" when the target lies inside the spread of the rounds.
const char* Verdict(const std::vector<double>& ratios, double target,
                    bool at_most) {
  int meets = 0;
  for (double r : ratios) meets += at_most ? r <= target : r >= target;
  if (meets == static_cast<int>(ratios.size())) return "met";
  return meets == 0 ? "MISSED" : "within noise";
}

std::pair<double, double> Spread(const std::vector<double>& v) {
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
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
  for (int r = 0; r < rounds; ++r) {
    posenc::TableSpec spec;
    spec.d = absl::GetFlag(FLAGS_d);
    spec.max_len = absl::GetFlag(FLAGS_max_len);
    spec.base = 31000.5 + r + stamp;
    double t[2];
    for (int pass = 0; pass < 2; ++pass) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
      t[pass] = Seconds(start);
      if (!table.ok()) {
        std::fprintf(stderr, "GetTable: %s\n",
                     table.status().ToString().c_str());
        return 1;
      }
    }
    table_cold.push_back(t[0]);
    table_hot.push_back(t[1]);
    table_ratio.push_back(t[0] / t[1]);
  }
  for (int r = 0; r < rounds; ++r) {
    posenc::TableSpec spec;
    spec.d = absl::GetFlag(FLAGS_d);
    spec.max_len = absl::GetFlag(FLAGS_stream_max_len);
    spec.base = 41000.25 + r + stamp;
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
  const auto [tlo, thi] = Spread(table_ratio);
  std::printf(
      "GetTable d=%u max_len=%u float32 (%.1f MiB), %d rounds, medians: cold "
      "%.1f ms, hot %.1f ms, cold/hot %.2f (rounds %.2f..%.2f; target <= "
      "1.5: %s)\n",
      d, absl::GetFlag(FLAGS_max_len),
      absl::GetFlag(FLAGS_max_len) * d * 4 / 1048576.0, rounds,
      Median(table_cold) * 1e3, Median(table_hot) * 1e3, Median(table_ratio),
      tlo, thi, Verdict(table_ratio, 1.5, /*at_most=*/true));
  const auto [slo, shi] = Spread(stream_ratio);
  std::printf(
      "StreamBatches d=%u max_len=%u float32 (%.0f MiB), %d rounds, medians: "
      "cold %.0f MB/s, hot %.0f MB/s, cold/hot %.2f (rounds %.2f..%.2f; "
      "target >= 0.8: %s)\n",
      d, absl::GetFlag(FLAGS_stream_max_len),
      absl::GetFlag(FLAGS_stream_max_len) * d * 4 / 1048576.0, rounds,
      Median(stream_cold), Median(stream_hot), Median(stream_ratio), slo, shi,
      Verdict(stream_ratio, 0.8, /*at_most=*/false));
  return 0;
}
