// RoPE tables against an independent MPFR reference (rope_reference.h), bit
// for bit: every scheme x every layout (both copies of each value in the
// RoPE layouts) x every dtype, on ranges of 256 rows (the range kernels,
// float64 included) and single rows, at positions up to 2^24 - 1. Also:
// bad RoPE parameters are INVALID_ARGUMENT naming the field.
#include "tests/numerics/rope_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/plan/encoding.h"
#include "core/plan/exact_sincos_mpfr.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"
#include "tests/common/rope_scalings.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/mpfr_reference.h"

namespace posenc {
namespace {

using testing::DynamicScaling;
using testing::Llama3Scaling;
using testing::LongRopeScaling;
using testing::RopeReference;
using testing::Scaling;
using testing::YarnScaling;

using ::posenc::testing::kDTypes;
constexpr Layout kLayouts[] = {Layout::kInterleaved, Layout::kConcatSinCos,
                               Layout::kConcatCosSin, Layout::kRotateHalf,
                               Layout::kInterleavedPairs};
constexpr uint32_t kRangeRows = 256;  // >= 256: range kernels for every dtype
constexpr uint32_t kLastPosition = (1u << 24) - 1;

// Every column holding the sin (or cos) of pair i: one in the plain layouts,
// two in the RoPE layouts. Written out here, not taken from core/.
std::vector<size_t> ColumnsOf(Layout layout, uint32_t d, uint32_t i,
                              bool is_sin) {
  const size_t h = d / 2;
  switch (layout) {
    case Layout::kInterleaved:
      return {2 * size_t{i} + (is_sin ? 0 : 1)};
    case Layout::kConcatSinCos:
      return {is_sin ? i : h + i};
    case Layout::kConcatCosSin:
      return {is_sin ? h + i : i};
    case Layout::kRotateHalf: {
      const size_t off = is_sin ? d : 0;
      return {off + i, off + h + i};
    }
    case Layout::kInterleavedPairs: {
      const size_t off = is_sin ? d : 0;
      return {off + 2 * size_t{i}, off + 2 * size_t{i} + 1};
    }
    case Layout::kRotationMatrix:  // never a table's
      break;
  }
  return {};
}

struct Case {
  std::string name;
  uint32_t d;
  double base;
  std::shared_ptr<const RopeScaling> rope;  // null: none
  std::vector<uint32_t> range_starts;       // ranges of kRangeRows rows
};

std::shared_ptr<const RopeScaling> Rope(RopeScaling r) {
  return std::make_shared<const RopeScaling>(std::move(r));
}

// Single rows checked in every case (besides the ranges).
std::vector<uint32_t> SinglePositions() {
  std::vector<uint32_t> p = {
      0,       1,       2,        3,        255,          4095,
      4096,    8191,    8192,     32767,    32768,        65535,
      100003,  131071,  131072,   131073,   262144,       1000003,
      4194305, 9999991, 16777213, 16777214, kLastPosition};
  uint64_t x = 0x9e3779b97f4a7c15ull;  // fixed pseudo-random extra rows
  for (int k = 0; k < 17; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p.push_back(static_cast<uint32_t>(x % (kLastPosition + 1)));
  }
  return p;
}

// Checks one scheme: the reference is computed once per (pos, pair, sin/cos)
// and compared with core's rows in every dtype and layout.
void CheckCase(const Case& c, testing::CheckStats& total) {
  SCOPED_TRACE(c.name);
  RopeReference ref(c.rope.get(), c.d, c.base);
  std::vector<uint32_t> positions;
  for (uint32_t s : c.range_starts) {
    for (uint32_t k = 0; k < kRangeRows; ++k) positions.push_back(s + k);
  }
  const std::vector<uint32_t> singles = SinglePositions();
  positions.insert(positions.end(), singles.begin(), singles.end());
  const uint32_t half = c.d / 2;
  // want[(row * half + i) * 2 + is_sin][dtype]
  std::vector<std::array<uint64_t, 4>> want(positions.size() * half * 2);
  for (size_t r = 0; r < positions.size(); ++r) {
    for (uint32_t i = 0; i < half; ++i) {
      for (int s = 0; s < 2; ++s) {
        want[(r * half + i) * 2 + s] = ref.Bits(i, positions[r], s == 1);
      }
    }
  }
  testing::CheckStats stats;
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      TableSpec spec;
      spec.d = c.d;
      spec.base = c.base;
      spec.max_len = 1u << 24;
      spec.dtype = dtype;
      spec.layout = layout;
      spec.rope = c.rope;
      ASSERT_TRUE(ValidateSpec(spec, SpecLimits{}).ok()) << c.name;
      const size_t row_bytes = spec.row_bytes();
      std::vector<std::byte> out(positions.size() * row_bytes);
      size_t r = 0;
      for (uint32_t s : c.range_starts) {
        ComputeRows(spec, s, kRangeRows, out.data() + r * row_bytes);
        r += kRangeRows;
      }
      for (; r < positions.size(); ++r) {
        ComputeRows(spec, positions[r], 1, out.data() + r * row_bytes);
      }
      for (r = 0; r < positions.size(); ++r) {
        const std::byte* row = out.data() + r * row_bytes;
        for (uint32_t i = 0; i < half; ++i) {
          for (int s = 0; s < 2; ++s) {
            const uint64_t w =
                want[(r * half + i) * 2 + s][static_cast<int>(dtype)];
            for (size_t col : ColumnsOf(layout, c.d, i, s == 1)) {
              const uint64_t got = testing::ElementBits(spec, row, col);
              ++stats.values;
              if (got != w && ++stats.mismatches <= 10) {
                ADD_FAILURE()
                    << c.name << ": " << spec.DebugString()
                    << " pos=" << positions[r] << " i=" << i << " col=" << col
                    << (s == 1 ? " sin" : " cos") << " f'=" << ref.Frequency(i)
                    << " a=" << ref.AttentionFactor() << " want=0x" << std::hex
                    << w << " got=0x" << got << std::dec
                    << (r < c.range_starts.size() * kRangeRows ? " (range)"
                                                               : " (row)");
              }
            }
          }
        }
      }
    }
  }
  std::printf(
      "[numerics]   %s: %llu values, %llu mismatched (f'_0=%.17g "
      "f'_%u=%.17g a=%.17g, %llu reference values needed > 512 bits)\n",
      c.name.c_str(), static_cast<unsigned long long>(stats.values),
      static_cast<unsigned long long>(stats.mismatches), ref.Frequency(0),
      half - 1, ref.Frequency(half - 1), ref.AttentionFactor(),
      static_cast<unsigned long long>(ref.precision_retries()));
  total.values += stats.values;
  total.mismatches += stats.mismatches;
}

