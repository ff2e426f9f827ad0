// The float32 / float16 / bfloat16 range path (angle addition from anchor rows,
// core/numerics/angle_addition.h): its risky cases against the per-row rigorous
// path (proven exact, bit for bit) and against the independent MPFR reference.
#include "core/numerics/angle_addition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "core/numerics/rounding.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/numerics/sincos_double_double.h"
#include "core/numerics/sincos_fast.h"
#include "core/plan/encoding.h"
#include "core/spec/exact_frequency.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/mpfr_reference.h"

namespace posenc {
namespace {

using testing::CheckRowPairs;
using testing::CheckStats;
using testing::MakeSpec;
using testing::ReferenceFamily;
using testing::ReportChecked;
using testing::ReportComparedNotMpfr;

constexpr uint32_t kMaxPos = 1u << 24;
using ::posenc::testing::kDTypes;
constexpr auto& kLayouts = ::posenc::testing::kPlainLayouts;

// Where column i's sin and cos land, in elements, in a row of `layout`
// with `half` columns: {sin slot, cos slot}.
std::pair<size_t, size_t> SinCosSlots(Layout layout, uint32_t i, size_t half) {
  switch (layout) {
    case Layout::kInterleaved:
      return {2 * size_t{i}, 2 * size_t{i} + 1};
    case Layout::kConcatSinCos:
      return {i, half + i};
    default:  // kConcatCosSin
      return {half + i, i};
  }
}

// Rows [first, first + count) by ComputeRows (range path) must equal the
// same rows by ComputePositions (per-row path, unchanged rigorous code).
// `misalign` shifts the output buffer by that many bytes (defeats the
// streaming-store alignment). Returns the number of values compared.
uint64_t CompareRangeWithPerRow(const EncodingPlan& plan, uint32_t first,
                                uint32_t count, size_t misalign,
                                uint64_t* mismatches) {
  const TableSpec& spec = plan.spec();
  const size_t bytes = size_t{count} * spec.row_bytes();
  std::vector<std::byte> range_buf(bytes + 64), rows(bytes);
  std::byte* range = range_buf.data() + misalign;
  ComputeRows(plan, first, count, range);
  std::vector<uint32_t> positions(count);
  for (uint32_t k = 0; k < count; ++k) positions[k] = first + k;
  ComputePositions(plan, positions, rows.data());
  const size_t size = DTypeSize(spec.dtype);
  for (size_t b = 0; b < bytes; b += size) {
    if (std::memcmp(range + b, rows.data() + b, size) != 0) {
      if (++*mismatches <= 10) {
        ADD_FAILURE() << spec.DebugString() << " row "
                      << first + b / spec.row_bytes() << " element "
                      << (b % spec.row_bytes()) / size;
      }
    }
  }
  return bytes / size;
}

TEST(AngleAddition, StepPerPlan_PowerOfTwoWithinTableBudget) {
  EXPECT_EQ(EncodingPlan(MakeSpec(512, 1e4, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper))
                .AngleAdditionStep(),
            64u);
  EXPECT_EQ(EncodingPlan(MakeSpec(65536, 1e4, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper))
                .AngleAdditionStep(),
            2u);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    EXPECT_EQ(EncodingPlan(MakeSpec(512, 1e4, dtype, Layout::kInterleaved,
                                    Frequency::kPaper))
                  .AngleAdditionStep(),
              64u);
  }
  // float64: double-double table, 32 bytes per column and j, K up to 128.
  EXPECT_EQ(EncodingPlan(MakeSpec(512, 1e4, DType::kFloat64,
                                  Layout::kInterleaved, Frequency::kPaper))
                .AngleAdditionStep(),
            128u);
  EXPECT_EQ(EncodingPlan(MakeSpec(65536, 1e4, DType::kFloat64,
                                  Layout::kInterleaved, Frequency::kPaper))
                .AngleAdditionStep(),
            0u);
}

// The float16/bfloat16 kernel's vector rounding and interval test against
// the scalar RoundDoubleToBits (itself checked against the compiler's
// _Float16 and MPFR): with s0 = y1, c0 = y2, sj = 0, cj = 1 the kernel's
// y are exactly y1 and y2. Every column must be either written with
// RoundDoubleToBits(y) and decided by the scalar interval test, or handed
// to `slow` (always when the scalar test is undecided). Values: zeros,
// subnormals of both formats, near rounding midpoints, binade edges,
// uniform and log-uniform magnitudes; anchor-row mode (relative slack) too.
TEST(AngleAddition, Half16KernelRounding_EqualsScalarIntervalTest) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_real_distribution<double> expo(-150.0, 0.5);
  constexpr uint32_t kCols = 1000;  // not a multiple of the vector length
  uint64_t checked = 0, undecided = 0, mismatches = 0, extra_slow = 0;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const FloatFormat fmt = FormatOf(dtype);
    for (Layout layout : kLayouts) {
      for (bool anchor_row : {false, true}) {
        for (int round = 0; round < 20; ++round) {
          std::vector<double> y(2 * size_t{RoundUpToKernelLanes(kCols)}, 0.5);
          for (uint32_t k = 0; k < 2 * kCols; ++k) {
            double v;
            switch (k % 6) {
              case 0:
                v = uni(rng);
                break;
              case 1:
                v = std::ldexp(uni(rng), static_cast<int>(expo(rng)));
                break;
              case 2: {  // near a midpoint of the format at a random binade
                const int e = static_cast<int>(expo(rng));
                const int q =
                    std::max(e, fmt.min_exponent) - (fmt.precision - 1);
                const double m =
                    std::floor(std::ldexp(std::fabs(uni(rng)), e - q));
                v = std::ldexp(m + 0.5, q) +
                    std::ldexp(uni(rng), q - 40 - static_cast<int>(k % 7));
                if (k % 4 == 0) v = -v;
                break;
              }
              case 3:  // tiny: the interval straddles zero
                v = std::ldexp(uni(rng), -44 - static_cast<int>(k % 11));
                break;
              case 4:
                v = k % 8 == 4 ? 0.0 : (k % 8 == 0 ? -0.0 : 1.0);
                break;
              default:  // just below / above a power of two
                v = std::ldexp(1.0 + std::ldexp(uni(rng), -30),
                               -static_cast<int>(k % 140));
            }
            y[k] = v;
          }
          const size_t padded = RoundUpToKernelLanes(kCols);
          std::vector<double> s0(y.begin(), y.begin() + padded);
          std::vector<double> c0(y.begin() + padded, y.end());
          std::vector<double> sj(padded, 0.0), cj(padded, 1.0);
          std::vector<uint16_t> row(2 * kCols + 2, 0xdead);
          struct Ctx {
            std::vector<bool> slow;
          } ctx{std::vector<bool>(kCols)};
          auto slow = [](void* c, uint32_t column) {
            static_cast<Ctx*>(c)->slow.at(column) = true;
          };
          if (!Half16RowFromAnchorSimd(
                  s0.data(), c0.data(), anchor_row ? nullptr : sj.data(),
                  cj.data(), kCols, kCols, layout, dtype == DType::kBFloat16,
                  row.data(), slow, &ctx)) {
            GTEST_SKIP() << "no SIMD target with FMA";
          }
          EXPECT_EQ(row[2 * kCols], 0xdead);  // nothing past the row
          for (uint32_t i = 0; i < kCols; ++i) {
            bool decided = true;
            uint64_t want[2];
            for (int v = 0; v < 2; ++v) {
              const double yv = v == 0 ? s0[i] : c0[i];
              const double e = anchor_row ? kFastCheckSlack * std::fabs(yv)
                                          : kAngleAddCheckSlack;
              want[v] = RoundDoubleToBits(yv, dtype);
              decided &= RoundDoubleToBits(yv - e, dtype) ==
                         RoundDoubleToBits(yv + e, dtype);
            }
            checked += 2;
            undecided += !decided;
            const auto [sc, cc] = SinCosSlots(layout, i, kCols);
            // Undecided by the scalar test => slow; written => exact bits.
            // The kernel may also send a decided value to `slow` (interval
            // across a binade edge): counted, harmless.
            const bool ok =
                (decided || ctx.slow[i]) &&
                (ctx.slow[i] || (row[sc] == want[0] && row[cc] == want[1]));
            extra_slow += decided && ctx.slow[i];
            if (!ok && ++mismatches <= 10) {
              ADD_FAILURE()
                  << "dtype " << int(dtype) << " layout " << int(layout)
                  << " anchor " << anchor_row << " col " << i << " y " << s0[i]
                  << " " << c0[i] << " slow " << ctx.slow[i] << " decided "
                  << decided << " got 0x" << std::hex << row[sc] << " 0x"
                  << row[cc] << " want 0x" << want[0] << " 0x" << want[1];
            }
          }
        }
      }
    }
  }
  std::printf(
      "[numerics] Half16 kernel rounding: %llu values, %llu pairs undecided, "
      "%llu decided pairs sent to the slow path, %llu mismatched\n",
      static_cast<unsigned long long>(checked),
      static_cast<unsigned long long>(undecided),
      static_cast<unsigned long long>(extra_slow),
      static_cast<unsigned long long>(mismatches));
  EXPECT_GT(undecided, 0u);
  EXPECT_EQ(mismatches, 0u);
}

