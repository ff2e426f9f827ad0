// The long sampled check (ctest label numerics_long, not in the default CI
// run): millions of random values over the whole supported range.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "core/plan/encoding.h"
#include "tests/numerics/check_util.h"

namespace posenc {
namespace {

// A random spec of the sampled families, drawing d, base, frequency, dtype
// and layout from `rng` in that order.
TableSpec RandomSpec(std::mt19937_64& rng) {
  constexpr double kBases[] = {500.0, 1e4, 1e6, 500.5, 2.0, 123456.789};
  constexpr uint32_t kDs[] = {4, 30, 512, 4096, 8192, 65536};
  TableSpec spec;
  spec.d = kDs[rng() % 6];
  spec.base = kBases[rng() % 6];
  spec.frequency = (rng() & 1) ? Frequency::kPaper : Frequency::kT2T;
  spec.dtype = testing::kDTypes[rng() % 4];
  spec.layout = testing::kPlainLayouts[rng() % 3];
  return spec;
}

TEST(LongRandomSamples, MillionsOfValuesEveryDtype_ZeroMismatchedBits) {
  std::mt19937_64 rng(12345);
  testing::CheckStats stats;
  std::uniform_int_distribution<uint32_t> pos_dist(0, 1u << 24);
  while (stats.values < 3000000) {
    const TableSpec spec = RandomSpec(rng);
    testing::ReferenceFamily ref(spec);
    std::vector<uint32_t> positions(64);
    for (auto& p : positions) p = pos_dist(rng);
    std::vector<std::byte> rows(positions.size() * spec.row_bytes());
    ComputePositions(spec, positions, rows.data());
    std::uniform_int_distribution<uint32_t> pair_dist(0, spec.d / 2 - 1);
    std::vector<uint32_t> pairs(32);
    for (auto& i : pairs) i = pair_dist(rng);
    for (size_t r = 0; r < positions.size(); ++r) {
      testing::CheckRowPairs(ref, spec, positions[r],
                             rows.data() + r * spec.row_bytes(), pairs, stats);
    }
  }
  testing::ReportChecked(stats);
}

// The range path (angle addition from anchor rows, ComputeRows; float32,
// float16 and bfloat16, float64 per row): random ranges of 16..200 rows
// anywhere up to 2^24, sampled pairs, every dtype.
TEST(LongRandomSamples, RangesAngleAdditionEveryDtype_ZeroMismatchedBits) {
  std::mt19937_64 rng(54321);
  testing::CheckStats stats;
  while (stats.values < 1000000) {
    const TableSpec spec = RandomSpec(rng);
    testing::ReferenceFamily ref(spec);
    const EncodingPlan plan(spec);
    const uint32_t count = 16 + static_cast<uint32_t>(rng() % 185);
    const uint32_t first =
        static_cast<uint32_t>(rng() % ((1u << 24) + 2 - count));
    std::vector<std::byte> rows(size_t{count} * spec.row_bytes());
    ComputeRows(plan, first, count, rows.data());
    std::uniform_int_distribution<uint32_t> pair_dist(0, spec.d / 2 - 1);
    std::vector<uint32_t> pairs(16);
    for (auto& i : pairs) i = pair_dist(rng);
    for (uint32_t r = 0; r < count; ++r) {
      testing::CheckRowPairs(ref, spec, first + r,
                             rows.data() + size_t{r} * spec.row_bytes(), pairs,
                             stats);
    }
  }
  testing::ReportChecked(stats);
}

}  // namespace
}  // namespace posenc