constexpr uint32_t kMid = (1u << 17) - 128;         // around 2^17
constexpr uint32_t kEnd = (1u << 24) - kRangeRows;  // ends at 2^24 - 1

TEST(RopeReference, DefaultScheme_NullAndExplicitDefault_MatchMpfr) {
  testing::CheckStats stats;
  CheckCase({"default null d=64 base=1e4", 64, 10000, nullptr, {0, kEnd}},
            stats);
  const RopeScaling r = Scaling(RopeType::kDefault);
  CheckCase({"default explicit d=32 base=5e5", 32, 500000, Rope(r), {kMid}},
            stats);
  testing::ReportChecked(stats);
}

TEST(RopeReference, Linear_MatchMpfr) {
  testing::CheckStats stats;
  RopeScaling r = Scaling(RopeType::kLinear, 3);  // not a power of two
  CheckCase({"linear factor=3 d=48", 48, 10000, Rope(r), {0, kEnd}}, stats);
  r.factor = 4;
  CheckCase({"linear factor=4 d=16 base=5e5", 16, 500000, Rope(r), {kMid}},
            stats);
  testing::ReportChecked(stats);
}

TEST(RopeReference, DynamicNtk_SeqLenUnsetBelowAndAboveM_MatchMpfr) {
  testing::CheckStats stats;
  RopeScaling r = DynamicScaling(2, 4096, 10000);  // L > M: base rescaled
  CheckCase(
      {"dynamic factor=2 M=4096 L=10000 d=64", 64, 10000, Rope(r), {0, kEnd}},
      stats);
  r.seq_len = 0;  // L = M: no rescaling
  CheckCase({"dynamic seq_len unset d=32", 32, 10000, Rope(r), {kMid}}, stats);
  r.seq_len = 1000;  // L = max(seq_len, M) = M
  r.factor = 8;
  r.original_max_position_embeddings = 2048;
  CheckCase({"dynamic seq_len<M d=16", 16, 500000, Rope(r), {0}}, stats);
  r.seq_len = 131072;
  CheckCase(
      {"dynamic factor=8 M=2048 L=131072 d=20", 20, 500000, Rope(r), {kMid}},
      stats);
  testing::ReportChecked(stats);
}