// The float32-lane 16-bit kernel (Half16RowFromAnchorF32Simd) against a
// scalar model of the same arithmetic: y = fmaf(S, G, fl(C*Sg)) and
// fmaf(C, G, -fl(S*Sg)), decided iff a = fl(|y| - E) > 0 and
// RoundDoubleToBits(a) == RoundDoubleToBits(b), b = fl(|y| + E); a column
// it leaves undecided is retried in double (the same inputs widened, slack
// kAngleAddCheckSlack, RoundHalf16IfDecided). A written column must hold
// RoundDoubleToBits(y) of a test that decided it; `slow` must be called
// exactly for the columns the double retry cannot decide, and always when
// neither test decides. Half the rounds feed y directly
// (G = 1, Sg = 0) with values on and next to 16-bit midpoints, binade
// edges, float16 subnormals, zeros and tiny values; half use random points
// of the unit circle, as the tables do.
TEST(AngleAddition, Half16F32KernelRounding_EqualsScalarIntervalTest) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-30, 0);
  std::uniform_int_distribution<int> ulps(-3, 3);
  constexpr uint32_t kCols = 1000;  // not a multiple of the vector length
  const float e = kAngleAdd32CheckSlack;
  uint64_t checked = 0, undecided = 0, mismatches = 0, extra_slow = 0,
           retried = 0;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const FloatFormat fmt = FormatOf(dtype);
    for (Layout layout : kLayouts) {
      for (int round = 0; round < 40; ++round) {
        const bool direct = round % 2 == 0;
        const size_t padded = RoundUpToKernelLanes(kCols);
        std::vector<float> s0(padded), c0(padded), sj(padded, 0.0f),
            cj(padded, 1.0f);
        for (uint32_t i = 0; i < kCols; ++i) {
          if (!direct) {
            const double a = 4 * uni(rng), b = 4 * uni(rng);
            s0[i] = static_cast<float>(std::sin(a));
            c0[i] = static_cast<float>(std::cos(a));
            sj[i] = static_cast<float>(std::sin(b));
            cj[i] = static_cast<float>(std::cos(b));
            continue;
          }
          for (float* v : {&s0[i], &c0[i]}) {
            const uint32_t k = static_cast<uint32_t>(rng() % 6);
            const int ex = expo(rng);
            double x;
            if (k == 0) {  // a midpoint of the format, give or take ulps
              const int q =
                  std::max(ex, fmt.min_exponent) - (fmt.precision - 1);
              const double m =
                  std::floor(std::ldexp(std::fabs(uni(rng)), ex - q));
              x = std::ldexp(m + 0.5, q);
            } else if (k == 1) {  // a binade edge
              x = std::ldexp(1.0, ex);
            } else if (k == 2) {  // tiny: the interval reaches zero
              x = std::ldexp(uni(rng), -21 - static_cast<int>(rng() % 4));
            } else if (k == 3) {  // float16 subnormal range
              x = std::ldexp(uni(rng), -14);
            } else if (k == 4) {
              x = rng() % 2 ? 0.0 : 1.0;
            } else {
              x = std::ldexp(uni(rng), ex);
            }
            float f = static_cast<float>(x);
            for (int u = ulps(rng); u != 0; u += u > 0 ? -1 : 1) {
              f = std::nextafter(f, u > 0 ? 2.0f : -2.0f);
            }
            *v = rng() % 2 ? -f : f;
          }
        }
        std::vector<uint16_t> row(2 * kCols + 2, 0xdead);
        struct Ctx {
          std::vector<bool> slow;
        } ctx{std::vector<bool>(kCols)};
        auto slow = [](void* c, uint32_t column) {
          static_cast<Ctx*>(c)->slow.at(column) = true;
        };
        const std::vector<double> s0d(s0.begin(), s0.end()),
            c0d(c0.begin(), c0.end()), sjd(sj.begin(), sj.end()),
            cjd(cj.begin(), cj.end());
        const Half16Arrays arrays{s0.data(),  c0.data(),  sj.data(),
                                  cj.data(),  s0d.data(), c0d.data(),
                                  sjd.data(), cjd.data()};
        if (!Half16RowFromAnchorF32Simd(arrays, kCols, kCols, layout,
                                        dtype == DType::kBFloat16, row.data(),
                                        slow, &ctx)) {
          GTEST_SKIP() << "no SIMD target with FMA";
        }
        EXPECT_EQ(row[2 * kCols], 0xdead);  // nothing past the row
        for (uint32_t i = 0; i < kCols; ++i) {
          const float y[2] = {std::fma(s0[i], cj[i], c0[i] * sj[i]),
                              std::fma(c0[i], cj[i], -(s0[i] * sj[i]))};
          const double y64[2] = {std::fma(s0d[i], cjd[i], c0d[i] * sjd[i]),
                                 std::fma(c0d[i], cjd[i], -(s0d[i] * sjd[i]))};
          bool decided = true, decided64 = true;
          uint64_t want[2], want64[2];
          for (int v = 0; v < 2; ++v) {
            const float a = std::fabs(y[v]) - e, b = std::fabs(y[v]) + e;
            want[v] = RoundDoubleToBits(y[v], dtype);
            decided &= a > 0 && RoundDoubleToBits(a, dtype) ==
                                    RoundDoubleToBits(b, dtype);
            decided64 &= RoundHalf16IfDecided(y64[v], kAngleAddCheckSlack,
                                              dtype, &want64[v]);
          }
          checked += 2;
          undecided += !decided;
          retried += !decided && decided64;
          const auto [sc, cc] = SinCosSlots(layout, i, kCols);
          const bool ok =
              ctx.slow[i]
                  ? !decided64
                  : (decided && row[sc] == want[0] && row[cc] == want[1]) ||
                        (decided64 && row[sc] == want64[0] &&
                         row[cc] == want64[1]);
          extra_slow += decided && ctx.slow[i];
          if (!ok && ++mismatches <= 10) {
            ADD_FAILURE() << "dtype " << int(dtype) << " layout " << int(layout)
                          << " col " << i << " y " << y[0] << " " << y[1]
                          << " slow " << ctx.slow[i] << " decided " << decided
                          << " got 0x" << std::hex << row[sc] << " 0x"
                          << row[cc] << " want 0x" << want[0] << " 0x"
                          << want[1];
          }
        }
      }
    }
  }
  std::printf(
      "[numerics] Half16 float32-lane kernel: %llu values, %llu pairs "
      "undecided in float32 (%llu of them decided by the double retry), "
      "%llu decided pairs sent to the slow path, %llu mismatched\n",
      static_cast<unsigned long long>(checked),
      static_cast<unsigned long long>(undecided),
      static_cast<unsigned long long>(retried),
      static_cast<unsigned long long>(extra_slow),
      static_cast<unsigned long long>(mismatches));
  EXPECT_GT(undecided, 0u);
  EXPECT_GT(retried, 0u);
  EXPECT_GT(checked - 2 * undecided, checked / 2);  // most are decided
  EXPECT_EQ(mismatches, 0u);
}

