// Multi-axis RoPE encodings (core/spec/multi_axis.h through
// core/plan/real_encoding_plan.h) against the independent MPFR reference
// written from FLUX's, HF Qwen2-VL's / Qwen3-VL's and timm's code
// (tests/numerics/multi_axis_reference.h): every layout x dtype for the
// released configurations, then fresh random specs and points on every run
// (the seed printed; POSENC_SEED replays it). Plus the validation rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "tests/common/encoding_specs.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/multi_axis_reference.h"
#include "tests/numerics/real_reference.h"

namespace posenc {
namespace {

using ::posenc::testing::AxesSpec;
using ::posenc::testing::CheckStats;
using ::posenc::testing::ExpectInvalidEncoding;
using ::posenc::testing::MRopeSpec;
using ::posenc::testing::MultiAxisReferenceRow;
using ::posenc::testing::RealElementBits;

using ::posenc::testing::kDTypes;
constexpr Layout kLayouts[] = {
    Layout::kInterleaved, Layout::kConcatSinCos,     Layout::kConcatCosSin,
    Layout::kRotateHalf,  Layout::kInterleavedPairs, Layout::kRotationMatrix};

// Computes the rows of `points` and compares every element with the
// reference row.
void CheckRows(const EncodingSpec& spec, const std::vector<double>& points,
               CheckStats& stats) {
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  ASSERT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
  ASSERT_TRUE(plan->ValidatePositions(points, 1 << 20).ok())
      << plan->ValidatePositions(points, 1 << 20) << spec.DebugString();
  const size_t n = points.size() / spec.coordinates;
  std::vector<std::byte> out(n * spec.row_bytes());
  plan->ComputeRows(points, out.data());
  for (size_t p = 0; p < n; ++p) {
    const double* point = points.data() + p * spec.coordinates;
    const std::vector<uint64_t> want = MultiAxisReferenceRow(spec, point);
    ASSERT_EQ(want.size(), spec.width()) << spec.DebugString();
    const std::byte* row = out.data() + p * spec.row_bytes();
    for (size_t col = 0; col < want.size(); ++col) {
      const uint64_t got = RealElementBits(spec, row, col);
      ++stats.values;
      if (got != want[col] && ++stats.mismatches <= 10) {
        std::string at;
        for (uint32_t c = 0; c < spec.coordinates; ++c) {
          at += std::to_string(point[c]) + " ";
        }
        ADD_FAILURE() << spec.DebugString() << " point " << at << "col " << col
                      << std::hex << " want=0x" << want[col] << " got=0x"
                      << got;
      }
    }
  }
}

EncodingSpec Flux() {  // FLUX.1 dev/schnell: EmbedND(128, 10000, ...)
  return AxesSpec({16, 56, 56}, Layout::kRotationMatrix);
}

EncodingSpec Qwen2Vl() {  // Qwen2-VL-7B: head_dim 128, theta 1e6
  return MRopeSpec(128, 1000000, {16, 24, 24}, Layout::kRotateHalf);
}

EncodingSpec Qwen3Vl() {  // Qwen3-VL: [24, 20, 20], theta 5e6
  EncodingSpec s = Qwen2Vl();
  s.max_period = 5000000;
  s.mrope_section = {24, 20, 20};
  s.mrope_interleaved = true;
  return s;
}

EncodingSpec Axial() {  // timm EVA-02 style: dim 64, 2 axes of 32
  return AxesSpec({32, 32}, Layout::kInterleavedPairs);
}

// FLUX ids: text (0, 0, 0), an image grid (0, row, col) with offsets.
std::vector<double> FluxIds() {
  std::vector<double> ids = {0, 0, 0, 0, 0, 0};
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      ids.insert(ids.end(), {0, r * 13.0 + 5, c * 29.0 + 3});
    }
  }
  ids.insert(ids.end(), {1, 63, 127});  // Kontext's reference image index
  return ids;
}