TEST(RopeReference, Yarn_QwenDeepSeekGptOssAndSmallM_MatchMpfr) {
  testing::CheckStats stats;
  // Qwen2.5-like: factor 4, M 32768, beta 32/1 (unset), base 1e6. With d=64
  // the ramp runs from pair 11 to 20.
  RopeScaling r = YarnScaling(4, 32768);
  CheckCase(
      {"yarn qwen factor=4 M=32768 d=64 base=1e6", 64, 1e6, Rope(r), {0, kEnd}},
      stats);
  // Explicit betas (the defaults), base 1e4.
  r.beta_fast = 32;
  r.beta_slow = 1;
  CheckCase({"yarn factor=4 M=32768 beta=32/1 d=32 base=1e4",
             32,
             10000,
             Rope(r),
             {kMid}},
            stats);
  // DeepSeek-like attention factor g(mscale) / g(mscale_all_dim).
  RopeScaling ds = YarnScaling(40, 4096);
  ds.mscale = 1;
  ds.mscale_all_dim = 0.707;
  CheckCase({"yarn deepseek factor=40 M=4096 mscale=1/0.707 d=64",
             64,
             10000,
             Rope(ds),
             {0}},
            stats);
  // Only mscale set: the default 0.1 ln(factor) + 1.
  ds.mscale_all_dim = 0;
  ds.mscale = 0.707;
  CheckCase({"yarn mscale only d=32", 32, 10000, Rope(ds), {kEnd}}, stats);
  // gpt-oss-like: truncate false (fractional ramp ends), base 150000.
  RopeScaling g = YarnScaling(32, 4096, 32, 1);
  g.truncate = false;
  CheckCase({"yarn gpt-oss truncate=false factor=32 d=64 base=150000",
             64,
             150000,
             Rope(g),
             {0, kMid}},
            stats);
  g.truncate = true;
  CheckCase({"yarn truncate=true explicit d=24", 24, 150000, Rope(g), {kEnd}},
            stats);
  // Explicit attention factor, other betas, small M: ramp inside d=32.
  RopeScaling e = YarnScaling(4, 2048, 16, 2);
  e.attention_factor = 0.75;
  CheckCase({"yarn attention_factor=0.75 M=2048 beta=16/2 d=32",
             32,
             10000,
             Rope(e),
             {0}},
            stats);
  // Small M so the ramp (pairs 0..4) falls inside d=16.
  RopeScaling s = YarnScaling(4, 256);
  CheckCase({"yarn small M=256 d=16", 16, 10000, Rope(s), {kMid}}, stats);
  s.truncate = false;
  s.attention_factor = 1.5;
  CheckCase(
      {"yarn small M=256 truncate=false a=1.5 d=8", 8, 10000, Rope(s), {0}},
      stats);
  testing::ReportChecked(stats);
}