// The SIMD double-double sin/cos (anchors and table of the float64 range
// path) repeats DoubleDoubleSinCosOf operation for operation: same bits,
// same risky flags (NaN hi words), for random positions up to 2^24 and
// frequencies of several families, including positions where the reduced
// argument is tiny (risky).
TEST(AngleAddition, DdSinCosSimd_SameBitsAsScalar) {
  std::mt19937_64 rng(23);
  uint64_t checked = 0, risky = 0, mismatches = 0;
  for (double base : {1e4, 2.0, 1.0000001, 731.25}) {
    const TableSpec spec = MakeSpec(70, base, DType::kFloat64,
                                    Layout::kInterleaved, Frequency::kT2T);
    const std::vector<FrequencyWords> f = ExactFrequencies(spec);
    const size_t padded = RoundUpToKernelLanes(f.size());
    std::vector<double> w0(padded, 1.0), w1(padded, 0.0), w2(padded, 0.0);
    for (size_t i = 0; i < f.size(); ++i) {
      w0[i] = f[i].w0;
      w1[i] = f[i].w1;
      w2[i] = f[i].w2;
    }
    std::vector<uint32_t> positions = {0, 1, 2, 3, 1u << 24, 355, 710, 103993};
    for (int k = 0; k < 3000; ++k) positions.push_back(rng() % (kMaxPos + 1));
    std::vector<double> sh(padded), sl(padded), ch(padded), cl(padded);
    for (uint32_t pos : positions) {
      if (!DdSinCosColumnsSimd(w0.data(), w1.data(), w2.data(),
                               static_cast<uint32_t>(f.size()), pos, sh.data(),
                               sl.data(), ch.data(), cl.data())) {
        GTEST_SKIP() << "no SIMD target with FMA";
      }
      for (size_t i = 0; i < f.size(); ++i) {
        const DoubleDoubleSinCos v = DoubleDoubleSinCosOf(pos, f[i]);
        checked += 2;
        risky += v.risky;
        bool ok;
        if (v.risky) {
          ok = std::isnan(sh[i]) && std::isnan(ch[i]);
        } else {
          ok = std::memcmp(&sh[i], &v.sin.hi, 8) == 0 &&
               std::memcmp(&sl[i], &v.sin.lo, 8) == 0 &&
               std::memcmp(&ch[i], &v.cos.hi, 8) == 0 &&
               std::memcmp(&cl[i], &v.cos.lo, 8) == 0;
        }
        if (!ok && ++mismatches <= 10) {
          ADD_FAILURE() << "base " << base << " pos " << pos << " i " << i
                        << " simd " << sh[i] << "+" << sl[i] << " scalar "
                        << v.sin.hi << "+" << v.sin.lo << " risky " << v.risky;
        }
      }
    }
  }
  // Frequencies making pos * f within ~2^-40 of q * pi/2: risky.
  for (int k = 0; k < 200; ++k) {
    const uint32_t pos = 1 + static_cast<uint32_t>(rng() % kMaxPos);
    const size_t cols = 16;
    std::vector<double> w0(cols), w1(cols, 0.0), w2(cols, 0.0);
    for (size_t i = 0; i < cols; ++i) {
      const double q = 1.0 + static_cast<double>(rng() % 1000);
      w0[i] = std::min(1.0, q * kPio2W1 / pos);
      if (i % 2) w1[i] = std::ldexp(1.0, -80);  // not quite on the spot
    }
    std::vector<double> sh(cols), sl(cols), ch(cols), cl(cols);
    ASSERT_TRUE(DdSinCosColumnsSimd(w0.data(), w1.data(), w2.data(), cols, pos,
                                    sh.data(), sl.data(), ch.data(),
                                    cl.data()));
    for (size_t i = 0; i < cols; ++i) {
      const DoubleDoubleSinCos v =
          DoubleDoubleSinCosOf(pos, FrequencyWords{w0[i], w1[i], w2[i]});
      checked += 2;
      risky += v.risky;
      const bool ok = v.risky ? std::isnan(sh[i]) && std::isnan(ch[i])
                              : std::memcmp(&sh[i], &v.sin.hi, 8) == 0 &&
                                    std::memcmp(&sl[i], &v.sin.lo, 8) == 0 &&
                                    std::memcmp(&ch[i], &v.cos.hi, 8) == 0 &&
                                    std::memcmp(&cl[i], &v.cos.lo, 8) == 0;
      if (!ok && ++mismatches <= 10) {
        ADD_FAILURE() << "pos " << pos << " w0 " << w0[i] << " risky "
                      << v.risky << " simd " << sh[i];
      }
    }
  }
  EXPECT_GT(risky, 0u);
  std::printf(
      "[numerics] SIMD double-double sin/cos: %llu values equal to the "
      "scalar path, %llu risky pairs, %llu mismatched\n",
      static_cast<unsigned long long>(checked),
      static_cast<unsigned long long>(risky),
      static_cast<unsigned long long>(mismatches));
  EXPECT_EQ(mismatches, 0u);
}