// Qwen2-VL get_rope_index: text (p, p, p), vision (t + p, h + p, w + p).
std::vector<double> QwenIds() {
  std::vector<double> ids;
  for (int p = 0; p < 3; ++p)
    ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  for (int h = 0; h < 3; ++h) {
    for (int w = 0; w < 4; ++w) ids.insert(ids.end(), {3, 3.0 + h, 3.0 + w});
  }
  ids.insert(ids.end(), {7, 7, 7, 32767, 32767, 32767, 250000, 4, 9});
  return ids;
}

std::vector<double> AxialIds() {
  std::vector<double> ids;
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) ids.insert(ids.end(), {1.0 * r, 7.0 * c});
  }
  ids.insert(ids.end(), {-3.5, 0.25});  // EVA-02 centred / rescaled grids
  return ids;
}

TEST(MultiAxisTest, ReleasedConfigs_EveryLayoutAndDtypeMatchMpfr) {
  CheckStats stats;
  const struct {
    EncodingSpec spec;
    std::vector<double> ids;
  } kConfigs[] = {{Flux(), FluxIds()},
                  {Qwen2Vl(), QwenIds()},
                  {Qwen3Vl(), QwenIds()},
                  {Axial(), AxialIds()}};
  for (const auto& config : kConfigs) {
    for (DType dtype : kDTypes) {
      for (Layout layout : kLayouts) {
        EncodingSpec spec = config.spec;
        spec.dtype = dtype;
        spec.layout = layout;
        CheckRows(spec, config.ids, stats);
      }
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, RotationMatrixAtAngleZero_MinusSinIsNegativeZero) {
  // FLUX's -torch.sin(0) is -0.0: posenc serves the IEEE negation of the
  // exact +0, in every dtype.
  for (DType dtype : kDTypes) {
    EncodingSpec spec = Flux();
    spec.dtype = dtype;
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<std::byte> row(spec.row_bytes());
    const double id[3] = {0, 0, 2};
    plan->ComputeRow(id, row.data());
    const uint64_t sign = DTypeSize(dtype) == 8   ? uint64_t{1} << 63
                          : DTypeSize(dtype) == 4 ? uint64_t{1} << 31
                                                  : uint64_t{1} << 15;
    EXPECT_EQ(RealElementBits(spec, row.data(), 1), sign) << DTypeName(dtype);
    EXPECT_EQ(RealElementBits(spec, row.data(), 2), 0u) << DTypeName(dtype);
    // Axis 2's first pair (frequency 1): -sin(2) < 0, sin(2) > 0.
    const size_t p = 4 * (8 + 28);
    EXPECT_NE(RealElementBits(spec, row.data(), p + 1) & sign, 0u);
    EXPECT_EQ(RealElementBits(spec, row.data(), p + 2) & sign, 0u);
  }
}

TEST(MultiAxisTest, NearZeroCrossings_MatchMpfr) {
  // An id x = RN(m pi / f) of axis 2: sin(x f) is tiny, where the fast
  // path is risky and the double-double or MPFR path decides.
  CheckStats stats;
  for (DType dtype : kDTypes) {
    for (Layout layout : {Layout::kRotationMatrix, Layout::kRotateHalf}) {
      EncodingSpec spec = Flux();
      spec.dtype = dtype;
      spec.layout = layout;
      std::vector<double> ids;
      for (uint32_t i = 0; i < 28; i += 3) {
        const double f = std::pow(10000.0, -2.0 * i / 56);
        for (int m : {1, 3, 1000}) {
          if (m * M_PI / f < 0x1p23)
            ids.insert(ids.end(), {0, 1, m * M_PI / f});
        }
      }
      CheckRows(spec, ids, stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

EncodingSpec RandomSpec(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  EncodingSpec s;
  s.dtype = kDTypes[rng() % 4];
  s.layout = kLayouts[rng() % 6];
  s.max_period = (rng() & 1) ? 10000 : 1 + u(rng) * 1e7;
  if (rng() % 4 == 0) s.scale = (rng() & 1) ? 1000 : std::exp2(u(rng) * 8 - 4);
  switch (rng() % 3) {
    case 0: {  // axes_dim
      const uint32_t axes = 1 + rng() % 4;
      for (uint32_t a = 0; a < axes; ++a) {
        s.axes_dim.push_back(2 * (1 + rng() % 40));
      }
      s.coordinates = axes;
      break;
    }
    default: {  // mrope_section, sometimes interleaved
      s.mrope_interleaved = rng() & 1;
      const uint32_t sections = s.mrope_interleaved ? 3 : 1 + rng() % 4;
      uint32_t half = 0;
      for (uint32_t k = 0; k < sections; ++k) {
        s.mrope_section.push_back(1 + rng() % 40);
        half += s.mrope_section.back();
      }
      s.dim = 2 * half;
      s.coordinates = sections;
    }
  }
  return s;
}

TEST(MultiAxisTest, FreshRandomSamples_MatchMpfr) {
  std::mt19937_64 rng = ::posenc::testing::SeededRng("multi-axis RoPE");
  std::uniform_real_distribution<double> u(0, 1);
  CheckStats stats;
  for (int n = 0; n < 80; ++n) {
    const EncodingSpec spec = RandomSpec(rng);
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    ASSERT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
    const double limit = plan->max_abs_position();
    std::vector<double> points;
    for (uint32_t k = 0; k < 5 * spec.coordinates; ++k) {
      double x;
      switch (rng() % 6) {
        case 0:  // an integer id
          x = std::floor(u(rng) * std::min(limit, 100000.0));
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
        case 4:  // the text ids' zero
          x = 0;
          break;
        default:  // a fraction
          x = u(rng) * 64;
      }
      if (x > limit) x = limit;
      if (rng() % 5 == 0) x = -x;
      points.push_back(x);
    }
    CheckRows(spec, points, stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, GridRows_SameBitsAsTuplesAndMpfr) {
  // ComputeGridRows (axis tables for the repeating axes) against
  // ComputeRows of the same ids and the reference, every dtype x layout.
  CheckStats stats;
  PositionGrid grid;
  grid.start = {1, -2, 30};
  grid.count = {1, 5, 7};
  std::vector<double> ids;
  for (int h = 0; h < 5; ++h) {
    for (int w = 0; w < 7; ++w) ids.insert(ids.end(), {1, -2.0 + h, 30.0 + w});
  }
  for (DType dtype : kDTypes) {
    for (Layout layout : kLayouts) {
      for (const EncodingSpec& base : {Flux(), Qwen3Vl()}) {
        EncodingSpec spec = base;
        spec.dtype = dtype;
        spec.layout = layout;
        absl::StatusOr<RealEncodingPlan> plan =
            RealEncodingPlan::Create(spec, {});
        ASSERT_TRUE(plan.ok()) << plan.status();
        ASSERT_TRUE(plan->ValidateGrid(grid, 1000).ok());
        std::vector<std::byte> by_grid(35 * spec.row_bytes());
        std::vector<std::byte> by_tuples(by_grid.size());
        plan->ComputeGridRows(grid, by_grid.data());
        plan->ComputeRows(ids, by_tuples.data());
        EXPECT_EQ(by_grid, by_tuples) << spec.DebugString();
        CheckRows(spec, ids, stats);
      }
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

// Multi-axis ComputeRows runs angle addition from a segment's anchor (the
// last coordinate it computed directly) to coordinates x0 + j, j an integer
// below RealEncodingPlan::kAngleStep, and computes a point whose
// coordinates are all equal as one row-order segment. Three small specs
// (so that every layout x dtype stays cheap to check) with the edges.
EncodingSpec SmallSections() { return MRopeSpec(32, 1000000, {3, 5, 8}); }

EncodingSpec SmallInterleaved() {
  EncodingSpec s = SmallSections();
  s.mrope_section = {4, 6, 6};
  s.mrope_interleaved = true;
  return s;
}

// Interleaved sections placed as runs of stride 3 that end at different
// pairs (width 2..11, height 1..13), and the temporal coordinate's pairs
// 0..12 then 14, 15: a run of stride 3 followed by one of stride 1 in one
// segment.
EncodingSpec SmallInterleavedTail() {
  EncodingSpec s = SmallSections();
  s.mrope_section = {7, 5, 4};
  s.mrope_interleaved = true;
  return s;
}

EncodingSpec SmallAxes() { return AxesSpec({6, 10, 16}); }

// Ids (3 coordinates) at the edges of the runs; `limit` is the plan's
// max_abs_position().
std::vector<double> RunEdgeIds(double limit) {
  constexpr uint32_t kStep = RealEncodingPlan::kAngleStep;
  std::vector<double> ids;
  const auto add = [&](double t, double h, double w) {
    ids.insert(ids.end(), {t, h, w});
  };
  const auto all = [&](double x) { add(x, x, x); };
  // A long text run from 0 (x = 0 exactly, then j = 1 .. kStep - 1 from
  // it), past kStep (a new anchor) and on.
  for (uint32_t p = 0; p < kStep + 6; ++p) all(p);
  // Runs of one; j = kStep - 1 exactly, then kStep (a new anchor), then
  // backwards (a new anchor).
  all(1000);
  all(1000 + kStep - 1);
  all(1000 + 2 * kStep - 1);
  all(1000 + 3 * kStep - 1);
  all(1000);
  all(1000);  // the same point again
  // An image after text: t fixed, h by rows, w back to its anchor (j = 0)
  // at each row.
  for (int h = 0; h < 3; ++h) {
    for (int w = 0; w < 5; ++w) add(1200, 1200 + h, 1200 + w);
  }
  // Text after the image: every section's anchor is 1200, j = 5 .. 8.
  for (int p = 1205; p < 1209; ++p) all(p);
  // Whole rows and sections alternating; one section crossing another's
  // value.
  add(75, 75, 76);
  all(76);
  add(76, 77, 76);
  all(77);
  add(77, 77, 78);
  add(78, 77, 77);
  all(78);
  // Fractional anchors: exact integer steps (x.5), and steps that are not
  // exact in double (0.1 + 1 rounds): either way the bits must be exact.
  for (double x : {0.5, 1.5, 2.5, 63.5, 64.5, 0.1, 1.1, 2.1, 3.1}) all(x);
  // Negative runs crossing zero, whole and per section.
  for (int p = -3; p <= 3; ++p) all(p);
  for (int p = -3; p <= 3; ++p) add(0, p, p - 1);
  // Near a zero crossing of frequency 1 (355 - 113 pi = 3e-5) along a run.
  for (int p = 352; p <= 358; ++p) all(p);
  for (int p = 352; p <= 358; ++p) add(1, 2, p);
  // Up to the largest allowed position.
  const double top = std::floor(std::min(limit, 1e7));
  for (int k = 6; k >= 0; --k) all(top - k);
  for (int k = 6; k >= 0; --k) add(top, -top, top - k);
  return ids;
}

TEST(MultiAxisTest, AngleAdditionRunEdges_EveryLayoutAndDtypeMatchMpfr) {
  CheckStats stats;
  for (const EncodingSpec& base :
       {SmallSections(), SmallInterleaved(), SmallInterleavedTail(),
        SmallAxes(), Qwen2Vl()}) {
    for (DType dtype : kDTypes) {
      for (Layout layout : kLayouts) {
        EncodingSpec spec = base;
        spec.dtype = dtype;
        spec.layout = layout;
        absl::StatusOr<RealEncodingPlan> plan =
            RealEncodingPlan::Create(spec, {});
        ASSERT_TRUE(plan.ok()) << plan.status();
        CheckRows(spec, RunEdgeIds(plan->max_abs_position()), stats);
        if (base.dim == 128) break;  // Qwen2-VL itself: one layout per dtype
      }
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, AnchorsNearZeroCrossings_MatchMpfr) {
  // Anchors x0 = RN(m pi / f): sin(x0 f) is within 2^-40 of 0, where the
  // fast path is risky (its error is absolute there, far above 2^-47
  // relative) and the anchor must take the double-double or MPFR value
  // before its own row is rounded with relative slack; then x0 + 1 from
  // it. Whole rows and one section at a time; the dtypes whose rounding
  // the fast path decides.
  CheckStats stats;
  const EncodingSpec base = MRopeSpec(8, 1000000, {1, 1, 2});
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (Layout layout : {Layout::kConcatSinCos, Layout::kRotationMatrix}) {
      EncodingSpec spec = base;
      spec.dtype = dtype;
      spec.layout = layout;
      std::vector<double> ids;
      for (int i = 0; i < 4; ++i) {
        const double f = std::pow(1e6, -2.0 * i / 8);
        for (int m = 1; m <= 150; ++m) {
          const double x0 = m * M_PI / f;
          ids.insert(ids.end(), {x0, x0, x0, x0 + 1, x0 + 1, x0 + 1});
          ids.insert(ids.end(), {x0, x0, 1, x0 + 1, x0 + 1, 1});
          ids.insert(ids.end(), {1, 1, x0, 1, 1, x0 + 1});
        }
      }
      CheckRows(spec, ids, stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, RunsThroughZeroCrossings_SlowColumnsMatchMpfr) {
  // scale = RN(pi) makes frequency 0 (F = scale) a multiple of pi at every
  // integer x but for x (pi - RN(pi)), about 1.2e-16 x: sin is far below
  // any interval test's slack, so that column of every row of a run goes to
  // the per-value path (the runs' slow callbacks), whole rows and runs of
  // one section, forwards, backwards and through 0, in every dtype.
  CheckStats stats;
  EncodingSpec base = MRopeSpec(16, kDefaultBase, {2, 3, 3});
  base.scale = M_PI;
  std::vector<double> ids;
  for (int p = 1; p <= 40; ++p)
    ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  // Runs of one section: the temporal one (frequency 0's).
  for (int t = 1; t <= 40; ++t) ids.insert(ids.end(), {1.0 * t, 9, 7});
  for (int p = -20; p <= 20; ++p)
    ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  for (int t = -20; t <= 20; ++t) ids.insert(ids.end(), {1.0 * t, 5, -7});
  for (DType dtype : kDTypes) {
    for (Layout layout :
         {Layout::kRotateHalf, Layout::kInterleaved, Layout::kRotationMatrix}) {
      EncodingSpec spec = base;
      spec.dtype = dtype;
      spec.layout = layout;
      CheckRows(spec, ids, stats);
    }
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, FreshRandomRuns_MatchMpfr) {
  // Random specs, and points as runs: a start (integer, half-integer or
  // any real, either sign), a length (1, around kAngleStep, or random), and
  // which coordinates step (all together as text, one as an image row, or
  // each by its own step of 0, 1 or 2).
  std::mt19937_64 rng = ::posenc::testing::SeededRng("multi-axis RoPE runs");
  std::uniform_real_distribution<double> u(0, 1);
  constexpr uint32_t kStep = RealEncodingPlan::kAngleStep;
  CheckStats stats;
  for (int n = 0; n < 24; ++n) {
    const EncodingSpec spec = RandomSpec(rng);
    absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
    ASSERT_TRUE(plan.ok()) << plan.status() << " " << spec.DebugString();
    const double limit = plan->max_abs_position();
    const uint32_t coords = spec.coordinates;
    std::vector<double> points;
    while (points.size() < 100 * coords) {
      const double bound = std::min(limit, 100000.0);
      double start;
      switch (rng() % 3) {
        case 0:
          start = std::floor(u(rng) * bound);
          break;
        case 1:
          start = std::floor(u(rng) * bound) + 0.5;
          break;
        default:
          start = u(rng) * bound;
      }
      if (rng() % 4 == 0) start = -start;
      uint32_t length;
      switch (rng() % 4) {
        case 0:
          length = 1;
          break;
        case 1:
          length = kStep - 1 + rng() % 3;
          break;
        default:
          length = 1 + rng() % 40;
      }
      const uint32_t mode = rng() % 3;
      const uint32_t axis = rng() % coords;
      std::vector<uint32_t> steps(coords);
      for (uint32_t& s : steps) s = rng() % 3;
      for (uint32_t k = 0; k < length; ++k) {
        for (uint32_t c = 0; c < coords; ++c) {
          double x = start;
          if (mode == 0 || (mode == 1 && c == axis)) x += k;
          if (mode == 2) x += static_cast<double>(steps[c]) * k + c;
          points.push_back(std::clamp(x, -limit, limit));
        }
      }
    }
    CheckRows(spec, points, stats);
  }
  ::posenc::testing::ReportChecked(stats);
}

TEST(MultiAxisTest, BadSpecs_InvalidArgumentNamingTheField) {
  // Each: a good spec, one edit, the field the refusal names.
  struct BadEdit {
    EncodingSpec (*good)();
    void (*edit)(EncodingSpec&);
    const char* field;
  };
  const BadEdit bad[] = {
      {Flux, [](EncodingSpec& s) { s.axes_dim[1] = 55; }, "spec.axes_dim[1]"},
      {Flux, [](EncodingSpec& s) { s.axes_dim[0] = 0; }, "spec.axes_dim[0]"},
      {Flux,
       [](EncodingSpec& s) {
         s.axes_dim = {65536, 2};
       },
       "spec.axes_dim"},
      {Flux, [](EncodingSpec& s) { s.dim = 100; }, "spec.dim"},
      {Flux, [](EncodingSpec& s) { s.coordinates = 2; }, "spec.coordinates"},
      {Flux, [](EncodingSpec& s) { s.mrope_section = {64}; },
       "spec.axes_dim, spec.mrope_section"},
      {Flux, [](EncodingSpec& s) { s.mrope_interleaved = true; },
       "spec.mrope_interleaved"},
      {Flux, [](EncodingSpec& s) { s.shift = 1; }, "spec.shift"},
      {Flux, [](EncodingSpec& s) { s.include_input = true; },
       "spec.include_input"},
      {Flux, [](EncodingSpec& s) { s.max_period = 1; }, "spec.max_period"},
      {Flux,
       [](EncodingSpec& s) {
         s.scheme = FrequencyScheme::kOctaves;
         s.num_frequencies = 4;
       },
       "spec.frequency"},
      {Qwen2Vl,
       [](EncodingSpec& s) {
         s.mrope_section = {16, 24, 23};
       },
       "spec.mrope_section"},
      {Qwen2Vl,
       [](EncodingSpec& s) {
         s.mrope_section = {16, 24, 24, 0};
         s.coordinates = 4;
       },
       "spec.mrope_section[3]"},
      {Qwen2Vl, [](EncodingSpec& s) { s.dim = 0; }, "spec.dim"},
      {Qwen2Vl, [](EncodingSpec& s) { s.dim = 131072; }, "spec.dim"},
      {Qwen3Vl,
       [](EncodingSpec& s) {
         s.mrope_section = {24, 20, 10, 10};
         s.coordinates = 4;
       },
       "spec.mrope_section"},
  };
  for (const BadEdit& b : bad) {
    EncodingSpec s = b.good();
    b.edit(s);
    ExpectInvalidEncoding(s, b.field);
  }
  EncodingSpec plain;
  plain.dim = 64;
  plain.mrope_interleaved = true;
  ExpectInvalidEncoding(plain, "spec.mrope_interleaved");
  plain.mrope_interleaved = false;
  for (Layout layout : {Layout::kRotateHalf, Layout::kInterleavedPairs,
                        Layout::kRotationMatrix}) {
    plain.layout = layout;
    ExpectInvalidEncoding(plain, "spec.layout");
  }
}

TEST(MultiAxisTest, HugeFrequencyRange_InvalidArgument) {
  EncodingSpec s = Flux();
  s.max_period = 1e300;  // axis 1's last frequency 1e300^(-54/56) < 2^-800
  ExpectInvalidEncoding(s, "spec.max_period");
}

}  // namespace
}  // namespace posenc
