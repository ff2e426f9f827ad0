// Shared helpers of the numerics tests: comparing computed rows with the
// MPFR reference and reporting how many values were checked.
#ifndef POSENC_TESTS_NUMERICS_CHECK_UTIL_H_
#define POSENC_TESTS_NUMERICS_CHECK_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "tests/common/table_specs.h"
#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {

// The seed of a test's fresh random samples: POSENC_SEED when set (to
// replay a run), else a new one each run (the test prints it).
inline uint64_t FreshSeed() {
  if (const char* s = std::getenv("POSENC_SEED"); s != nullptr && *s) {
    return std::strtoull(s, nullptr, 10);
  }
  return static_cast<uint64_t>(
             std::chrono::system_clock::now().time_since_epoch().count()) ^
         (uint64_t{std::random_device{}()} << 32);
}

// A generator seeded with FreshSeed(), the seed printed first as
// "[numerics] <what>: POSENC_SEED=<seed>" so that a failing run replays.
inline std::mt19937_64 SeededRng(const char* what) {
  const uint64_t seed = FreshSeed();
  std::printf("[numerics] %s: POSENC_SEED=%llu\n", what,
              static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

// Every dtype, and the layouts of a plain table (each value once), that
// the numerics tests sweep.
inline constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64,
                                    DType::kFloat16, DType::kBFloat16};
inline constexpr Layout kPlainLayouts[] = {
    Layout::kInterleaved, Layout::kConcatSinCos, Layout::kConcatCosSin};

// A plain table spec in the argument order of the numerics tests.
inline TableSpec MakeSpec(uint32_t d, double base, DType dtype, Layout layout,
                          Frequency frequency, uint32_t max_len = 1) {
  return PlainSpec(d, max_len, base, dtype, layout, frequency);
}

// RealEncodingPlan::Create refuses `spec`: INVALID_ARGUMENT naming `field`.
inline void ExpectInvalidEncoding(const EncodingSpec& spec,
                                  const std::string& field) {
  const absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(spec, {});
  ASSERT_FALSE(plan.ok()) << spec.DebugString();
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find(field), std::string::npos)
      << plan.status();
}

struct CheckStats {
  uint64_t values = 0;
  uint64_t mismatches = 0;
};

// Checks pairs `pairs` of the row of position `pos` stored at `row`.
inline void CheckRowPairs(ReferenceFamily& ref, const TableSpec& spec,
                          uint32_t pos, const std::byte* row,
                          const std::vector<uint32_t>& pairs,
                          CheckStats& stats) {
  for (uint32_t i : pairs) {
    for (bool is_sin : {true, false}) {
      const uint64_t want = ref.Bits(i, pos, is_sin, spec.dtype);
      const uint64_t got = ElementBits(spec, row, ColumnOf(spec, i, is_sin));
      ++stats.values;
      if (want != got) {
        if (++stats.mismatches <= 10) {
          ADD_FAILURE() << spec.DebugString() << " pos=" << pos << " i=" << i
                        << (is_sin ? " sin" : " cos") << " want=0x" << std::hex
                        << want << " got=0x" << got;
        }
      }
    }
  }
}

inline void ReportChecked(const CheckStats& stats) {
  ::testing::Test::RecordProperty("values_checked",
                                  std::to_string(stats.values));
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf(
      "[numerics] %s.%s: %" PRIu64 " values checked, %" PRIu64 " mismatched\n",
      info->test_suite_name(), info->name(), stats.values, stats.mismatches);
  EXPECT_EQ(stats.mismatches, 0u);
}

// For comparisons with something other than MPFR (core's own per-row path,
// the compiler's conversions): recorded as values_compared_not_mpfr, never
// as values_checked (docs/numerics.md counts only MPFR comparisons).
inline void ReportComparedNotMpfr(const CheckStats& stats, const char* with) {
  ::testing::Test::RecordProperty("values_compared_not_mpfr",
                                  std::to_string(stats.values));
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[numerics] %s.%s: %" PRIu64
              " values compared with %s (not "
              "MPFR), %" PRIu64 " mismatched\n",
              info->test_suite_name(), info->name(), stats.values, with,
              stats.mismatches);
  EXPECT_EQ(stats.mismatches, 0u);
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_NUMERICS_CHECK_UTIL_H_
