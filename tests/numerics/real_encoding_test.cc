// Encodings of real-valued points (core/plan/real_encoding_plan.h) against the
// independent MPFR reference (tests/numerics/real_reference.h): every
// scheme x layout x dtype, fractional, negative, tiny and largest positions,
// values near zero crossings and whole quarter turns, with a fresh seed on
// every run (printed; POSENC_SEED replays it). Plus the validation rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/plan/encoding.h"
#include "core/plan/real_encoding_plan.h"
#include "tests/common/encoding_specs.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/real_reference.h"

namespace posenc {
namespace {

using ::posenc::testing::CheckStats;
using ::posenc::testing::ExpectInvalidEncoding;
using ::posenc::testing::FluxTimestepSpec;
using ::posenc::testing::NerfSpec;
using ::posenc::testing::OctavesSpec;
using ::posenc::testing::RealColumnOf;
using ::posenc::testing::RealElementBits;
using ::posenc::testing::RealReferenceBits;

using ::posenc::testing::kDTypes;
constexpr auto& kLayouts = ::posenc::testing::kPlainLayouts;

RealEncodingPlan MakePlan(const EncodingSpec& spec) {
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  EXPECT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
  return *std::move(plan);
}

// Computes the rows of `positions` and checks every sin/cos value against
// the reference, the pad column and the included inputs.
void CheckAll(const EncodingSpec& spec, const std::vector<double>& positions,
              CheckStats& stats) {
  const RealEncodingPlan plan = MakePlan(spec);
  ASSERT_TRUE(plan.ValidatePositions(positions, 1 << 20).ok())
      << plan.ValidatePositions(positions, 1 << 20) << spec.DebugString();
  const size_t points = positions.size() / spec.coordinates;
  std::vector<std::byte> out(points * spec.row_bytes());
  plan.ComputeRows(positions, out.data());
  for (size_t p = 0; p < points; ++p) {
    const std::byte* row = out.data() + p * spec.row_bytes();
    for (uint32_t c = 0; c < spec.coordinates; ++c) {
      const double x = positions[p * spec.coordinates + c];
      for (uint32_t i = 0; i < spec.half(); ++i) {
        for (bool is_sin : {true, false}) {
          const uint64_t want = RealReferenceBits(spec, i, x, is_sin);
          const uint64_t got =
              RealElementBits(spec, row, RealColumnOf(spec, c, i, is_sin));
          ++stats.values;
          if (want != got && ++stats.mismatches <= 10) {
            ADD_FAILURE() << spec.DebugString() << " x=" << x << " c=" << c
                          << " i=" << i << (is_sin ? " sin" : " cos")
                          << std::hex << " want=0x" << want << " got=0x" << got;
          }
        }
      }
    }
    size_t col = 2 * spec.pairs();
    if (spec.pad_odd_dim) {
      EXPECT_EQ(RealElementBits(spec, row, col), 0u) << "pad column";
      ++col;
    }
    if (spec.include_input) {
      for (uint32_t c = 0; c < spec.coordinates; ++c, ++col) {
        mpfr_t v;
        mpfr_init2(v, 64);
        mpfr_set_d(v, positions[p * spec.coordinates + c], MPFR_RNDN);
        EXPECT_EQ(RealElementBits(spec, row, col),
                  ::posenc::testing::RoundMpfrToBits(v, spec.dtype))
            << "input " << c;
        mpfr_clear(v);
      }
    }
  }
}

TEST(RealEncodingTest, WorkedExample_MatchesThePaper) {
  // d = 4, pos = 2: (0.9093, -0.4161, 0.0200, 0.9998).
  EncodingSpec spec;
  spec.dim = 4;
  const RealEncodingPlan plan = MakePlan(spec);
  std::vector<std::byte> row(spec.row_bytes());
  const double x = 2.0;
  plan.ComputeRow(&x, row.data());
  float v[4];
  std::memcpy(v, row.data(), sizeof v);
  EXPECT_NEAR(v[0], 0.9093, 1e-4);
  EXPECT_NEAR(v[1], -0.4161, 1e-4);
  EXPECT_NEAR(v[2], 0.0200, 1e-4);
  EXPECT_NEAR(v[3], 0.9998, 1e-4);
}

TEST(RealEncodingTest, IntegerPositions_SameBitsAsTables) {
  // shift 0 is the paper's table, shift 1 tensor2tensor's: an integer point
  // must get the table's row, bit for bit.
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      for (int t2t = 0; t2t < 2; ++t2t) {
        TableSpec table;
        table.d = 320;
        table.max_len = 2000;
        table.dtype = dtype;
        table.layout = layout;
        table.frequency = t2t ? Frequency::kT2T : Frequency::kPaper;
        EncodingSpec spec;
        spec.dim = 320;
        spec.dtype = dtype;
        spec.layout = layout;
        spec.shift = t2t;
        const RealEncodingPlan plan = MakePlan(spec);
        const std::vector<uint32_t> pos = {0, 1, 2, 999, 1000, 1999};
        std::vector<std::byte> want(pos.size() * table.row_bytes());
        ComputePositions(table, pos, want.data());
        const std::vector<double> xs(pos.begin(), pos.end());
        std::vector<std::byte> got(want.size());
        plan.ComputeRows(xs, got.data());
        EXPECT_EQ(want, got) << spec.DebugString();
      }
    }
  }
}