// The fuzz campaign's finding get_table_yarn_tie_factor: an explicit
// attention factor on a tie of the dtype (float16 1 + 2^-11) at base 1e300,
// where most angles are tiny, sent every cos to Ziv's loop, doubling its
// precision to ~2,000 bits (a GetTable of 24 rows cost 9 s of a core). Every
// value is exact, and the rows take a Ziv iteration for at most a few values
// a row: those whose angle is just above 2^-28 (the tiny-angle rule,
// core/plan/exact_sincos_mpfr.h, decides the rest without MPFR).
TEST(RopeExactness, TieFactorAtTinyAngles_ExactWithFewZivIterations) {
  struct Case {
    DType dtype;
    double factor;
  };
  const Case cases[] = {
      {DType::kFloat16, 1 + 0x1p-11},      // tie: rounds down
      {DType::kFloat16, 1 + 3 * 0x1p-11},  // tie: the even neighbour is above
      {DType::kBFloat16, 1 + 0x1p-8},
      {DType::kFloat32, 1 + 0x1p-24},
      {DType::kFloat16, 1.25},  // representable: not a tie
  };
  constexpr uint32_t kD = 64, kRows = 24;
  testing::CheckStats stats;
  for (const Case& c : cases) {
    RopeScaling r = YarnScaling(4, 65);
    r.mscale_all_dim = 6.256103515625e-05;
    r.attention_factor = c.factor;
    TableSpec spec;
    spec.d = kD;
    spec.base = 1e300;
    spec.max_len = kRows;
    spec.dtype = c.dtype;
    spec.layout = Layout::kInterleavedPairs;
    spec.rope = std::make_shared<const RopeScaling>(r);
    ASSERT_TRUE(ValidateSpec(spec, SpecLimits{}).ok());
    SCOPED_TRACE(::testing::Message() << "factor " << c.factor << " dtype "
                                      << static_cast<int>(c.dtype));
    std::vector<std::byte> out(kRows * spec.row_bytes());
    const uint64_t before = ZivIterationsOnThisThread();
    ComputeRows(spec, 0, kRows, out.data());
    const uint64_t iterations = ZivIterationsOnThisThread() - before;
    std::printf("[numerics] tie factor %.17g dtype %d: %llu Ziv iterations\n",
                c.factor, static_cast<int>(c.dtype),
                static_cast<unsigned long long>(iterations));
    // Without the plan's rule: 713, one a tiny cos and one for each value
    // of the three columns below 2^-900 (69 for the factor 1.25).
    EXPECT_LE(iterations, 2 * kRows);
    RopeReference ref(spec.rope.get(), kD, spec.base);
    for (uint32_t pos = 0; pos < kRows; ++pos) {
      const std::byte* row = out.data() + pos * spec.row_bytes();
      for (uint32_t i = 0; i < kD / 2; ++i) {
        for (bool is_sin : {true, false}) {
          const uint64_t want =
              ref.Bits(i, pos, is_sin)[static_cast<int>(c.dtype)];
          const uint64_t got = testing::ElementBits(
              spec, row, testing::ColumnOf(spec, i, is_sin));
          ++stats.values;
          if (want != got && ++stats.mismatches <= 10) {
            ADD_FAILURE() << "pos " << pos << " pair " << i
                          << (is_sin ? " sin" : " cos") << " want 0x"
                          << std::hex << want << " got 0x" << got;
          }
        }
      }
    }
  }
  testing::ReportChecked(stats);
}

TEST(RopeReference, Llama3_AllThreeBands_MatchMpfr) {
  testing::CheckStats stats;
  // Llama 3.1: base 500000, factor 8, low 1, high 4, M 8192. With d=64,
  // pairs 0..14 are high (f), 15..17 medium (smoothed), 18..31 low (f/8).
  RopeScaling r = Llama3Scaling(8, 1, 4, 8192);
  CheckCase({"llama3.1 d=64 base=5e5", 64, 500000, Rope(r), {0, kEnd}}, stats);
  CheckCase({"llama3.1 d=128 base=5e5", 128, 500000, Rope(r), {kMid}}, stats);
  // Small M: w = 2 pi 1e4^(i/8): pair 0 high, 1-2 medium, 3.. low at d=16.
  r.original_max_position_embeddings = 64;
  CheckCase({"llama3 small M=64 d=16", 16, 10000, Rope(r), {kMid}}, stats);
  r.low_freq_factor = 1.5;
  r.high_freq_factor = 3.25;
  r.factor = 5;
  r.original_max_position_embeddings = 100;
  CheckCase(
      {"llama3 M=100 low=1.5 high=3.25 factor=5 d=24", 24, 10000, Rope(r), {0}},
      stats);
  testing::ReportChecked(stats);
}