// The float64 kernel's interval test: with s0 = (y1, l1), c0 = (y2, l2),
// sj = 0, cj = 1 the kernel's double-double results are exactly y + l.
// A column is written only if RN(y + fl(l - E)) and RN(y + fl(l + E)) agree
// (sign included), with that value; otherwise `slow` is called. Values:
// random, tiny (|y| < 2^-41: the interval spans several doubles, as near
// zero crossings), exact midpoints of doubles +- small offsets, ±0, NaN
// (marks risky anchor values: always undecided), and the anchor-row mode
// with relative slack.
TEST(AngleAddition, Float64KernelIntervalTest_EqualsScalar) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  constexpr uint32_t kCols = 999;
  const size_t padded = RoundUpToKernelLanes(kCols);
  uint64_t checked = 0, undecided = 0, mismatches = 0;
  for (Layout layout : kLayouts) {
    for (bool anchor_row : {false, true}) {
      for (int round = 0; round < 20; ++round) {
        std::vector<double> hi(2 * padded, 0.5), lo(2 * padded, 0.0);
        for (uint32_t k = 0; k < 2 * kCols; ++k) {
          double y = uni(rng), l;
          switch (k % 6) {
            case 0:
              l = std::ldexp(uni(rng), std::ilogb(y) - 54);
              break;
            case 1:  // tiny
              y = std::ldexp(uni(rng), -40 - static_cast<int>(k % 30));
              l = std::ldexp(uni(rng), std::ilogb(y) - 54);
              break;
            case 2:  // y + l within ~2^-90 of a midpoint between doubles
              l = std::ldexp(0.5 + std::ldexp(uni(rng), -37 - int(k % 5)),
                             std::ilogb(y) - 52);
              if (k % 4 == 0) l = -l;
              break;
            case 3:
              y = k % 12 == 3 ? 0.0 : -0.0;
              l = 0;
              break;
            case 4:
              if (k % 12 == 4) y = std::nan("");
              l = 0;
              break;
            default:  // near powers of two
              y = std::ldexp(k % 10 < 5 ? 1.0 : -1.0,
                             -static_cast<int>(k % 40));
              l = std::ldexp(uni(rng), -static_cast<int>(k % 40) - 54);
          }
          hi[k] = y;
          lo[k] = l;
        }
        std::vector<double> sj(padded, 0.0), cj(padded, 1.0), zero(padded, 0.0);
        DdArrays a{hi.data(),
                   lo.data(),
                   hi.data() + padded,
                   lo.data() + padded,
                   nullptr,
                   nullptr,
                   nullptr,
                   nullptr};
        if (!anchor_row) {
          a.sj_hi = sj.data();
          a.sj_lo = zero.data();
          a.cj_hi = cj.data();
          a.cj_lo = zero.data();
        }
        std::vector<double> row(2 * kCols + 1, 12345.0);
        std::vector<bool> slow_cols(kCols);
        auto slow = [](void* c, uint32_t column) {
          static_cast<std::vector<bool>*>(c)->at(column) = true;
        };
        if (!Float64RowFromAnchorSimd(a, kCols, kCols, layout, row.data(),
                                      round % 2 == 0, slow, &slow_cols)) {
          GTEST_SKIP() << "no SIMD target with FMA";
        }
        EXPECT_EQ(row[2 * kCols], 12345.0);
        for (uint32_t i = 0; i < kCols; ++i) {
          bool decided = true;
          double want[2];
          for (int v = 0; v < 2; ++v) {
            const double y = hi[i + v * padded], l = lo[i + v * padded];
            const double e = anchor_row ? kDoubleDoubleCheckSlack * std::fabs(y)
                                        : kDdAngleAddCheckSlack;
            const double r0 = y + (l - e), r1 = y + (l + e);
            decided &= r0 == r1 && std::signbit(r0) == std::signbit(r1);
            want[v] = r0;
          }
          checked += 2;
          undecided += !decided;
          const auto [sc, cc] = SinCosSlots(layout, i, kCols);
          const bool ok =
              slow_cols[i] == !decided &&
              (!decided || (std::memcmp(&row[sc], &want[0], 8) == 0 &&
                            std::memcmp(&row[cc], &want[1], 8) == 0));
          if (!ok && ++mismatches <= 10) {
            ADD_FAILURE() << "layout " << int(layout) << " anchor "
                          << anchor_row << " col " << i << " y " << hi[i]
                          << " + " << lo[i] << ", " << hi[i + padded] << " + "
                          << lo[i + padded] << " slow " << slow_cols[i]
                          << " decided " << decided;
          }
        }
      }
    }
  }
  std::printf(
      "[numerics] Float64 kernel interval test: %llu values, %llu pairs "
      "undecided, %llu mismatched\n",
      static_cast<unsigned long long>(checked),
      static_cast<unsigned long long>(undecided),
      static_cast<unsigned long long>(mismatches));
  EXPECT_GT(undecided, 0u);
  EXPECT_EQ(mismatches, 0u);
}

