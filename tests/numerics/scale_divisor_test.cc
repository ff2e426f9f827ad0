// EncodingSpec::scale_divisor (angle x * scale * f_i / scale_divisor,
// the exact rational positions of grid tables) against the independent MPFR
// reference (tests/numerics/real_reference.h): every layout x dtype, both
// schemes, divisors from 3 to 2^32 - 1, whole quarter turns that only a
// divisor makes whole, and a fresh seed every run (printed; POSENC_SEED
// replays it).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "tests/common/encoding_specs.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/real_reference.h"

namespace posenc {
namespace {

using ::posenc::testing::CheckStats;
using ::posenc::testing::RealColumnOf;
using ::posenc::testing::RealElementBits;
using ::posenc::testing::RealReferenceBits;

using ::posenc::testing::kDTypes;
constexpr auto& kLayouts = ::posenc::testing::kPlainLayouts;

// Computes the rows of one-coordinate points `xs` and checks every sin/cos
// value against the reference.
void CheckAll(const EncodingSpec& spec, const std::vector<double>& xs,
              CheckStats& stats) {
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  ASSERT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
  ASSERT_TRUE(plan->ValidatePositions(xs, 1 << 20).ok())
      << plan->ValidatePositions(xs, 1 << 20) << " " << spec.DebugString();
  std::vector<std::byte> out(xs.size() * spec.row_bytes());
  plan->ComputeRows(xs, out.data());
  for (size_t p = 0; p < xs.size(); ++p) {
    const std::byte* row = out.data() + p * spec.row_bytes();
    for (uint32_t i = 0; i < spec.half(); ++i) {
      for (bool is_sin : {true, false}) {
        const uint64_t want = RealReferenceBits(spec, i, xs[p], is_sin);
        const uint64_t got =
            RealElementBits(spec, row, RealColumnOf(spec, 0, i, is_sin));
        ++stats.values;
        if (want != got && ++stats.mismatches <= 10) {
          ADD_FAILURE() << spec.DebugString() << " x=" << xs[p] << " i=" << i
                        << (is_sin ? " sin" : " cos") << std::hex << " want=0x"
                        << want << " got=0x" << got;
        }
      }
    }
  }
}

TEST(ScaleDivisorTest, GridPositions_EveryLayoutAndDtypeMatchesMpfr) {
  // diffusers' k * base_size / (n * interpolation_scale) as x = k *
  // base_size over n * interpolation_scale: 16 / 24, 64 / 48, CogVideoX's
  // k / 1.875 = 8k / 15, and a large prime divisor.
  CheckStats stats;
  struct Case {
    uint32_t dim, numerator, divisor;
  };
  for (const Case& c : {Case{64, 16, 24}, Case{384, 64, 48}, Case{96, 8, 15},
                        Case{32, 1, 4294967291u}}) {
    for (DType dtype : kDTypes) {
      for (Layout layout : kLayouts) {
        EncodingSpec spec;
        spec.dim = c.dim;
        spec.dtype = dtype;
        spec.layout = layout;
        spec.scale_divisor = c.divisor;
        std::vector<double> xs;
        for (double k : {0.0, 1.0, 2.0, 7.0, 23.0, 100.0, 4095.0}) {
          xs.push_back(k * c.numerator);
        }
        CheckAll(spec, xs, stats);
      }
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(ScaleDivisorTest, PowerOfTwoDivisor_SameBitsAsDividedPosition) {
  // x / 2^k is exact in double: the divisor must not change a single bit.
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      EncodingSpec divided;
      divided.dim = 128;
      divided.dtype = dtype;
      divided.layout = layout;
      divided.scale_divisor = 8;
      EncodingSpec plain = divided;
      plain.scale_divisor = 1;
      const std::vector<double> xs = {1, 3, 8, 1001, 65535};
      std::vector<double> ys;
      for (double x : xs) ys.push_back(x / 8);
      absl::StatusOr<RealEncodingPlan> a =
          RealEncodingPlan::Create(divided, {});
      absl::StatusOr<RealEncodingPlan> b = RealEncodingPlan::Create(plain, {});
      ASSERT_TRUE(a.ok() && b.ok());
      std::vector<std::byte> ra(xs.size() * divided.row_bytes());
      std::vector<std::byte> rb(ra.size());
      a->ComputeRows(xs, ra.data());
      b->ComputeRows(ys, rb.data());
      EXPECT_EQ(ra, rb) << divided.DebugString();
    }
  }
}

TEST(ScaleDivisorTest, OctavesWholeOnlyAfterDividing_ExactZerosAndOnes) {
  // 2 pi 2^e x / 3 is a multiple of pi / 2 exactly when 3 divides
  // x 2^(e + 2): x = 3, 6, 1.5 (e >= 0) give exact 0 / +-1, x = 1 does not.
  CheckStats stats;
  EncodingSpec spec = ::posenc::testing::OctavesSpec(6, -1, 4);
  spec.scale_divisor = 3;
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      spec.dtype = dtype;
      spec.layout = layout;
      CheckAll(spec, {3, 6, 1.5, -0.75, 1, 9, 0.375}, stats);
    }
  }
  spec.dtype = DType::kFloat32;
  // x = 3, e = 0: angle 2 pi, sin exactly +0; x = 1: sin(2 pi / 3) != 0.
  EXPECT_EQ(RealReferenceBits(spec, 1, 3, /*is_sin=*/true), 0u);
  EXPECT_NE(RealReferenceBits(spec, 1, 1, /*is_sin=*/true), 0u);
  ::posenc::testing::ReportChecked(stats);
}

TEST(ScaleDivisorTest, FreshRandomSamples_MatchMpfr) {
  std::mt19937_64 rng = ::posenc::testing::SeededRng("scale_divisor");
  std::uniform_real_distribution<double> u(0, 1);
  CheckStats stats;
  for (int n = 0; n < 48; ++n) {
    EncodingSpec spec;
    spec.dtype = kDTypes[rng() % 4];
    spec.layout = kLayouts[rng() % 3];
    spec.dim = 2 * (1 + rng() % 200);
    if (rng() % 3 == 0) spec.max_period = 1 + u(rng) * 1e5;
    if (rng() % 4 == 0) spec.scale = std::exp2(u(rng) * 8 - 4);
    switch (rng() % 3) {
      case 0:
        spec.scale_divisor = 1 + rng() % 100;
        break;
      case 1:
        spec.scale_divisor = 1 + rng() % 100000;
        break;
      default:
        spec.scale_divisor = static_cast<uint32_t>(1 + rng() % 0xFFFFFFFFu);
    }
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    ASSERT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
    const double limit = plan->max_abs_position();
    std::vector<double> xs;
    for (int k = 0; k < 5; ++k) {
      // Integer numerators (a grid's (first + k) * p) and any real.
      double x = (rng() & 1) ? std::floor(u(rng) * std::min(limit, 0x1p40))
                             : u(rng) * limit;
      if (x > limit) x = limit;
      xs.push_back(x);
    }
    CheckAll(spec, xs, stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(ScaleDivisorTest, Zero_InvalidArgumentNamingTheField) {
  EncodingSpec spec;
  spec.dim = 8;
  spec.scale_divisor = 0;
  const absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(spec, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("spec.scale_divisor"),
            std::string::npos)
      << plan.status();
}

TEST(ScaleDivisorTest, LargeDivisor_LimitGrowsWithIt) {
  // F_0 = 1 / q: the largest position is about 2^24 q.
  EncodingSpec spec;
  spec.dim = 16;
  spec.scale_divisor = 1000;
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_NEAR(plan->max_abs_position(), 0x1p24 * 1000, 1e-3);
  EXPECT_LE(plan->max_abs_position() / 1000, 0x1p24);
}

}  // namespace
}  // namespace posenc
