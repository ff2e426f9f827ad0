// Every seed of fuzz/corpus/<target>/ through the fuzz harness
// (fuzz/service_harness.h), in both its modes (a fresh posenc server per
// seed, and one long-lived server for all), which must agree; each answer
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
  // Each seed in both modes: the reproducer's fresh server and TCP
  // connection, then the fuzzers' long-lived server and in-process channel
  // (its cache warm with the earlier seeds); the first call's status code
  // must be the same (fuzz/agree.sh does the same over a campaign's
  // inputs).
  for (const std::filesystem::path& seed : seeds) {
    const std::string bytes = ReadFile(seed);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    SetHarnessMode(HarnessMode::kFresh);
    EXPECT_EQ(RunInput(GetParam(), data, bytes.size()), "") << seed;
    const grpc::StatusCode fresh = LastCode();
    SetHarnessMode(HarnessMode::kFast);
    EXPECT_EQ(RunInput(GetParam(), data, bytes.size()), "") << seed;
    EXPECT_EQ(LastCode(), fresh) << seed << ": fast mode vs fresh mode";
  }
  EXPECT_EQ(RestartServer(), "");
  std::printf("%s: %zu seeds; %s\n", FuzzMethodName(GetParam()), seeds.size(),
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
