// SlowPathBudget (core/plan/slow_path_budget.h): the MPFR work of one
// computation is bounded, refused with RESOURCE_EXHAUSTED (or
// DEADLINE_EXCEEDED) past it, and ordinary encodings stay far inside it with
// the same bytes as an unbounded computation.
#include "core/plan/slow_path_budget.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "core/plan/real_encoding_plan.h"
#include "core/spec/encoding_spec.h"

namespace posenc {
namespace {

TEST(SlowPathBudgetTest, Charge_SquaredBlocksOf128BitsUntilTheUnitsRunOut) {
  SlowPathBudget budget(1 + 4 + 16 + 64);
  EXPECT_TRUE(budget.Charge(128));
  EXPECT_TRUE(budget.Charge(256));
  EXPECT_TRUE(budget.Charge(512));
  EXPECT_EQ(budget.spent(), 21u);
  EXPECT_TRUE(budget.Charge(1024));
  EXPECT_EQ(budget.spent(), 85u);
  EXPECT_TRUE(budget.status().ok());
  EXPECT_FALSE(budget.Charge(128));
  EXPECT_EQ(budget.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(budget.status().message().find("85 units"), std::string::npos)
      << budget.status();
  // Refused once, refused for good (the computation stops).
  EXPECT_FALSE(budget.Charge(1));
  EXPECT_EQ(budget.spent(), 85u);
}

TEST(SlowPathBudgetTest, DeadlinePassed_DeadlineExceeded) {
  SlowPathBudget budget(1000, absl::Now() - absl::Seconds(1));
  EXPECT_FALSE(budget.Charge(128));
  EXPECT_EQ(budget.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(budget.spent(), 0u);
}

// The fuzz campaign's Encode finding (fuzz/README.md#campaigns; its seed is
// fuzz/corpus/encode/regression_octaves_near_quarter_turns): 32,768 octave
// frequencies 2 pi 2^e with every e within 1.3e-192 of 0, at x = 1.5, put
// every angle within ~1e-192 of 3 pi. Unbounded, each value took a Ziv loop
// to 1,024 bits: 5.9 s of a core for a 58-byte request.
TEST(SlowPathBudgetTest, OctavesNearQuarterTurns_RefusedWithinTheEncodeUnits) {
  EncodingSpec spec;
  spec.dtype = DType::kFloat16;
  spec.layout = Layout::kConcatSinCos;
  spec.scheme = FrequencyScheme::kOctaves;
  spec.scale = 1;
  spec.num_frequencies = 32768;
  spec.min_freq_exp = -1.3202428078732969e-192;
  spec.include_input = true;
  SpecLimits limits;
  limits.max_d = 1 << 17;
  absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(spec, limits);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<double> points = {0.50012207031227263, -3.3176763878166904,
                                      1.5};
  ASSERT_TRUE(plan->ValidatePositions(points, 16).ok());
  std::vector<std::byte> out(points.size() * plan->spec().row_bytes());
  SlowPathBudget budget(SlowPathBudget::kEncodeUnits);
  plan->ComputeRows(points, out.data(), &budget);
  EXPECT_EQ(budget.status().code(), absl::StatusCode::kResourceExhausted)
      << budget.status();
  EXPECT_LE(budget.spent(), SlowPathBudget::kEncodeUnits);
}

// Encodings as models use them, at random points: the fast paths decide
// (nearly) every value, so the budget spends a few units, and the bytes are
// those of an unbounded computation.
TEST(SlowPathBudgetTest,
     OrdinaryEncodings_FewUnitsAndTheBytesOfAnUnboundedCall) {
  std::mt19937_64 rng(36);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  struct Case {
    const char* name;
    EncodingSpec spec;
    double range;
  };
  std::vector<Case> cases;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    EncodingSpec timesteps;  // diffusers' timestep embedding
    timesteps.dim = 320;
    timesteps.dtype = dtype;
    timesteps.layout = Layout::kConcatCosSin;
    cases.push_back({"timesteps", timesteps, 1000});
    EncodingSpec nerf;  // nerfstudio's NeRFEncoding, 10 octaves
    nerf.dtype = dtype;
    nerf.scheme = FrequencyScheme::kOctaves;
    nerf.coordinates = 3;
    nerf.num_frequencies = 10;
    nerf.min_freq_exp = 0;
    nerf.max_freq_exp = 8;
    nerf.include_input = true;
    cases.push_back({"nerf", nerf, 1});
  }
  for (const Case& c : cases) {
    absl::StatusOr<RealEncodingPlan> plan =
        RealEncodingPlan::Create(c.spec, {});
    ASSERT_TRUE(plan.ok()) << c.name << ": " << plan.status();
    std::vector<double> points(256 * c.spec.coordinates);
    for (double& x : points) x = (2 * unit(rng) - 1) * c.range;
    const size_t bytes = 256 * plan->spec().row_bytes();
    std::vector<std::byte> bounded(bytes), unbounded(bytes);
    SlowPathBudget budget(SlowPathBudget::kEncodeUnits);
    plan->ComputeRows(points, bounded.data(), &budget);
    plan->ComputeRows(points, unbounded.data());
    EXPECT_TRUE(budget.status().ok()) << c.name << ": " << budget.status();
    EXPECT_LE(budget.spent(), 16u) << c.name;
    EXPECT_EQ(bounded, unbounded) << c.name;
    std::printf("%s dtype %d: %llu units\n", c.name,
                static_cast<int>(c.spec.dtype),
                static_cast<unsigned long long>(budget.spent()));
  }
}

}  // namespace
}  // namespace posenc