// Every dtype and layout, d from 2 to 65536 (steps 64 down to 2, partial
// SIMD vectors), bases near 1, small, usual, huge (MPFR-only columns);
// ranges starting at 0, unaligned in the middle, and ending at 2^24 (so
// j = K - 1 right before the last anchor).
TEST(AngleAddition, RangesEqualPerRowPath_EveryDtypeLayoutBase) {
  CheckStats stats;
  struct Case {
    uint32_t d;
    uint32_t rows;
  };
  const Case kCases[] = {{2, 200},  {6, 200},   {70, 200},
                         {512, 80}, {4096, 16}, {65536, 16}};
  const double kBases[] = {1e4, 2.0, 1.0000001, 1e300, 731.25};
  for (const Case& c : kCases) {
    for (double base : kBases) {
      // Large d: fewer combinations (MPFR-only columns of 1e300 are slow).
      if (c.d >= 4096 && (base == 1e300 || base == 731.25)) continue;
      for (Frequency freq : {Frequency::kPaper, Frequency::kT2T}) {
        if (freq == Frequency::kT2T && c.d < 4) continue;
        if (c.d == 65536 && freq == Frequency::kT2T) continue;
        for (DType dtype : kDTypes) {
          if (c.d >= 4096 && dtype != DType::kFloat32) continue;
          for (Layout layout : kLayouts) {
            const EncodingPlan plan(MakeSpec(c.d, base, dtype, layout, freq));
            const uint32_t n = c.rows;
            // count above the range path's minimum everywhere (float64:
            // 2K = 256 rows, so two anchors and a partial block).
            const uint32_t n16 =
                std::max<uint32_t>(n, dtype == DType::kFloat64 ? 300 : 16);
            stats.values +=
                CompareRangeWithPerRow(plan, 0, n16, 0, &stats.mismatches);
            stats.values += CompareRangeWithPerRow(plan, 12345677, n16, 0,
                                                   &stats.mismatches);
            stats.values += CompareRangeWithPerRow(plan, kMaxPos + 1 - n16, n16,
                                                   4, &stats.mismatches);
          }
        }
      }
    }
  }
  ReportComparedNotMpfr(stats, "the per-row path");
}

