// A fresh slice of random samples against MPFR on every run (ctest label
// numerics, so every CI run): a new seed each time, from the clock unless
// POSENC_SEED is set, printed so that a failure can be replayed:
//
//   POSENC_SEED=<seed> build/tests/numerics/numerics_fresh_samples_test
//
// About 30 s of work on one busy core: random d (2..65536), bases
// (near 1 to 10^7, sometimes 10^300 with MPFR-only columns), both frequency
// conventions, every dtype and layout; random rows (ComputePositions) and
// random ranges (ComputeRows: angle addition for float32/float16/bfloat16)
// anywhere up to 2^24, random pairs of each row.
#include <gtest/gtest.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/plan/encoding.h"
#include "tests/numerics/check_util.h"

namespace posenc {
namespace {

// Values compared per run (~22 s of CPU on this 2-core machine, ~30 s
// wall when loaded; a tenth under the sanitizers, which are ~10x slower);
// POSENC_FRESH_VALUES overrides.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kDefaultValues = 100000;
#else
constexpr uint64_t kDefaultValues = 1000000;
#endif

uint64_t SeedFromEnvOrClock() {
  if (const char* s = std::getenv("POSENC_SEED"); s != nullptr && *s) {
    return std::strtoull(s, nullptr, 10);
  }
  const uint64_t t = static_cast<uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count());
  return t ^ (uint64_t{std::random_device{}()} << 32);
}

TableSpec RandomSpec(std::mt19937_64& rng) {
  constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64,
                               DType::kFloat16, DType::kBFloat16};
  constexpr Layout kLayouts[] = {Layout::kInterleaved, Layout::kConcatSinCos,
                                 Layout::kConcatCosSin};
  TableSpec spec;
  spec.frequency = (rng() & 1) ? Frequency::kPaper : Frequency::kT2T;
  // d even, log-uniform in [2, 65536] (>= 4 for kT2T).
  std::uniform_real_distribution<double> log_d(1.0, 16.0);
  uint32_t d = 2 * static_cast<uint32_t>(std::exp2(log_d(rng)) / 2);
  if (spec.frequency == Frequency::kT2T && d < 4) d = 4;
  spec.d = d;
  if (rng() % 20 == 0) {
    spec.base = 1e300;
  } else {
    std::uniform_real_distribution<double> log_base(-13.0, 23.3);
    spec.base = 1.0 + std::exp2(log_base(rng));  // ~1.0001 .. ~1e7
  }
  spec.dtype = kDTypes[rng() % 4];
  spec.layout = kLayouts[rng() % 3];
  spec.max_len = 1;
  return spec;
}

TEST(FreshRandomSamples, NewSeedEveryRun_ZeroMismatchedBits) {
  const uint64_t seed = SeedFromEnvOrClock();
  uint64_t target = kDefaultValues;
  if (const char* s = std::getenv("POSENC_FRESH_VALUES"); s != nullptr && *s) {
    target = std::strtoull(s, nullptr, 10);
  }
  std::printf("[numerics] FreshRandomSamples seed %" PRIu64
              " (replay: POSENC_SEED=%" PRIu64
              " build/tests/numerics/numerics_fresh_samples_test)\n",
              seed, seed);
  std::fflush(stdout);
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed);
  testing::CheckStats stats;
  const auto start = std::chrono::steady_clock::now();
  uint64_t families = 0;
  while (stats.values < target && stats.mismatches == 0) {
    const TableSpec spec = RandomSpec(rng);
    ++families;
    SCOPED_TRACE(spec.DebugString() + " seed " + std::to_string(seed));
    testing::ReferenceFamily ref(spec);
    const EncodingPlan plan(spec);
    std::uniform_int_distribution<uint32_t> pair_dist(0, spec.d / 2 - 1);
    std::vector<uint32_t> pairs(std::min<uint32_t>(16, spec.d / 2));
    for (auto& i : pairs) i = pair_dist(rng);
    std::vector<uint32_t> positions;
    std::vector<std::byte> rows;
    if (rng() & 1) {
      // Random rows anywhere.
      std::uniform_int_distribution<uint32_t> pos_dist(0, 1u << 24);
      positions.resize(32);
      for (auto& p : positions) p = pos_dist(rng);
      rows.resize(positions.size() * spec.row_bytes());
      ComputePositions(plan, positions, rows.data());
    } else {
      // A random range (16..200 rows: several anchors of the range path).
      const uint32_t count = 16 + static_cast<uint32_t>(rng() % 185);
      const uint32_t first =
          static_cast<uint32_t>(rng() % ((1u << 24) + 2 - count));
      rows.resize(size_t{count} * spec.row_bytes());
      ComputeRows(plan, first, count, rows.data());
      for (uint32_t r = 0; r < count; ++r) positions.push_back(first + r);
    }
    for (size_t r = 0; r < positions.size(); ++r) {
      testing::CheckRowPairs(ref, spec, positions[r],
                             rows.data() + r * spec.row_bytes(), pairs, stats);
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("[numerics] FreshRandomSamples: %" PRIu64
              " table families, %.1f s, seed %" PRIu64 "\n",
              families, secs, seed);
  testing::ReportChecked(stats);
}

}  // namespace
}  // namespace posenc