TEST(RopeReference, LongRope_ShortAndLongLists_MatchMpfr) {
  testing::CheckStats stats;
  // Phi-3-like: M 4096, factor 32, lists of d/2 values in [1, ~60].
  constexpr uint32_t d = 32;
  RopeScaling r = LongRopeScaling(32, 4096);
  for (uint32_t i = 0; i < d / 2; ++i) {
    r.short_factor.push_back(1.0 + 0.05 * std::pow(i, 1.5));
    r.long_factor.push_back(1.0 + 58.7 * (i / 15.0) * (i / 15.0) + 0.01 * i);
  }
  CheckCase({"longrope phi3 seq_len unset (short) d=32",
             d,
             10000,
             Rope(r),
             {0, kEnd}},
            stats);
  r.seq_len = 4096;  // == M: still short
  CheckCase({"longrope seq_len=M (short) d=32", d, 10000, Rope(r), {kMid}},
            stats);
  r.seq_len = 131072;  // > M: long
  CheckCase(
      {"longrope seq_len=131072 (long) d=32", d, 10000, Rope(r), {0, kMid}},
      stats);
  r.attention_factor = 1.19;
  CheckCase(
      {"longrope long attention_factor=1.19 d=32", d, 10000, Rope(r), {kEnd}},
      stats);
  RopeScaling n = r;  // factor unset: a = 1
  n.factor = 0;
  n.attention_factor = 0;
  n.seq_len = 4097;
  CheckCase({"longrope factor unset (a=1) long d=32", d, 10000, Rope(n), {0}},
            stats);
  testing::ReportChecked(stats);
}

// ScaledFrequencies192 (core/spec/rope.h: f'_i as powers of f_1 or f'_1, one
// rounding per power) against the reference's f'_i (mpfr_pow per pair, 576
// bits), every pair, for every scheme at d = 4096 and d = 65536: pairs up to
// 32767, where the powers' error is largest. The claim is 2^-180 relative;
// the analysis in core/spec/rope.cc gives about 2^-191.9.
TEST(RopeReference, ScaledFrequenciesAsPowers_Within2ToMinus180AtLargeD) {
  struct Scheme {
    const char* name;
    double base;
    RopeScaling rope;
  };
  std::vector<Scheme> schemes;
  {
    RopeScaling r;  // explicit default
    schemes.push_back({"default", 10000, r});
  }
  schemes.push_back({"linear", 10000, Scaling(RopeType::kLinear, 4)});
  schemes.push_back({"dynamic", 500000, DynamicScaling(2, 4096, 1u << 24)});
  schemes.push_back({"yarn", 1e6, YarnScaling(4, 32768)});
  schemes.push_back({"llama3", 500000, Llama3Scaling(8, 1, 4, 8192)});
  uint64_t checked = 0;
  double worst = 0;  // largest relative error seen
  for (uint32_t d : {4096u, 65536u}) {
    std::vector<Scheme> all = schemes;
    // Phi-3-like lists, long (seq_len > M).
    RopeScaling lr = LongRopeScaling(32, 4096, 131072);
    for (uint32_t i = 0; i < d / 2; ++i) {
      lr.short_factor.push_back(1.0 + 0.05 * std::pow(i % 97, 1.5));
      lr.long_factor.push_back(1.0 + 0.0137 * (i % 4099));
    }
    all.push_back({"longrope", 10000, lr});
    for (const Scheme& s : all) {
      SCOPED_TRACE(::testing::Message() << s.name << " d=" << d);
      ASSERT_TRUE(ValidateRope(s.rope, d).ok());
      RopeReference ref(&s.rope, d, s.base);
      const uint32_t half = d / 2;
      std::vector<__mpfr_struct> got(half);
      for (auto& v : got) mpfr_init2(&v, 192);
      ScaledFrequencies192(s.rope, d, s.base, got.data());
      mpfr_t want, err;
      mpfr_init2(want, 576);
      mpfr_init2(err, 64);
      int failures = 0;
      for (uint32_t i = 0; i < half; ++i) {
        ref.FrequencyMpfr(i, want);
        mpfr_sub(err, &got[i], want, MPFR_RNDN);  // |err| ~ 2^-190 want
        mpfr_div(err, err, want, MPFR_RNDN);
        const double rel = std::fabs(mpfr_get_d(err, MPFR_RNDN));
        worst = std::max(worst, rel);
        ++checked;
        if (!(rel <= 0x1p-180) && ++failures <= 5) {
          ADD_FAILURE() << "i=" << i << " relative error 2^" << std::log2(rel);
        }
      }
      mpfr_clear(want);
      mpfr_clear(err);
      for (auto& v : got) mpfr_clear(&v);
    }
  }
  std::printf(
      "[numerics] %llu scaled frequencies, largest relative error 2^%.2f\n",
      static_cast<unsigned long long>(checked), std::log2(worst));
}