// Library-shaped specs: diffusers (flip, shift 0/1, scale), GLIDE, FLUX
// (time_factor 1000), nerfstudio (octaves, 3 coordinates, include_input).
std::vector<EncodingSpec> LibrarySpecs() {
  std::vector<EncodingSpec> specs;
  EncodingSpec s;
  s.dim = 320;  // SD 1.x UNet: flip_sin_to_cos, downscale_freq_shift 0
  s.layout = Layout::kConcatCosSin;
  specs.push_back(s);
  s.dim = 256;  // diffusers' defaults: [sin | cos], shift 1
  s.layout = Layout::kConcatSinCos;
  s.shift = 1;
  specs.push_back(s);
  s.dim = 257;  // an odd embedding_dim with its zero column
  s.pad_odd_dim = true;
  s.shift = 0;
  specs.push_back(s);
  s = FluxTimestepSpec();  // FLUX timestep_embedding: t * 1000, [cos | sin]
  specs.push_back(s);
  s = NerfSpec(3, 10, 0, 8, true);  // nerfstudio positions
  specs.push_back(s);
  s.num_frequencies = 4;  // nerfstudio directions: integer exponents 0..3
  s.max_freq_exp = 3;
  specs.push_back(s);
  return specs;
}

TEST(RealEncodingTest, LibrarySpecs_EveryDtypeMatchesMpfr) {
  CheckStats stats;
  // 999.5 twice in a row: a repeated point's row is copied, not recomputed.
  const std::vector<double> timesteps = {
      0, 1, 999, 999.5, 999.5, 0.25, 1e-3, -1.5, 500.123456789, 0x1p-64};
  for (EncodingSpec spec : LibrarySpecs()) {
    for (DType dtype : kDTypes) {
      spec.dtype = dtype;
      std::vector<double> xs;
      for (double t : timesteps) {
        for (uint32_t c = 0; c < spec.coordinates; ++c) {
          xs.push_back(spec.coordinates > 1 && std::fabs(t) >= 1e-3
                           ? t / 1000 - 0.3 * c
                           : t);
        }
      }
      CheckAll(spec, xs, stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(RealEncodingTest, WholeQuarterTurns_ExactZerosAndOnes) {
  // nerfstudio with integer exponents: x * 2 pi * 2^e is a multiple of
  // pi / 2 for these x, so every value is exactly 0 or +-1 (and +0, never
  // a tiny value or -0).
  CheckStats stats;
  EncodingSpec spec = OctavesSpec(10, -2, 7);
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      spec.dtype = dtype;
      spec.layout = layout;
      CheckAll(spec, {0.5, 0.25, 1, -0.75, 3, 0.125, -2.5}, stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(RealEncodingTest, NearlyIntegerOctaveExponent_TinyValuesKeepTheirSign) {
  // Found by fuzz_encode: e_1 = 2^-637.6 (not an integer) makes 0.5 * 2 pi
  // 2^e_1 = pi (1 + 6.4e-193): sin is -2.9e-192, not the zero of a whole
  // quarter turn, so it rounds to -0 (and +0 for e_1 < 0); the reference
  // took anything within 2^-280 of its angle for an exact +0.
  CheckStats stats;
  EncodingSpec spec = OctavesSpec(2, 0, 0);
  for (double e : {1.3202428078732969e-192, -1.3202428078732969e-192, 0x1p-60,
                   -0x1p-1074}) {
    spec.min_freq_exp = std::min(0.0, e);
    spec.max_freq_exp = std::max(0.0, e);
    for (DType dtype : kDTypes) {
      spec.dtype = dtype;
      CheckAll(spec, {0.5, -0.5, 0.25, 1.5}, stats);
    }
  }
  spec.dtype = DType::kFloat32;
  spec.min_freq_exp = 0;
  spec.max_freq_exp = 1.3202428078732969e-192;
  EXPECT_EQ(RealReferenceBits(spec, 1, 0.5, /*is_sin=*/true), 0x80000000u);
  EXPECT_EQ(RealReferenceBits(spec, 0, 0.5, /*is_sin=*/true), 0u);  // pi: +0
  ::posenc::testing::ReportChecked(stats);
}

TEST(RealEncodingTest, NearZeroCrossings_MatchMpfr) {
  // x = RN(m pi / f_i): sin(x f_i) is tiny, where the fast path is risky.
  CheckStats stats;
  EncodingSpec spec;
  spec.dim = 64;
  for (DType dtype : kDTypes) {
    spec.dtype = dtype;
    std::vector<double> xs;
    for (uint32_t i = 0; i < 32; i += 5) {
      const double f = std::pow(10000.0, -static_cast<double>(i) / 32);
      for (int m : {1, 2, 7, 1000}) {
        if (m * M_PI / f < 0x1p23) xs.push_back(m * M_PI / f);
      }
    }
    CheckAll(spec, xs, stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

EncodingSpec RandomSpec(std::mt19937_64& rng) {
  EncodingSpec s;
  s.dtype = kDTypes[rng() % 4];
  s.layout = kLayouts[rng() % 3];
  std::uniform_real_distribution<double> u(0, 1);
  if (rng() % 3 == 0) {
    s.scheme = FrequencyScheme::kOctaves;
    s.num_frequencies = 1 + rng() % 24;
    s.min_freq_exp = (rng() & 1) ? std::floor(u(rng) * 8 - 4) : u(rng) * 8 - 4;
    s.max_freq_exp = s.min_freq_exp + ((rng() & 1) ? rng() % 12 : u(rng) * 12);
    s.coordinates = 1 + rng() % 3;
    s.include_input = rng() & 1;
  } else {
    s.dim = 2 * (1 + rng() % 300);
    if (rng() % 4 == 0) {
      s.dim += 1;
      s.pad_odd_dim = true;
    }
    s.max_period = (rng() % 3 == 0) ? 1 + u(rng) * 1e6 : 10000;
    const double half = s.dim / 2;
    s.shift = (rng() & 1) ? static_cast<double>(rng() % 2)
                          : (u(rng) * (half + 2) - 2) * 0.99;
    if (!(s.shift < half)) s.shift = 0;
  }
  if (rng() % 3 == 0) s.scale = (rng() & 1) ? 1000 : std::exp2(u(rng) * 8 - 4);
  return s;
}

TEST(RealEncodingTest, FreshRandomSamples_MatchMpfr) {
  std::mt19937_64 rng = ::posenc::testing::SeededRng("real encodings");
  CheckStats stats;
  std::uniform_real_distribution<double> u(0, 1);
  for (int n = 0; n < 60; ++n) {
    const EncodingSpec spec = RandomSpec(rng);
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    if (!plan.ok()) continue;  // a frequency out of range: refused, fine
    const double limit = plan->max_abs_position();
    std::vector<double> xs;
    for (uint32_t k = 0; k < 6 * spec.coordinates; ++k) {
      double x;
      switch (rng() % 5) {
        case 0:  // a timestep with a fraction
          x = std::round(u(rng) * 2000) / 2 + (rng() % 2) * u(rng);
          break;
        case 1:  // anywhere up to the limit
          x = u(rng) * limit;
          break;
        case 2:  // tiny
          x = std::exp2(-64 + u(rng) * 60);
          break;
        case 3:  // the largest allowed
          x = limit;
          break;
        default:  // flow-matching t in [0, 1]
          x = u(rng);
      }
      if (x > limit) x = limit;
      if (rng() % 4 == 0) x = -x;
      xs.push_back(x);
    }
    CheckAll(spec, xs, stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(RealEncodingTest, BadSpecs_InvalidArgumentNamingTheField) {
  EncodingSpec s;
  ExpectInvalidEncoding(s, "spec.dim");  // unset
  s.dim = 7;
  ExpectInvalidEncoding(s, "spec.dim");  // odd without the pad
  s.dim = 8;
  s.pad_odd_dim = true;
  ExpectInvalidEncoding(s, "spec.pad_odd_dim");  // pad on an even dim
  s = {};
  s.dim = 8;
  s.layout = Layout::kRotateHalf;
  ExpectInvalidEncoding(s, "spec.layout");
  s = {};
  s.dim = 8;
  s.shift = 4;  // half - shift = 0
  ExpectInvalidEncoding(s, "spec.shift");
  s.shift = 3.9999;  // f_3 = 10000^(-3/0.0001): far below 2^-800
  ExpectInvalidEncoding(s, "spec.shift");
  s.shift = 0;
  s.max_period = 1;
  ExpectInvalidEncoding(s, "spec.max_period");
  s.max_period = 10000;
  s.scale = std::nan("");
  ExpectInvalidEncoding(s, "spec.scale");
  s.scale = 1;
  s.num_frequencies = 3;
  ExpectInvalidEncoding(s, "spec.num_frequencies");  // an octave field
  s = {};
  s.scheme = FrequencyScheme::kOctaves;
  ExpectInvalidEncoding(s, "spec.num_frequencies");  // required
  s.num_frequencies = 4;
  s.min_freq_exp = 3;
  s.max_freq_exp = 1;
  ExpectInvalidEncoding(s, "spec.min_freq_exp");
  s.min_freq_exp = 0;
  s.max_freq_exp = 30;  // 2 pi 2^30 > 2^24
  ExpectInvalidEncoding(s, "spec.max_freq_exp");
  s.max_freq_exp = 3;
  s.dim = 5;  // octaves: dim must be unset or the width (8)
  ExpectInvalidEncoding(s, "spec.dim");
  s.dim = 8;
  EXPECT_TRUE(RealEncodingPlan::Create(s, {}).ok());
  s.coordinates = 40000;  // 40000 * 4 * 2 channels > 65536
  ExpectInvalidEncoding(s, "spec.num_frequencies");
}

TEST(RealEncodingTest, BadPositions_NameTheEntry) {
  EncodingSpec s;
  s.dim = 8;
  s.scale = 1000;
  const RealEncodingPlan plan = MakePlan(s);
  EXPECT_EQ(plan.ValidatePositions({}, 10).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<double> many(11, 1.0);
  EXPECT_EQ(plan.ValidatePositions(many, 10).code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<double> nan = {1, 2, std::nan("")};
  const absl::Status a = plan.ValidatePositions(nan, 10);
  EXPECT_EQ(a.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(a.message().find("positions[2]"), std::string::npos) << a;
  // |x| * 1000 <= 2^24: the largest double allowed is the last one whose
  // product with 1000 is at most 2^24, exactly.
  const double m = plan.max_abs_position();
  const double above = std::nextafter(m, 1e300);
  EXPECT_LE(static_cast<long double>(m) * 1000, 0x1p24L);
  EXPECT_GT(static_cast<long double>(above) * 1000, 0x1p24L);
  EXPECT_TRUE(plan.ValidatePositions({m, -m}, 10).ok());
  const absl::Status b = plan.ValidatePositions({1, above}, 10);
  EXPECT_EQ(b.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(b.message().find("positions[1]"), std::string::npos) << b;
  EXPECT_EQ(plan.ValidatePositions({0x1p-65}, 10).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(plan.ValidatePositions({0.0, -0.0, 0x1p-64}, 10).ok());
  s.coordinates = 3;
  const RealEncodingPlan three = MakePlan(s);
  EXPECT_EQ(three.ValidatePositions({1, 2, 3, 4}, 10).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RealEncodingTest, IncludeInput_Float16OverflowsToInfinity) {
  EncodingSpec s = OctavesSpec(1, -20, -20);
  s.include_input = true;
  s.dtype = DType::kFloat16;
  CheckStats stats;
  CheckAll(s, {65504, 65519.99, 65520, -70000, 1.0 / 3}, stats);
  EXPECT_EQ(stats.mismatches, 0u);
}

}  // namespace
}  // namespace posenc