// Outputs of 4 MiB and more use non-temporal stores; aligned and misaligned
// buffers, every layout, the top of the position range.
TEST(AngleAddition, StreamedLargeRanges_EqualPerRowPath) {
  CheckStats stats;
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      // Misaligned by one element (breaks the streaming alignment) and by
      // 32 bytes (half an AVX-512 vector).
      for (size_t misalign : {size_t{0}, DTypeSize(dtype), size_t{32}}) {
        const EncodingPlan plan(
            MakeSpec(512, 1e4, dtype, layout, Frequency::kPaper));
        // 4.1 MiB of float32, 8.2 of float64 (both streamed), 2.1 of
        // float16/bfloat16.
        const uint32_t count = 2100;
        stats.values += CompareRangeWithPerRow(plan, kMaxPos + 1 - count, count,
                                               misalign, &stats.mismatches);
      }
    }
  }
  ReportComparedNotMpfr(stats, "the per-row path");
}

// Positions where sin or cos(p f) is tiny: the absolute-slack test cannot
// decide them and they must go through the per-value path. f = 1 (column 0)
// near multiples of pi and pi/2 (numerators of continued-fraction
// convergents), and for other columns positions found by a scan.
TEST(AngleAddition, NearZeroCrossings_MatchMpfr) {
  CheckStats stats;
  const uint32_t kConvergents[] = {
      355,     103993, 104348, 208341, 312689, 833719, 1146408, 4272943,
      5419351, 11,     344,    699,    51819,  52174,  260515,  573204};
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      const TableSpec spec = MakeSpec(8, 1e4, dtype, layout, Frequency::kPaper);
      ReferenceFamily ref(spec);
      const EncodingPlan plan(spec);
      const std::vector<FrequencyWords> f = ExactFrequencies(spec);
      std::vector<std::pair<uint32_t, uint32_t>> hits;  // (pos, column)
      for (uint32_t p : kConvergents) hits.push_back({p, 0});
      // Scan near the top of the range (worst absolute angle error).
      for (uint32_t i = 1; i < 4; ++i) {
        for (uint32_t p = kMaxPos - (1u << 18); p <= kMaxPos; ++p) {
          const FastSinCos v = FastSinCosScalar(p, f[i].w0, f[i].w1);
          if (std::fabs(v.sin) < 0x1p-14 || std::fabs(v.cos) < 0x1p-14) {
            hits.push_back({p, i});
          }
        }
      }
      // Values the range path's absolute-slack test leaves undecided
      // (scalar replica of the kernel), to show the fallback is exercised.
      const uint32_t k = plan.AngleAdditionStep();
      uint64_t undecided = 0;
      for (auto [p, column] : hits) {
        const uint32_t p0 = k ? p - p % k : p, j = p - p0;
        if (j == 0) continue;
        const FastSinCos a = FastSinCosScalar(p0, f[column].w0, f[column].w1);
        const FastSinCos t = FastSinCosScalar(j, f[column].w0, f[column].w1);
        if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
          // The float32-lane kernel (Half16RowFromAnchorF32Simd).
          const float S = static_cast<float>(a.sin),
                      C = static_cast<float>(a.cos);
          const float Sg = static_cast<float>(t.sin),
                      G = static_cast<float>(t.cos);
          for (float y : {std::fma(S, G, C * Sg), std::fma(C, G, -(S * Sg))}) {
            const float lo = std::fabs(y) - kAngleAdd32CheckSlack;
            const float hi = std::fabs(y) + kAngleAdd32CheckSlack;
            undecided += !(lo > 0) || RoundDoubleToBits(lo, dtype) !=
                                          RoundDoubleToBits(hi, dtype);
          }
          continue;
        }
        for (double y : {AngleAddSin(a.sin, a.cos, t.sin, t.cos),
                         AngleAddCos(a.sin, a.cos, t.sin, t.cos)}) {
          undecided += RoundDoubleToBits(y - kAngleAddCheckSlack, dtype) !=
                       RoundDoubleToBits(y + kAngleAddCheckSlack, dtype);
        }
      }
      std::printf(
          "[numerics] near-zero values undecided by the range "
          "path (per-value fallback): %llu (%s)\n",
          static_cast<unsigned long long>(undecided),
          spec.DebugString().c_str());
      if (dtype != DType::kFloat64) {  // float64: ranges of its own (4b)
        EXPECT_GT(undecided, 0u);
      }
      for (auto [p, column] : hits) {
        // A whole block around p so that p is reached with j up to K - 1.
        // (float64: K = 128 and ranges of >= 256 rows.)
        const uint32_t h = dtype == DType::kFloat64 ? 130 : 70;
        const uint32_t first = p >= h ? p - h : 0;
        const uint32_t count =
            std::min<uint32_t>(2 * h + 1, kMaxPos + 1 - first);
        std::vector<std::byte> rows(size_t{count} * spec.row_bytes());
        ComputeRows(plan, first, count, rows.data());
        for (uint32_t r = 0; r < count; ++r) {
          const uint32_t pos = first + r;
          std::vector<uint32_t> pairs = {column};
          if (pos == p) pairs = {0, 1, 2, 3};
          CheckRowPairs(ref, spec, pos, rows.data() + r * spec.row_bytes(),
                        pairs, stats);
        }
      }
      std::printf("[numerics] near-zero positions: %zu (%s)\n", hits.size(),
                  spec.DebugString().c_str());
    }
  }
  ReportChecked(stats);
}