// ValidateSpec: every bad parameter is INVALID_ARGUMENT naming its field.
TEST(RopeValidation, BadParameters_InvalidArgumentNamingField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  RopeScaling yarn = YarnScaling(4, 32768);
  RopeScaling llama = Llama3Scaling(8, 1, 4, 8192);
  RopeScaling lr = LongRopeScaling(/*factor=*/0, 4096);
  lr.short_factor.assign(16, 1.0);
  lr.long_factor.assign(16, 2.0);
  RopeScaling linear = Scaling(RopeType::kLinear, 2);
  RopeScaling dynamic = DynamicScaling(2, 4096, /*seq_len=*/0);
  // The good ones are OK (d = 32).
  for (const RopeScaling* ok : {&yarn, &llama, &lr, &linear, &dynamic}) {
    TableSpec spec;
    spec.d = 32;
    spec.max_len = 16;
    spec.rope = std::make_shared<const RopeScaling>(*ok);
    EXPECT_TRUE(ValidateSpec(spec, SpecLimits{}).ok())
        << ValidateSpec(spec, SpecLimits{});
  }
  struct Bad {
    const char* what;
    RopeScaling rope;
    const char* field;  // must appear in the message
  };
  std::vector<Bad> bad;
  auto add = [&](const char* what, const RopeScaling& base, auto edit,
                 const char* field) {
    RopeScaling r = base;
    edit(r);
    bad.push_back({what, r, field});
  };
  add(
      "short_factor too short", lr,
      [](RopeScaling& r) { r.short_factor.pop_back(); },
      "spec.rope.short_factor");
  add(
      "long_factor too long", lr,
      [](RopeScaling& r) { r.long_factor.push_back(2); },
      "spec.rope.long_factor");
  add(
      "long_factor empty", lr, [](RopeScaling& r) { r.long_factor.clear(); },
      "spec.rope.long_factor");
  add(
      "long_factor NaN", lr, [&](RopeScaling& r) { r.long_factor[3] = nan; },
      "spec.rope.long_factor[3]");
  add(
      "short_factor < 1", lr, [](RopeScaling& r) { r.short_factor[0] = 0.5; },
      "spec.rope.short_factor[0]");
  add(
      "longrope factor 0.5", lr, [](RopeScaling& r) { r.factor = 0.5; },
      "spec.rope.factor");
  add(
      "linear factor 0 (required)", linear,
      [](RopeScaling& r) { r.factor = 0; }, "spec.rope.factor");
  add(
      "linear factor -2", linear, [](RopeScaling& r) { r.factor = -2; },
      "spec.rope.factor");
  add(
      "linear factor NaN", linear, [&](RopeScaling& r) { r.factor = nan; },
      "spec.rope.factor");
  add(
      "yarn factor inf", yarn, [&](RopeScaling& r) { r.factor = inf; },
      "spec.rope.factor");
  add(
      "llama3 factor 0.5", llama, [](RopeScaling& r) { r.factor = 0.5; },
      "spec.rope.factor");
  add(
      "yarn beta_fast -1", yarn, [](RopeScaling& r) { r.beta_fast = -1; },
      "spec.rope.beta_fast");
  add(
      "yarn beta_slow NaN", yarn, [&](RopeScaling& r) { r.beta_slow = nan; },
      "spec.rope.beta_slow");
  add(
      "yarn mscale inf", yarn, [&](RopeScaling& r) { r.mscale = inf; },
      "spec.rope.mscale");
  add(
      "yarn mscale_all_dim -1", yarn,
      [](RopeScaling& r) { r.mscale_all_dim = -1; },
      "spec.rope.mscale_all_dim");
  add(
      "yarn attention_factor -1", yarn,
      [](RopeScaling& r) { r.attention_factor = -1; },
      "spec.rope.attention_factor");
  add(
      "yarn attention_factor 3 (> 2)", yarn,
      [](RopeScaling& r) { r.attention_factor = 3; },
      "spec.rope.attention_factor");
  add(
      "yarn M unset", yarn,
      [](RopeScaling& r) { r.original_max_position_embeddings = 0; },
      "spec.rope.original_max_position_embeddings");
  add(
      "yarn M over 2^24", yarn,
      [](RopeScaling& r) {
        r.original_max_position_embeddings = (1u << 24) + 1;
      },
      "spec.rope.original_max_position_embeddings");
  add(
      "dynamic seq_len over 2^24", dynamic,
      [](RopeScaling& r) { r.seq_len = (1u << 24) + 1; }, "spec.rope.seq_len");
  // Partial parameter sets.
  add(
      "llama3 high_freq_factor unset", llama,
      [](RopeScaling& r) { r.high_freq_factor = 0; },
      "spec.rope.high_freq_factor");
  add(
      "llama3 low_freq_factor unset", llama,
      [](RopeScaling& r) { r.low_freq_factor = 0; },
      "spec.rope.low_freq_factor");
  add(
      "llama3 low >= high", llama,
      [](RopeScaling& r) { r.low_freq_factor = 4; },
      "spec.rope.low_freq_factor");
  add(
      "llama3 M unset", llama,
      [](RopeScaling& r) { r.original_max_position_embeddings = 0; },
      "spec.rope.original_max_position_embeddings");
  add(
      "longrope short_factor unset", lr,
      [](RopeScaling& r) { r.short_factor.clear(); }, "spec.rope.short_factor");
  // Parameters the scheme does not use.
  add(
      "linear with M", linear,
      [](RopeScaling& r) { r.original_max_position_embeddings = 4096; },
      "spec.rope.original_max_position_embeddings");
  add(
      "default with factor", RopeScaling{},
      [](RopeScaling& r) { r.factor = 2; }, "spec.rope.factor");
  add(
      "llama3 with truncate", llama, [](RopeScaling& r) { r.truncate = false; },
      "spec.rope.truncate");
  add(
      "llama3 with seq_len", llama, [](RopeScaling& r) { r.seq_len = 100; },
      "spec.rope.seq_len");
  add(
      "dynamic with attention_factor", dynamic,
      [](RopeScaling& r) { r.attention_factor = 1.1; },
      "spec.rope.attention_factor");
  add(
      "yarn with low_freq_factor", yarn,
      [](RopeScaling& r) { r.low_freq_factor = 1; },
      "spec.rope.low_freq_factor");
  add(
      "yarn with long_factor", yarn,
      [](RopeScaling& r) { r.long_factor.assign(16, 1.0); },
      "spec.rope.long_factor");
  add(
      "longrope with beta_fast", lr, [](RopeScaling& r) { r.beta_fast = 32; },
      "spec.rope.beta_fast");
  add(
      "linear with mscale", linear, [](RopeScaling& r) { r.mscale = 1; },
      "spec.rope.mscale");
  for (const Bad& b : bad) {
    TableSpec spec;
    spec.d = 32;
    spec.max_len = 16;
    spec.rope = std::make_shared<const RopeScaling>(b.rope);
    const absl::Status s = ValidateSpec(spec, SpecLimits{});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << b.what << ": " << s;
    EXPECT_NE(s.message().find(b.field), std::string::npos)
        << b.what << ": message does not name " << b.field << ": " << s;
  }
  // RoPE needs the paper's frequencies; dynamic needs d >= 4; the lists are
  // d/2 of the rotary dimension.
  TableSpec t2t;
  t2t.d = 32;
  t2t.max_len = 16;
  t2t.frequency = Frequency::kT2T;
  t2t.rope = std::make_shared<const RopeScaling>(linear);
  absl::Status s = ValidateSpec(t2t, SpecLimits{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("spec.rope"), std::string::npos) << s;
  TableSpec small = t2t;
  small.frequency = Frequency::kPaper;
  small.d = 2;
  small.rope = std::make_shared<const RopeScaling>(dynamic);
  s = ValidateSpec(small, SpecLimits{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("spec.rope.type"), std::string::npos) << s;
  TableSpec other_d = small;
  other_d.d = 64;  // lists hold 16 values, d/2 is 32
  other_d.rope = std::make_shared<const RopeScaling>(lr);
  s = ValidateSpec(other_d, SpecLimits{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("spec.rope.short_factor"), std::string::npos) << s;
}

}  // namespace
}  // namespace posenc
