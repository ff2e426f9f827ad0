// Every seed of fuzz/corpus/<target>/ through the fuzz harness
// (fuzz/service_harness.h), in its fast mode (one long-lived server for
// all), and the named seeds and every 8th merged one also in its fresh mode
// (a posenc server and TCP connection per seed), which must agree; each answer
// checked as the fuzzers check it (status, shapes, the routing key, sampled
// values bit for bit against MPFR, both calls alike, the server idle
// afterwards). The corpus holds the hand-written seeds (fuzz/make_corpus.sh),
// every finding of the fuzzers (named in make_corpus.sh) and what the
// campaigns merged (fuzz/long.sh), so each is a regression test here, in
// every build (release, asan), not only under libFuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "fuzz/service_harness.h"

namespace posenc::fuzz {
namespace {}  // namespace

// Names the method in test output instead of its bytes.
void PrintTo(FuzzMethod method, std::ostream* os) {
  *os << FuzzMethodName(method);
}

namespace {

// A campaign's merged input is named by its SHA-1 (fuzz/long.sh); a
// hand-written seed or a finding has a name.
bool IsMergedInput(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return name.size() == 40 &&
         name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CorpusReplayTest : public ::testing::TestWithParam<FuzzMethod> {};

TEST_P(CorpusReplayTest, EverySeedPasses) {
  const std::filesystem::path dir =
      std::filesystem::path(POSENC_FUZZ_CORPUS_DIR) /
      FuzzMethodName(GetParam());
  std::vector<std::filesystem::path> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) seeds.push_back(entry.path());
  }
  std::sort(seeds.begin(), seeds.end());
  ASSERT_FALSE(seeds.empty()) << dir;
  // Each seed in the fuzzers' long-lived server and in-process channel (its
  // cache warm with the earlier seeds). The named seeds, and every 8th
  // merged one, first in the reproducer's fresh server and TCP connection,
  // whose first call's status code must be the same: the fresh mode runs
  // ~50 seeds a second under ASan, so the whole merged corpus in it would
  // take minutes of every build (fuzz/agree.sh compares the modes over a
  // campaign's inputs).
  size_t merged = 0, fresh_runs = 0;
  for (const std::filesystem::path& seed : seeds) {
    const std::string bytes = ReadFile(seed);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const bool also_fresh = !IsMergedInput(seed) || merged++ % 8 == 0;
    grpc::StatusCode fresh = grpc::StatusCode::OK;
    if (also_fresh) {
      SetHarnessMode(HarnessMode::kFresh);
      EXPECT_EQ(RunInput(GetParam(), data, bytes.size()), "") << seed;
      fresh = LastCode();
      ++fresh_runs;
    }
    SetHarnessMode(HarnessMode::kFast);
    EXPECT_EQ(RunInput(GetParam(), data, bytes.size()), "") << seed;
    if (also_fresh) {
      EXPECT_EQ(LastCode(), fresh) << seed << ": fast mode vs fresh mode";
    }
  }
  EXPECT_EQ(RestartServer(), "");
  std::printf("%s: %zu seeds (%zu also fresh); %s\n",
              FuzzMethodName(GetParam()), seeds.size(), fresh_runs,
              CountersLine().c_str());
}

INSTANTIATE_TEST_SUITE_P(Methods, CorpusReplayTest,
                         ::testing::Values(FuzzMethod::kGetTable,
                                           FuzzMethod::kStreamRows,
                                           FuzzMethod::kStreamBatches,
                                           FuzzMethod::kGetRows,
                                           FuzzMethod::kEncode),
                         [](const ::testing::TestParamInfo<FuzzMethod>& info) {
                           return std::string(FuzzMethodName(info.param));
                         });

}  // namespace
}  // namespace posenc::fuzz