// Large d, range path, sampled against MPFR (independent of the per-row
// path), including the last rows up to 2^24.
TEST(AngleAddition, LargeTablesSampled_MatchMpfr) {
  std::mt19937_64 rng(99);
  CheckStats stats;
  for (uint32_t d : {512u, 1024u, 8192u}) {
    for (double base : {1e4, 500.5, 1e6}) {
      for (Layout layout : kLayouts) {
        for (DType dtype : kDTypes) {
          const TableSpec spec =
              MakeSpec(d, base, dtype, layout, Frequency::kT2T);
          ReferenceFamily ref(spec);
          const EncodingPlan plan(spec);
          // float64 takes the range path from 256 rows on.
          const uint32_t count = dtype == DType::kFloat64 ? 300 : 130;
          for (uint32_t first : {0u, 9999937u, kMaxPos + 1 - count}) {
            std::vector<std::byte> rows(size_t{count} * spec.row_bytes());
            ComputeRows(plan, first, count, rows.data());
            std::uniform_int_distribution<uint32_t> pair_dist(0, d / 2 - 1);
            for (uint32_t r = 0; r < count; ++r) {
              std::vector<uint32_t> pairs = {0, d / 2 - 1, pair_dist(rng),
                                             pair_dist(rng)};
              CheckRowPairs(ref, spec, first + r,
                            rows.data() + r * spec.row_bytes(), pairs, stats);
            }
          }
        }
      }
    }
  }
  ReportChecked(stats);
}

