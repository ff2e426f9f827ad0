// Bit-for-bit exactness of posenc tables against an independent MPFR
// reference (tests/numerics/mpfr_reference.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/rounding.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/numerics/sincos_double_double.h"
#include "core/numerics/sincos_fast.h"
#include "core/plan/encoding.h"
#include "core/plan/exact_sincos_mpfr.h"
#include "core/spec/exact_frequency.h"
#include "core/spec/rope.h"
#include "hwy/targets.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/mpfr_reference.h"

namespace posenc {
namespace {

using testing::CheckRowPairs;
using testing::CheckStats;
using testing::MakeSpec;
using testing::ReferenceFamily;
using testing::ReportChecked;

using ::posenc::testing::kDTypes;
constexpr auto& kLayouts = ::posenc::testing::kPlainLayouts;
constexpr Frequency kFrequencies[] = {Frequency::kPaper, Frequency::kT2T};

std::vector<uint32_t> AllPairs(uint32_t d) {
  std::vector<uint32_t> v(d / 2);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

TEST(WholeTables, SmallSpecsEveryDtypeLayoutFrequency_MatchMpfrBitForBit) {
  CheckStats stats;
  for (uint32_t d : {2u, 4u, 6u, 8u, 18u, 64u}) {
    for (double base : {10000.0, 500.5, 2.0, 1e6}) {
      for (Frequency freq : kFrequencies) {
        if (freq == Frequency::kT2T && d < 4) continue;
        ReferenceFamily ref(
            MakeSpec(d, base, DType::kFloat32, Layout::kInterleaved, freq));
        const uint32_t rows = d <= 8 ? 256 : 96;
        for (DType dtype : kDTypes) {
          for (Layout layout : kLayouts) {
            const TableSpec spec = MakeSpec(d, base, dtype, layout, freq, rows);
            std::vector<std::byte> table(spec.table_bytes());
            ComputeRows(spec, 0, rows, table.data());
            for (uint32_t pos = 0; pos < rows; ++pos) {
              CheckRowPairs(ref, spec, pos,
                            table.data() + pos * spec.row_bytes(), AllPairs(d),
                            stats);
            }
          }
        }
      }
    }
  }
  ReportChecked(stats);
}

TEST(RandomSamples, LargeDAndPositionsUpTo1e7_ZeroMismatchedBits) {
  std::mt19937_64 rng(20240611);
  CheckStats stats;
  for (uint32_t d : {8u, 62u, 512u, 1024u, 8192u}) {
    for (double base : {500.0, 1e4, 1e6, 731.25}) {
      for (Frequency freq : kFrequencies) {
        ReferenceFamily ref(
            MakeSpec(d, base, DType::kFloat32, Layout::kInterleaved, freq));
        for (DType dtype : kDTypes) {
          for (Layout layout : kLayouts) {
            const TableSpec spec = MakeSpec(d, base, dtype, layout, freq);
            std::vector<uint32_t> positions = {10000000u, 16777216u};
            std::uniform_int_distribution<uint32_t> pos_dist(1, 10000000);
            for (int k = 0; k < 4; ++k) positions.push_back(pos_dist(rng));
            std::vector<std::byte> rows(positions.size() * spec.row_bytes());
            ComputePositions(spec, positions, rows.data());
            std::uniform_int_distribution<uint32_t> pair_dist(0, d / 2 - 1);
            for (size_t r = 0; r < positions.size(); ++r) {
              std::vector<uint32_t> pairs = {0, d / 2 - 1};
              for (int k = 0; k < 8; ++k) pairs.push_back(pair_dist(rng));
              CheckRowPairs(ref, spec, positions[r],
                            rows.data() + r * spec.row_bytes(), pairs, stats);
            }
          }
        }
      }
    }
  }
  ReportChecked(stats);
}

// Bases above 2^900 send low-frequency columns straight to MPFR; bases close
// to 1 give frequencies close to 1.
TEST(ExtremeBases, HugeAndNearOneBases_MatchMpfrBitForBit) {
  CheckStats stats;
  for (double base : {1e300, 1.7e308, 1.0000001}) {
    for (Frequency freq : kFrequencies) {
      ReferenceFamily ref(
          MakeSpec(16, base, DType::kFloat32, Layout::kInterleaved, freq));
      for (DType dtype : kDTypes) {
        const TableSpec spec =
            MakeSpec(16, base, dtype, Layout::kConcatSinCos, freq);
        std::vector<uint32_t> positions;
        for (uint32_t p = 0; p < 24; ++p) positions.push_back(p);
        for (uint32_t p : {1000u, 99991u, 10000000u, 16777216u})
          positions.push_back(p);
        std::vector<std::byte> rows(positions.size() * spec.row_bytes());
        ComputePositions(spec, positions, rows.data());
        for (size_t r = 0; r < positions.size(); ++r) {
          CheckRowPairs(ref, spec, positions[r],
                        rows.data() + r * spec.row_bytes(), AllPairs(16),
                        stats);
        }
      }
    }
  }
  ReportChecked(stats);
}

TEST(WorkedExample, D4Base10000_MatchesPaperValues) {
  const TableSpec spec = MakeSpec(4, 10000, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper, 4);
  float rows[4][4];
  ComputeRows(spec, 0, 4, reinterpret_cast<std::byte*>(rows));
  const float want2[4] = {0.9093f, -0.4161f, 0.0200f, 0.9998f};
  const float want3[4] = {0.1411f, -0.9900f, 0.0300f, 0.9996f};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(rows[2][k], want2[k], 1e-4) << k;
    EXPECT_NEAR(rows[3][k], want3[k], 1e-4) << k;
  }
  EXPECT_EQ(rows[0][0], 0.0f);
  EXPECT_FALSE(std::signbit(rows[0][0]));
  EXPECT_EQ(rows[0][1], 1.0f);
  RecordProperty("values_compared_not_mpfr", "10");
  std::printf("[numerics] WorkedExample: 10 values checked\n");
}

// The obvious implementation (frequency and angle in double, libm sin, cast
// to float) is wrong in the last bit now and then; posenc is not.
TEST(NaiveLibmRegression, DoubleSinThenCast_IsNotExactButPosencIs) {
  const TableSpec spec = MakeSpec(512, 10000, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper);
  ReferenceFamily ref(spec);
  // Found by this test's search below and pinned here.
  constexpr uint32_t kPinnedPos = 9999999, kPinnedPair = 1;
  uint32_t found_pos = 0, found_pair = 0;
  bool found = false;
  std::vector<float> row(512);
  for (uint32_t pos = 9999999; pos > 9999000 && !found; --pos) {
    ComputeRows(spec, pos, 1, reinterpret_cast<std::byte*>(row.data()));
    for (uint32_t i = 0; i < 256 && !found; ++i) {
      const double f = std::pow(10000.0, -2.0 * i / 512);
      const float naive = static_cast<float>(std::sin(pos * f));
      if (naive != row[2 * i]) {
        found = true;
        found_pos = pos;
        found_pair = i;
        uint32_t want =
            static_cast<uint32_t>(ref.Bits(i, pos, true, DType::kFloat32));
        uint32_t got;
        std::memcpy(&got, &row[2 * i], 4);
        EXPECT_EQ(got, want) << "posenc must match MPFR where libm fails";
        std::printf(
            "[numerics] naive libm float32 wrong at d=512 base=1e4 "
            "pos=%u i=%u: naive=%.9g posenc=%.9g (%a)\n",
            pos, i, naive, row[2 * i], row[2 * i]);
      }
    }
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(found_pos, kPinnedPos);
  EXPECT_EQ(found_pair, kPinnedPair);
  RecordProperty("values_checked", "1");
}

TEST(ParallelAndPositions, SameBytesAsSerialRows) {
  for (DType dtype : kDTypes) {
    const TableSpec spec = MakeSpec(96, 10000, dtype, Layout::kInterleaved,
                                    Frequency::kPaper, 20000);
    std::vector<std::byte> serial(spec.table_bytes()), par(spec.table_bytes());
    ComputeRows(spec, 100, 20000, serial.data());
    ComputeRowsParallel(spec, 100, 20000, par.data(), 4);
    EXPECT_EQ(serial, par);
    std::vector<uint32_t> positions = {100, 20099, 5000};
    std::vector<std::byte> picked(3 * spec.row_bytes());
    ComputePositions(spec, positions, picked.data());
    for (size_t k = 0; k < positions.size(); ++k) {
      EXPECT_EQ(0, std::memcmp(
                       picked.data() + k * spec.row_bytes(),
                       serial.data() + (positions[k] - 100) * spec.row_bytes(),
                       spec.row_bytes()));
    }
  }
}

// CPUs without an FMA SIMD target take the scalar path: same bytes.
TEST(ScalarFallback, NoSimdTarget_SameBytesAsSimd) {
  std::printf("[numerics] SIMD target on this CPU: %s\n",
              SimdKernelTargetName());
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      const TableSpec spec =
          MakeSpec(70, 731.25, dtype, layout, Frequency::kT2T, 3000);
      std::vector<std::byte> simd(spec.table_bytes()), scalar(simd.size());
      ComputeRows(spec, 9990000, 3000, simd.data());
      hwy::SetSupportedTargetsForTest(HWY_SSE4);
      ComputeRows(spec, 9990000, 3000, scalar.data());
      hwy::SetSupportedTargetsForTest(0);
      EXPECT_EQ(simd, scalar) << spec.DebugString();
    }
  }
}

// Every SIMD target this CPU can run (AVX3 and AVX2 on an AVX-512 machine,
// where dispatch alone would test only AVX3) and the scalar path write the
// same bytes: every dtype and layout, RoPE layouts included, rows far from
// 0 (the anchor / angle-addition paths) and a partial vector (d=70).
TEST(SimdTargets, EveryTargetThisCpuRuns_SameBytesAsScalar) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  int simd_targets = 0;
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    std::printf("[numerics] target %s: kernels %s\n", hwy::TargetName(target),
                SimdKernelTargetName());
    simd_targets += std::string(SimdKernelTargetName()) != "scalar";
  }
  hwy::SetSupportedTargetsForTest(0);
  // The best target is a SIMD one wherever dispatch picks one.
  EXPECT_EQ(simd_targets > 0, std::string(SimdKernelTargetName()) != "scalar");
  constexpr Layout kAllLayouts[] = {Layout::kInterleaved, Layout::kConcatSinCos,
                                    Layout::kConcatCosSin, Layout::kRotateHalf,
                                    Layout::kInterleavedPairs};
  for (DType dtype : kDTypes) {
    for (Layout layout : kAllLayouts) {
      const TableSpec spec =
          MakeSpec(70, 731.25, dtype, layout, Frequency::kT2T, 3000);
      std::vector<std::byte> scalar(spec.table_bytes()), simd(scalar.size());
      hwy::SetSupportedTargetsForTest(HWY_SSE4);  // no FMA: the scalar path
      ComputeRows(spec, 9990000, 3000, scalar.data());
      for (const int64_t target : targets) {
        hwy::SetSupportedTargetsForTest(target);
        ComputeRows(spec, 9990000, 3000, simd.data());
        EXPECT_EQ(simd, scalar)
            << hwy::TargetName(target) << " " << spec.DebugString();
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

// How often the fast paths hand a value to MPFR (documentation material).
TEST(FallbackRate, RandomValues_RateMeasuredAndTiny) {
  std::mt19937_64 rng(11);
  const TableSpec spec = MakeSpec(512, 10000, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper);
  const std::vector<FrequencyWords> f = ExactFrequencies(spec);
  std::uniform_int_distribution<uint32_t> pos_dist(1, 1 << 24);
  constexpr uint64_t kFast = 2000000, kDd = 100000;
  uint64_t undecided[4] = {0, 0, 0, 0};
  for (uint64_t k = 0; k < kFast; ++k) {
    const uint32_t i = static_cast<uint32_t>(k % 256);
    const FastSinCos v = FastSinCosScalar(pos_dist(rng), f[i].w0, f[i].w1);
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      const double slack = kFastCheckSlack * std::fabs(v.sin);
      if (v.risky || RoundDoubleToBits(v.sin - slack, dtype) !=
                         RoundDoubleToBits(v.sin + slack, dtype)) {
        ++undecided[static_cast<int>(dtype)];
      }
    }
  }
  for (uint64_t k = 0; k < kDd; ++k) {
    const DoubleDoubleSinCos v =
        DoubleDoubleSinCosOf(pos_dist(rng), f[k % 256]);
    double out;
    if (v.risky || !RoundDoubleDoubleToDouble(v.sin, &out)) ++undecided[1];
  }
  std::printf(
      "[numerics] fallback rate: float32 %llu/%llu, float16 %llu/%llu, "
      "bfloat16 %llu/%llu, float64 %llu/%llu\n",
      (unsigned long long)undecided[0], (unsigned long long)kFast,
      (unsigned long long)undecided[2], (unsigned long long)kFast,
      (unsigned long long)undecided[3], (unsigned long long)kFast,
      (unsigned long long)undecided[1], (unsigned long long)kDd);
  EXPECT_LT(undecided[0], kFast / 100000);
  EXPECT_LT(undecided[1], kDd / 100000 + 1);
  RecordProperty("values_counted_for_rate", std::to_string(3 * kFast + kDd));
}

// The MPFR (Ziv) fallback is rarely taken by tables, so test it directly.
TEST(ExactFallback, ZivLoopValues_MatchReference) {
  std::mt19937_64 rng(7);
  CheckStats stats;
  for (DType dtype : kDTypes) {
    const TableSpec spec =
        MakeSpec(1024, 500.5, dtype, Layout::kInterleaved, Frequency::kT2T);
    ReferenceFamily ref(spec);
    std::uniform_int_distribution<uint32_t> pos_dist(0, 1 << 24);
    std::uniform_int_distribution<uint32_t> pair_dist(0, 511);
    for (int k = 0; k < 300; ++k) {
      const uint32_t pos = pos_dist(rng), i = pair_dist(rng);
      uint64_t s, c;
      ExactSinCosBits(spec, i, pos, &s, &c);
      stats.values += 2;
      if (s != ref.Bits(i, pos, true, dtype)) ++stats.mismatches;
      if (c != ref.Bits(i, pos, false, dtype)) ++stats.mismatches;
    }
  }
  ReportChecked(stats);
}

// Found by fuzz_stream_batches: YaRN with an explicit attention_factor of
// 1 + 2^-11, a float16 tie, at position 0 (where cos = the factor itself)
// made the MPFR loop double its precision until memory ran out. Each case
// must end, round the exact factor to nearest even, and give the same bits
// through the whole-table path.
TEST(ExactFallback, ExplicitAttentionFactorOnATie_RoundsToEvenAndEnds) {
  struct Case {
    DType dtype;
    double factor;
    uint64_t cos_bits;  // RNE_dtype(factor)
  };
  const Case cases[] = {
      {DType::kFloat16, 1 + 0x1p-11, 0x3C00},            // tie: down to even
      {DType::kFloat16, 1 + 0x1p-11 + 0x1p-40, 0x3C01},  // above the tie: up
      {DType::kFloat16, 1 + 3 * 0x1p-11, 0x3C02},        // tie: up to even
      {DType::kBFloat16, 1 + 0x1p-8, 0x3F80},
      {DType::kFloat32, 1 + 0x1p-24, 0x3F800000},
      {DType::kFloat64, 1 + 0x1p-52, 0x3FF0000000000001},  // exact
  };
  for (const Case& c : cases) {
    RopeScaling r;
    r.type = RopeType::kYarn;
    r.factor = 4;
    r.original_max_position_embeddings = 65;
    r.mscale_all_dim = 0.7;
    r.attention_factor = c.factor;
    ASSERT_TRUE(ValidateRope(r, 24).ok());
    TableSpec spec = MakeSpec(24, 10000, c.dtype, Layout::kInterleavedPairs,
                              Frequency::kPaper, /*max_len=*/24);
    spec.rope = std::make_shared<const RopeScaling>(r);
    SCOPED_TRACE(::testing::Message() << "factor " << c.factor << " dtype "
                                      << static_cast<int>(c.dtype));
    for (uint32_t i = 0; i < 12; ++i) {
      uint64_t s = 1, cos = 1;
      ExactSinCosBits(spec, i, 0, &s, &cos);
      EXPECT_EQ(cos, c.cos_bits) << "pair " << i;
      EXPECT_EQ(s, EncodeExact(0.0, c.dtype)) << "pair " << i;
    }
    std::vector<std::byte> table(spec.table_bytes());
    ComputeRows(spec, 0, spec.max_len, table.data());
    uint64_t first = 0;  // row 0, channel 0: cos of pair 0
    std::memcpy(&first, table.data(), DTypeSize(c.dtype));
    EXPECT_EQ(first, c.cos_bits);
  }
}

// RoundDoubleToBits against the compiler's own double -> _Float16 conversion.
TEST(Rounding, DoubleToFloat16IncludingSubnormals_MatchesCompiler) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> expo(-30, 0);
  uint64_t checked = 0;
  for (int k = 0; k < 200000; ++k) {
    double v = std::ldexp(mant(rng), expo(rng)) * ((k & 1) ? -1 : 1);
    if (k % 7 == 0) {  // exact ties of float16 subnormals / normals
      v = std::ldexp(std::floor(mant(rng) * 1024) + 0.5, expo(rng) - 10);
    }
    const _Float16 h = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(RoundDoubleToBits(v, DType::kFloat16), want) << v;
    ++checked;
  }
  RecordProperty("values_compared_not_mpfr", std::to_string(checked));
  std::printf("[numerics] Rounding: %llu values compared with _Float16\n",
              static_cast<unsigned long long>(checked));
}

// RoundHalf16IfDecided (the bit-key interval test of the float16 /
// bfloat16 range fallback) against the interval test on RoundDoubleToBits:
// where it decides, the scalar test decides too and the bits are
// RoundDoubleToBits(y); where the scalar test is undecided, so is it.
// Values on, next to and between midpoints, at binade edges, near the
// smallest normals and zero, with slacks from 0 to 2^-20.
TEST(Rounding, Half16BitKeyIntervalTest_AgreesWithRoundDoubleToBits) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  uint64_t decided = 0, undecided = 0;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const FloatFormat fmt = FormatOf(dtype);
    for (int k = 0; k < 300000; ++k) {
      const int ex = static_cast<int>(rng() % 40) - 38 +
                     (dtype == DType::kBFloat16 && k % 5 == 0 ? -95 : 0);
      const int q = std::max(ex, fmt.min_exponent) - (fmt.precision - 1);
      double y = std::ldexp(1 + uni(rng), ex);
      switch (k % 4) {
        case 0:  // a midpoint, give or take a few double ulps
          y = std::ldexp(std::floor(std::ldexp(y, -q)) + 0.5, q);
          for (int u = static_cast<int>(rng() % 7) - 3; u != 0;
               u += u > 0 ? -1 : 1) {
            y = std::nextafter(y, u > 0 ? 4.0 : 0.0);
          }
          break;
        case 1:  // a binade edge
          y = std::ldexp(1.0, ex);
          break;
        default:
          break;
      }
      if (rng() % 2) y = -y;
      const double e =
          k % 3 == 0 ? 0.0 : std::ldexp(uni(rng), -20 - int(rng() % 40));
      const uint64_t lo = RoundDoubleToBits(y - e, dtype);
      const bool scalar_decided = lo == RoundDoubleToBits(y + e, dtype);
      uint64_t bits = 0;
      if (RoundHalf16IfDecided(y, e, dtype, &bits)) {
        ++decided;
        ASSERT_TRUE(scalar_decided) << y << " e " << e;
        ASSERT_EQ(bits, RoundDoubleToBits(y, dtype)) << y << " e " << e;
      } else {
        ++undecided;
      }
    }
  }
  std::printf("[numerics] Half16 bit-key test: %llu decided, %llu undecided\n",
              static_cast<unsigned long long>(decided),
              static_cast<unsigned long long>(undecided));
  EXPECT_GT(decided, 200000u);
  EXPECT_GT(undecided, 50000u);
}

}  // namespace
}  // namespace posenc