// The unrounded angle-addition result against MPFR: the measured absolute
// error must sit far below the claimed bound kAngleAddAbsError.
TEST(AngleAddition, ErrorBound_MeasuredFarBelowClaim) {
  std::mt19937_64 rng(5);
  const TableSpec spec = MakeSpec(512, 1e4, DType::kFloat32,
                                  Layout::kInterleaved, Frequency::kPaper);
  const std::vector<FrequencyWords> f = ExactFrequencies(spec);
  std::uniform_int_distribution<uint32_t> anchor_dist(0, kMaxPos / 64 - 1);
  std::uniform_int_distribution<uint32_t> j_dist(1, 63);
  double max_err = 0;
  uint64_t checked = 0;
  for (int k = 0; k < 20000; ++k) {
    const uint32_t i = static_cast<uint32_t>(k % 256);
    const uint32_t p0 = anchor_dist(rng) * 64,
                   j = (k % 7 == 0) ? 63 : j_dist(rng);
    const FastSinCos a = FastSinCosScalar(p0, f[i].w0, f[i].w1);
    const FastSinCos t = FastSinCosScalar(j, f[i].w0, f[i].w1);
    if (a.risky || t.risky) continue;
    const double ys = AngleAddSin(a.sin, a.cos, t.sin, t.cos);
    const double yc = AngleAddCos(a.sin, a.cos, t.sin, t.cos);
    const double es =
        std::fabs(ys - testing::ReferenceValue(1e4, 2 * i, 512, p0 + j, true));
    const double ec =
        std::fabs(yc - testing::ReferenceValue(1e4, 2 * i, 512, p0 + j, false));
    max_err = std::max({max_err, es, ec});
    checked += 2;
  }
  std::printf(
      "[numerics] angle addition: max |y - exact| = %a (claim %a), %llu "
      "values\n",
      max_err, kAngleAddAbsError, static_cast<unsigned long long>(checked));
  EXPECT_LT(max_err, kAngleAddAbsError / 8);
  // How often the absolute-slack test hands a value to the per-value path
  // (random anchors and j, all 256 columns; documentation material).
  constexpr uint64_t kRateSamples = 1000000;
  uint64_t undecided = 0;
  for (uint64_t k = 0; k < kRateSamples; ++k) {
    const uint32_t i = static_cast<uint32_t>(k % 256);
    const uint32_t p0 = anchor_dist(rng) * 64, j = j_dist(rng);
    const FastSinCos a = FastSinCosScalar(p0, f[i].w0, f[i].w1);
    const FastSinCos t = FastSinCosScalar(j, f[i].w0, f[i].w1);
    const double y = (k & 1) ? AngleAddSin(a.sin, a.cos, t.sin, t.cos)
                             : AngleAddCos(a.sin, a.cos, t.sin, t.cos);
    undecided += a.risky || t.risky ||
                 static_cast<float>(y - kAngleAddCheckSlack) !=
                     static_cast<float>(y + kAngleAddCheckSlack);
  }
  std::printf("[numerics] angle addition: float32 undecided %llu/%llu\n",
              static_cast<unsigned long long>(undecided),
              static_cast<unsigned long long>(kRateSamples));
  EXPECT_LT(undecided, kRateSamples / 1000);
  RecordProperty("values_checked", std::to_string(checked));  // vs MPFR
  RecordProperty("values_counted_for_rate", std::to_string(kRateSamples));
}

}  // namespace
}  // namespace posenc
