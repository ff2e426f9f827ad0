#include "core/plan/real_encoding_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/numerics/double_double.h"
#include "core/numerics/rounding.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/numerics/shortest_double.h"
#include "core/numerics/sincos_double_double.h"
#include "core/numerics/sincos_fast.h"
#include "core/plan/exact_sincos_mpfr.h"
#include "core/spec/multi_axis.h"
#include "core/spec/real_frequencies.h"

namespace posenc {
namespace {

// The double-double path's bound with the reduction's absolute error
// (2^-128 when q != 0, docs/numerics.md) kept absolute instead of flagging
// small reduced arguments as risky: |v - exact| <= 2^-125 + 2^-96 |v|
// (claimed with a factor of 8 and 4 to spare).
constexpr double kDdAbsSlack = 0x1p-124;
constexpr double kDdRelSlack = 0x1p-94;

bool RoundDoubleDoubleIfDecided(DoubleDouble v, DType dtype, uint64_t* bits) {
  if (dtype == DType::kFloat64) {
    // RN(hi + t) is monotone in t; the slack covers the bound and the
    // rounding of lo -+ slack.
    const double slack = kDdAbsSlack + kDdRelSlack * std::fabs(v.hi);
    const double lo = v.hi + (v.lo - slack);
    const double hi = v.hi + (v.lo + slack);
    if (lo != hi || std::signbit(lo) != std::signbit(hi)) return false;
    *bits = EncodeExact(lo, dtype);
    return true;
  }
  // hi alone is within 2^-53 |hi| of hi + lo.
  return RoundWithin(v.hi, kDdAbsSlack + 0x1p-51 * std::fabs(v.hi), dtype,
                     bits);
}

// The coordinates of include_input: RNE to dtype at any magnitude (a
// 16-bit format overflows to infinity, as IEEE rounding does).
uint64_t RoundInputToBits(double x, DType dtype) {
  if (dtype == DType::kFloat64) return EncodeExact(x, dtype);
  if (dtype == DType::kFloat32) {
    return EncodeExact(static_cast<float>(x), dtype);  // one RNE; inf past max
  }
  const bool bf16 = dtype == DType::kBFloat16;
  // Half-way between the largest finite value and the next power of two:
  // from there on RNE gives infinity.
  const double overflow = bf16 ? 0x1.ffp127 : 65520.0;
  if (std::fabs(x) >= overflow) {
    const uint64_t inf = bf16 ? 0x7F80 : 0x7C00;
    return std::signbit(x) ? inf | 0x8000 : inf;
  }
  return RoundDoubleToBits(x, dtype);  // exact arithmetic at any magnitude
}

constexpr uint32_t kBlock = 256;  // columns per SIMD call of the 16/64 paths
static_assert(kBlock % kMaxKernelLanes == 0);

// The slow-path budget of the public call running on this thread (null:
// unbounded). The per-value paths are reached through the kernels'
// callbacks, frames below the public calls, which set it for their
// duration (BudgetScope).
thread_local SlowPathBudget* current_budget = nullptr;

class BudgetScope {
 public:
  explicit BudgetScope(SlowPathBudget* budget) : saved_(current_budget) {
    current_budget = budget;
  }
  ~BudgetScope() { current_budget = saved_; }
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  SlowPathBudget* saved_;
};

// Whether the call's budget has refused: the rest of its rows are not
// computed (the output is dropped).
bool BudgetRefused() {
  return current_budget != nullptr && !current_budget->status().ok();
}

// Whether n doubles have the same bits (inline, unlike memcmp's call).
inline bool SameBits(const double* a, const double* b, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    uint64_t x, y;
    std::memcpy(&x, a + k, sizeof x);
    std::memcpy(&y, b + k, sizeof y);
    if (x != y) return false;
  }
  return true;
}

}  // namespace

// The `slow` callback of the SIMD kernels: the per-value paths for one
// column of a segment.
struct RealSlowColumn {
  const RealEncodingPlan* plan;
  const RealEncodingPlan::Segment* segment;
  double x;
  std::byte* out;
  uint32_t base = 0;  // the kernel's column 0 is pair `base` of the segment
  // Not null: the kernel writes this output row (the whole_ segment), so
  // the pair goes there too, from the scratch row `out`.
  std::byte* row = nullptr;
  static void Call(void* self, uint32_t column) {
    const auto* s = static_cast<const RealSlowColumn*>(self);
    s->plan->ComputeValue(*s->segment, s->base + column, s->x, s->out);
    if (s->row != nullptr) s->plan->PlaceWholePair(column, s->out, s->row);
  }
};

RealEncodingPlan::RealEncodingPlan(const EncodingSpec& spec)
    : spec_(spec),
      multi_axis_(spec.multi_axis()),
      half_(spec.half()),
      pairs_(static_cast<uint32_t>(spec.pairs())),
      dtype_size_(DTypeSize(spec.dtype)),
      compute_layout_(multi_axis_ ? Layout::kConcatSinCos : spec.layout) {
  // Appends one run of words (padded for the kernels) for `count` pairs
  // whose frequency words are given by `at`.
  const auto append_run = [&](uint32_t count, auto at) {
    const size_t padded = RoundUpToKernelLanes(count);
    for (size_t i = 0; i < padded; ++i) {
      const FrequencyWords& f = at(std::min<size_t>(i, count - 1));
      freq_.push_back(f);
      w0_.push_back(f.w0);
      w1_.push_back(f.w1);
      w2_.push_back(f.w2);
    }
  };
  if (!multi_axis_) {
    const std::vector<FrequencyWords> words = RealFrequencies(spec);
    append_run(half_,
               [&](size_t i) -> const FrequencyWords& { return words[i]; });
    for (uint32_t c = 0; c < spec.coordinates; ++c) {
      segments_.push_back({c, c * half_, half_, half_, 0});
    }
  } else {
    sets_ = MultiAxisFrequencySets(spec);
    std::vector<std::vector<FrequencyWords>> set_words;
    set_words.reserve(sets_.size());
    for (const EncodingSpec& set : sets_) {
      set_words.push_back(RealFrequencies(set));
    }
    const std::vector<AxisPair> pairs = MultiAxisPairs(spec);
    // Computation order: coordinate by coordinate, each in row order.
    std::vector<std::vector<uint32_t>> by_coordinate(spec.coordinates);
    for (uint32_t j = 0; j < pairs.size(); ++j) {
      by_coordinate[pairs[j].coordinate].push_back(j);
    }
    for (uint32_t c = 0; c < spec.coordinates; ++c) {
      const std::vector<uint32_t>& js = by_coordinate[c];
      if (js.empty()) continue;
      const uint32_t count = static_cast<uint32_t>(js.size());
      // The scratch row's pairs are the words: whole vectors per segment.
      const uint32_t first = static_cast<uint32_t>(w0_.size());
      // The kernels compute whole vectors of 8 doubles (AVX-512; 2 of
      // AVX2's): no partial vector goes through the per-value paths. The
      // run itself holds RoundUpToKernelLanes(count) words.
      segments_.push_back({c, first, count, (count + 7) / 8 * 8, first});
      append_run(count, [&](size_t i) -> const FrequencyWords& {
        const AxisPair& p = pairs[js[i]];
        return set_words[p.set][p.index];
      });
      for (size_t i = 0; i < RoundUpToKernelLanes(count); ++i) {
        const AxisPair& p = pairs[js[std::min<size_t>(i, count - 1)]];
        word_set_.push_back(p.set);
        word_index_.push_back(p.index);
      }
      for (uint32_t i = 0; i < count; ++i) {
        src_.push_back(first + i);
        dst_.push_back(js[i]);
      }
    }
    // Runs per segment (segment_runs_[k] .. [k + 1] in runs_), so that a
    // point can place only the segments it changed.
    size_t at = 0;
    for (const Segment& seg : segments_) {
      segment_runs_.push_back(static_cast<uint32_t>(runs_.size()));
      const std::vector<PairRun> runs =
          PairRuns(&src_[at], &dst_[at], seg.count);
      runs_.insert(runs_.end(), runs.begin(), runs.end());
      at += seg.count;
    }
    segment_runs_.push_back(static_cast<uint32_t>(runs_.size()));
    if (spec.coordinates > 1) {
      // Every pair in row order: the row of a point whose coordinates are
      // equal.
      const uint32_t first = static_cast<uint32_t>(w0_.size());
      has_whole_ = true;
      whole_ = {0, first, pairs_, (pairs_ + 7) / 8 * 8, first};
      whole_run_ = {first, 0, pairs_};
      switch (spec.layout) {
        case Layout::kInterleaved:
        case Layout::kConcatSinCos:
        case Layout::kConcatCosSin:
          direct_whole_ = true;
          direct_layout_ = spec.layout;
          direct_half_ = pairs_;
          break;
        case Layout::kRotateHalf:
          direct_whole_ = true;
          direct_layout_ = Layout::kConcatCosSin;
          direct_half_ = 2 * pairs_;
          break;
        default:  // placed from the scratch row
          break;
      }
      append_run(pairs_, [&](size_t i) -> const FrequencyWords& {
        return set_words[pairs[i].set][pairs[i].index];
      });
      for (size_t i = 0; i < RoundUpToKernelLanes(pairs_); ++i) {
        const AxisPair& p = pairs[std::min<size_t>(i, pairs_ - 1)];
        word_set_.push_back(p.set);
        word_index_.push_back(p.index);
      }
    }
  }
  compute_pairs_ = multi_axis_ ? static_cast<uint32_t>(w0_.size()) : pairs_;
  double w0_max = 0;
  for (double w : w0_) w0_max = std::max(w0_max, w);
  // The largest |x| with |x| * F_max <= 2^24. F_max is within 2^-52 of
  // its first word, exactly it when the other words are zero (a scale of
  // a power of two, F_0 = scale).
  const FrequencyWords& top =
      *std::find_if(freq_.begin(), freq_.end(),
                    [&](const FrequencyWords& f) { return f.w0 == w0_max; });
  double m = kMaxAngle / w0_max;
  if (top.w1 == 0 && top.w2 == 0) {
    double p, e;
    TwoProd(m, w0_max, p, e);
    if (p > kMaxAngle || (p == kMaxAngle && e > 0)) m = std::nextafter(m, 0.0);
  } else {
    m *= 1 - 0x1p-50;
  }
  max_abs_position_ = m;
}

size_t RealEncodingPlan::MemoryBytes() const {
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  size_t total = bytes(segments_) + bytes(freq_) + bytes(w0_) + bytes(w1_) +
                 bytes(w2_) + bytes(sets_) + bytes(word_set_) +
                 bytes(word_index_) + bytes(src_) + bytes(dst_) + bytes(runs_) +
                 bytes(segment_runs_);
  for (const EncodingSpec& set : sets_) {
    total += bytes(set.axes_dim) + bytes(set.mrope_section);
  }
  return total + bytes(spec_.axes_dim) + bytes(spec_.mrope_section);
}

absl::StatusOr<RealEncodingPlan> RealEncodingPlan::Create(
    const EncodingSpec& spec, const SpecLimits& limits) {
  absl::Status status = ValidateEncodingSpec(spec, limits);
  if (!status.ok()) return status;
  if (spec.multi_axis()) {
    for (const EncodingSpec& set : MultiAxisFrequencySets(spec)) {
      status = RealFrequencyRangeError(set);
      if (!status.ok()) return status;
    }
  } else {
    status = RealFrequencyRangeError(spec);
    if (!status.ok()) return status;
  }
  return RealEncodingPlan(spec);
}

absl::Status RealEncodingPlan::ValidatePositions(
    absl::Span<const double> positions, uint32_t max_points) const {
  absl::StatusOr<uint32_t> points =
      CountPoints(positions.size(), spec_.coordinates, max_points);
  if (!points.ok()) return points.status();
  for (size_t k = 0; k < positions.size(); ++k) {
    const double x = positions[k];
    const double a = std::fabs(x);
    // The common case decided without building a name.
    if (std::isfinite(x) && (a == 0 || a >= kMinNonzeroPosition) &&
        a <= max_abs_position_) {
      continue;
    }
    return CheckPosition(x, absl::StrCat("positions[", k, "]"));
  }
  return absl::OkStatus();
}

absl::Status RealEncodingPlan::CheckPosition(double x,
                                             const std::string& name) const {
  const double a = std::fabs(x);
  if (!std::isfinite(x)) {
    return absl::OutOfRangeError(
        absl::StrCat(name, " = ", ShortestDouble(x), " is not finite"));
  }
  if (a != 0 && a < kMinNonzeroPosition) {
    return absl::OutOfRangeError(
        absl::StrCat(name, " = ", ShortestDouble(x),
                     ": a nonzero position must be at least 2^-64 in "
                     "magnitude"));
  }
  if (a > max_abs_position_) {
    return absl::OutOfRangeError(absl::StrCat(
        name, " = ", ShortestDouble(x),
        ": |position| times the largest frequency (scale included) must "
        "be at most 2^24, so |position| <= ",
        ShortestDouble(max_abs_position_)));
  }
  return absl::OkStatus();
}

absl::Status RealEncodingPlan::ValidateGrid(const PositionGrid& grid,
                                            uint32_t max_points) const {
  absl::StatusOr<uint32_t> points =
      CountGridPoints(grid, spec_.coordinates, max_points);
  if (!points.ok()) return points.status();
  for (size_t c = 0; c < grid.coordinates(); ++c) {
    // Integers: |v| <= max(|start|, |last|) for every value v of the axis.
    absl::Status s = CheckPosition(static_cast<double>(grid.start[c]),
                                   absl::StrCat("grid.axes[", c, "].start"));
    if (s.ok()) {
      s = CheckPosition(static_cast<double>(grid.last(c)),
                        absl::StrCat("grid.axes[", c, "]: the last value"));
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void RealEncodingPlan::ComputeGridRows(const PositionGrid& grid, std::byte* out,
                                       SlowPathBudget* budget) const {
  const BudgetScope scope(budget);
  const size_t row_bytes = spec_.row_bytes();
  const size_t coords = spec_.coordinates;
  uint64_t points = 1;
  for (uint32_t n : grid.count) points *= n;
  if (multi_axis_) {
    ComputeMultiAxisGridRows(grid, points, out);
    return;
  }
  std::vector<std::byte> scratch(
      multi_axis_ ? 2 * size_t{compute_pairs_} * DTypeSize(spec_.dtype) : 0);
  std::vector<double> point(coords), prev(coords);
  for (uint64_t p = 0; p < points && !BudgetRefused(); ++p) {
    GridPoint(grid, p, point.data());
    ComputeRowInto(point.data(), p > 0 ? prev.data() : nullptr,
                   out + p * row_bytes, scratch.data());
    point.swap(prev);
  }
}

void RealEncodingPlan::ComputeRows(absl::Span<const double> positions,
                                   std::byte* out,
                                   SlowPathBudget* budget) const {
  const BudgetScope scope(budget);
  if (multi_axis_) {
    ComputeMultiAxisRows(positions, out);
    return;
  }
  const size_t row_bytes = spec_.row_bytes();
  const size_t coords = spec_.coordinates;
  const size_t points = positions.size() / coords;
  std::vector<std::byte> scratch(
      multi_axis_ ? 2 * size_t{compute_pairs_} * DTypeSize(spec_.dtype) : 0);
  for (size_t p = 0; p < points && !BudgetRefused(); ++p) {
    const double* point = positions.data() + p * coords;
    // A batch often repeats its point (one diffusion timestep for every
    // sample): the same bits give the same row.
    if (p > 0 &&
        std::memcmp(point - coords, point, coords * sizeof(double)) == 0) {
      std::memcpy(out + p * row_bytes, out + (p - 1) * row_bytes, row_bytes);
      continue;
    }
    ComputeRowInto(point, p > 0 ? point - coords : nullptr, out + p * row_bytes,
                   scratch.data());
  }
}

void RealEncodingPlan::ComputeMultiAxisGridRows(const PositionGrid& grid,
                                                uint64_t points,
                                                std::byte* out) const {
  const size_t size = DTypeSize(spec_.dtype);
  const size_t row_bytes = spec_.row_bytes();
  const size_t half_bytes = size_t{compute_pairs_} * size;
  std::vector<std::byte> scratch(2 * half_bytes);
  // A segment whose axis repeats (an image's row id along the row, its
  // column id down the columns) gets its values at each of the axis's
  // values computed once, by the same paths, into a small table:
  // [value][sin of its columns | cos of its columns].
  std::vector<std::vector<std::byte>> tables(segments_.size());
  size_t table_bytes = 0;
  for (size_t k = 0; k < segments_.size(); ++k) {
    const Segment& s = segments_[k];
    const uint32_t n = grid.count[s.coordinate];
    const size_t seg_bytes = 2 * size_t{s.columns} * size;
    if (n >= points || table_bytes + n * seg_bytes > kMaxGridTableBytes) {
      continue;  // no repeat, or too large: computed per point
    }
    tables[k].resize(n * seg_bytes);
    table_bytes += n * seg_bytes;
    for (uint32_t v = 0; v < n && !BudgetRefused(); ++v) {
      ComputeSegment(s,
                     static_cast<double>(int64_t{grid.start[s.coordinate]} + v),
                     scratch.data());
      std::byte* t = tables[k].data() + v * seg_bytes;
      std::memcpy(t, scratch.data() + s.first * size, s.columns * size);
      std::memcpy(t + s.columns * size,
                  scratch.data() + half_bytes + s.first * size,
                  s.columns * size);
    }
  }
  const size_t coords = spec_.coordinates;
  std::vector<uint32_t> index(coords, 0), prev(coords, UINT32_MAX);
  for (uint64_t p = 0; p < points && !BudgetRefused(); ++p) {
    for (size_t k = 0; k < segments_.size(); ++k) {
      const Segment& s = segments_[k];
      const uint32_t v = index[s.coordinate];
      if (v == prev[s.coordinate]) continue;  // still in the scratch row
      if (tables[k].empty()) {
        ComputeSegment(
            s, static_cast<double>(int64_t{grid.start[s.coordinate]} + v),
            scratch.data());
        continue;
      }
      const std::byte* t = tables[k].data() + v * 2 * size_t{s.columns} * size;
      std::memcpy(scratch.data() + s.first * size, t, s.columns * size);
      std::memcpy(scratch.data() + half_bytes + s.first * size,
                  t + s.columns * size, s.columns * size);
    }
    PlaceRuns(spec_.layout, spec_.dtype, pairs_, runs_.data(), runs_.size(),
              scratch.data(), scratch.data() + half_bytes, out + p * row_bytes);
    prev = index;
    for (size_t c = coords; c-- > 0;) {  // row-major: the last axis fastest
      if (++index[c] < grid.count[c]) break;
      index[c] = 0;
    }
  }
}

void RealEncodingPlan::ComputeRow(const double* point, std::byte* row,
                                  SlowPathBudget* budget) const {
  const BudgetScope scope(budget);
  std::vector<std::byte> scratch(
      multi_axis_ ? 2 * size_t{compute_pairs_} * DTypeSize(spec_.dtype) : 0);
  ComputeRowInto(point, nullptr, row, scratch.data());
}

void RealEncodingPlan::ComputeRowInto(const double* point, const double* prev,
                                      std::byte* row,
                                      std::byte* scratch) const {
  const DType dtype = spec_.dtype;
  const size_t size = DTypeSize(dtype);
  if (multi_axis_) {
    for (const Segment& s : segments_) {
      const double* x = point + s.coordinate;
      // An image's ids repeat along rows (FLUX's (0, row, col)): the same
      // bits give the same values, still in the scratch row.
      if (prev != nullptr &&
          std::memcmp(prev + s.coordinate, x, sizeof(double)) == 0) {
        continue;
      }
      ComputeSegment(s, *x, scratch);
    }
    PlaceRuns(spec_.layout, dtype, pairs_, runs_.data(), runs_.size(), scratch,
              scratch + size_t{compute_pairs_} * size, row);
    return;
  }
  for (const Segment& s : segments_) {
    ComputeSegment(s, point[s.coordinate], row);
  }
  size_t column = 2 * size_t{pairs_};
  if (spec_.pad_odd_dim) {
    StoreBits(EncodeExact(0.0, dtype), dtype, row + column * size);
    ++column;
  }
  if (spec_.include_input) {
    for (uint32_t c = 0; c < spec_.coordinates; ++c, ++column) {
      StoreBits(RoundInputToBits(point[c], dtype), dtype, row + column * size);
    }
  }
}

void RealEncodingPlan::StorePair(size_t k, uint64_t sin_bits, uint64_t cos_bits,
                                 std::byte* out) const {
  PlacePair(compute_layout_, spec_.dtype, compute_pairs_, k, sin_bits, cos_bits,
            out);
}

void RealEncodingPlan::ComputeSegment(const Segment& s, double x,
                                      std::byte* out) const {
  const DType dtype = spec_.dtype;
  if (x == 0) {  // sin(+-0) is exactly 0, taken as +0; cos(0) = 1
    const uint64_t zero = EncodeExact(0.0, dtype),
                   one = EncodeExact(1.0, dtype);
    for (uint32_t i = 0; i < s.count; ++i)
      StorePair(s.first + i, zero, one, out);
    return;
  }
  const double* w0 = w0_.data() + s.words;
  const double* w1 = w1_.data() + s.words;
  const double* w2 = w2_.data() + s.words;
  if (dtype != DType::kFloat64) {
    // One pass per row: the fast sin/cos rounded to float32 or to 16 bits.
    // The kernel places column i of a row of compute_pairs_ pairs; the
    // segment's pairs start s.first pairs in.
    const size_t offset = compute_layout_ == Layout::kInterleaved
                              ? 2 * size_t{s.first}
                              : size_t{s.first};
    RealSlowColumn ctx{this, &s, x, out};
    const bool done =
        dtype == DType::kFloat32
            ? Float32RowSimd(w0, w1, s.columns, compute_pairs_, compute_layout_,
                             x, reinterpret_cast<float*>(out) + offset,
                             RealSlowColumn::Call, &ctx)
            : Half16RowSimd(w0, w1, s.columns, compute_pairs_, compute_layout_,
                            x, dtype == DType::kBFloat16,
                            reinterpret_cast<uint16_t*>(out) + offset,
                            RealSlowColumn::Call, &ctx);
    if (done) return;
  } else {
    // float64: blocks of kBlock pairs, sin/cos in double-double, then
    // rounded by the anchor-row mode of the range kernels (relative slack;
    // row_kernel_simd.h), which calls the per-value paths for what it
    // leaves undecided.
    double s_hi[kBlock], s_lo[kBlock], c_hi[kBlock], c_lo[kBlock];
    RealSlowColumn ctx{this, &s, x, out};
    uint32_t done = 0;
    for (uint32_t i = 0; i < s.columns; i += kBlock) {
      const uint32_t n = std::min(kBlock, s.columns - i);
      const size_t pair = size_t{s.first} + i;  // the block's first pair
      const size_t offset =
          compute_layout_ == Layout::kInterleaved ? 2 * pair : pair;
      ctx.base = i;
      // Risky values come with NaN high words: undecided by the kernel.
      const bool ok =
          DdSinCosColumnsSimd(w0 + i, w1 + i, w2 + i, n, x, s_hi, s_lo, c_hi,
                              c_lo) &&
          Float64RowFromAnchorSimd(
              {s_hi, s_lo, c_hi, c_lo, nullptr, nullptr, nullptr, nullptr}, n,
              compute_pairs_, compute_layout_,
              reinterpret_cast<double*>(out) + offset,
              /*stream=*/false, RealSlowColumn::Call, &ctx);
      if (!ok) break;  // no SIMD target with FMA on this CPU
      done = i + n;
    }
    for (uint32_t i = done; i < s.columns; ++i) ComputeValue(s, i, x, out);
    return;
  }
  // No SIMD target with FMA on this CPU.
  for (uint32_t i = 0; i < s.columns; ++i) ComputeValue(s, i, x, out);
}

void RealEncodingPlan::ComputeValue(const Segment& s, uint32_t i, double x,
                                    std::byte* out) const {
  const DType dtype = spec_.dtype;
  const size_t k = size_t{s.first} + i;
  const size_t w = size_t{s.words} + i;
  uint64_t sb, cb;
  if (x == 0) {
    StorePair(k, EncodeExact(0.0, dtype), EncodeExact(1.0, dtype), out);
    return;
  }
  if (dtype != DType::kFloat64) {
    const FastSinCos v = FastSinCosScalar(x, w0_[w], w1_[w]);
    if (!v.risky &&
        RoundWithin(v.sin, kFastCheckSlack * std::fabs(v.sin), dtype, &sb) &&
        RoundWithin(v.cos, kFastCheckSlack * std::fabs(v.cos), dtype, &cb)) {
      StorePair(k, sb, cb, out);
      return;
    }
  }
  const DoubleDoubleSinCos v = DoubleDoubleSinCosOf(x, freq_[w]);
  if (RoundDoubleDoubleIfDecided(v.sin, dtype, &sb) &&
      RoundDoubleDoubleIfDecided(v.cos, dtype, &cb)) {
    StorePair(k, sb, cb, out);
    return;
  }
  if (multi_axis_) {
    // Exponential frequencies only: never a whole quarter turn.
    const EncodingSpec& set = sets_[word_set_[w]];
    const uint32_t index = word_index_[w];
    ExactSinCosBitsOfReal([&](mpfr_ptr f) { RealFrequencyMpfr(set, index, f); },
                          x, dtype, current_budget, &sb, &cb);
    StorePair(k, sb, cb, out);
    return;
  }
  if (spec_.scheme == FrequencyScheme::kOctaves) {
    // x * F = m * pi / 2 exactly: sin and cos are 0 or +-1.
    const std::optional<int32_t> e = IntegerOctaveExponent(spec_, i);
    int64_t m;
    if (e.has_value() &&
        WholeQuarterTurns(x, spec_.scale, spec_.scale_divisor, *e, &m)) {
      static constexpr double kSin[4] = {0.0, 1.0, 0.0, -1.0};
      static constexpr double kCos[4] = {1.0, 0.0, -1.0, 0.0};
      const int q = static_cast<int>(((m % 4) + 4) % 4);
      StorePair(k, EncodeExact(kSin[q], dtype), EncodeExact(kCos[q], dtype),
                out);
      return;
    }
  }
  ExactSinCosBitsOfReal([&](mpfr_ptr f) { RealFrequencyMpfr(spec_, i, f); }, x,
                        dtype, current_budget, &sb, &cb);
  StorePair(k, sb, cb, out);
}

// The per-call state of multi-axis ComputeRows. Arrays indexed by word hold
// each segment's values at its own words; the table's row j at
// [j * words + w]. Segment k's scratch values are those of `current[k]`
// when `has_current[k]`.
struct RealEncodingPlan::AngleState {
  AngleState(const RealEncodingPlan& plan, size_t segments)
      : words(plan.w0_.size()),
        step(Step(plan)),
        f64(plan.spec_.dtype == DType::kFloat64),
        f16(plan.spec_.dtype == DType::kFloat16 ||
            plan.spec_.dtype == DType::kBFloat16),
        anchor(segments, 0),
        has_anchor(segments, 0),
        current(segments, 0),
        has_current(segments, 0),
        s0(words),
        c0(words),
        s0_lo(f64 ? words : 0),
        c0_lo(f64 ? words : 0),
        s0_f(f16 ? words : 0),
        c0_f(f16 ? words : 0),
        risky(words),
        built(segments * step, 0) {}

  // kAngleStep, halved while the table would exceed kMaxAngleTableBytes;
  // 0 (every segment direct) below 2, or when some j * F could exceed
  // 2^24 (the |position| limit below step - 1).
  static uint32_t Step(const RealEncodingPlan& plan) {
    const DType dtype = plan.spec_.dtype;
    const size_t bytes_per_j =
        plan.w0_.size() * (dtype == DType::kFloat64   ? 32
                           : dtype == DType::kFloat32 ? 16
                                                      : 24);
    uint32_t step = kAngleStep;
    while (step >= 2 && step * bytes_per_j > kMaxAngleTableBytes) step /= 2;
    return step >= 2 && plan.max_abs_position_ >= step - 1 ? step : 0;
  }

  const size_t words;
  // Table rows j < step; 0: every segment direct (also when no SIMD
  // target).
  uint32_t step;
  const bool f64, f16;
  std::vector<double> anchor;  // the anchor's coordinate, per segment
  std::vector<uint8_t> has_anchor;
  std::vector<uint64_t> current;  // bits of the scratch row's coordinate
  std::vector<uint8_t> has_current;
  // Anchors: sin/cos(x0 F) (float64: double-double, NaN high word where
  // risky; 16-bit: also rounded to float32 for the float32-lane kernel).
  KernelVector<double> s0, c0, s0_lo, c0_lo;
  KernelVector<float> s0_f, c0_f;
  std::vector<uint8_t> risky;
  // The table, allocated on first use (left uninitialised: a row is
  // written before it is read); built[k * step + j]: segment k's words of
  // row j.
  std::unique_ptr<double[]> sj, cj, sj_lo, cj_lo;
  std::unique_ptr<float[]> sj_f, cj_f;
  std::vector<uint8_t> built;
  // ComputeSegmentRun's scratch rows.
  std::vector<std::byte> run_rows;
};

void RealEncodingPlan::ComputeMultiAxisRows(absl::Span<const double> positions,
                                            std::byte* out) const {
  const size_t row_bytes = spec_.row_bytes();
  const size_t coords = spec_.coordinates;
  const size_t points = positions.size() / coords;
  const size_t half_bytes = size_t{compute_pairs_} * dtype_size_;
  std::vector<std::byte> scratch(2 * half_bytes);
  AngleState st(*this, segments_.size() + 1);
  // Whether the previous row holds every segment's current values (the
  // scratch row's): then a point copies it and places only the segments it
  // changed (an image token: its width id).
  bool previous_holds_segments = false;
  for (size_t p = 0; p < points && !BudgetRefused(); ++p) {
    const double* point = positions.data() + p * coords;
    std::byte* row = out + p * row_bytes;
    // A batch often repeats its point: the same bits give the same row.
    if (p > 0 && SameBits(point - coords, point, coords)) {
      std::memcpy(row, row - row_bytes, row_bytes);
      continue;
    }
    bool whole = has_whole_;
    for (size_t c = 1; whole && c < coords; ++c) {
      whole = SameBits(point, point + c, 1);
    }
    if (whole) {
      previous_holds_segments = false;
      if (ComputeSegmentAt(whole_, segments_.size(), point[0], st,
                           scratch.data(),
                           direct_whole_ ? row : nullptr) != Wrote::kRow) {
        PlaceRuns(spec_.layout, spec_.dtype, pairs_, &whole_run_, 1,
                  scratch.data(), scratch.data() + half_bytes, row);
      } else {
        CopyRotateHalf(row, 1);
        // The text tokens after it, x + 1, x + 2, ... from the same
        // anchor: one kernel call for the run.
        const size_t run =
            ComputeWholeRun(positions, p, st, scratch.data(), out);
        CopyRotateHalf(row + row_bytes, run);
        p += run;
      }
      continue;
    }
    if (previous_holds_segments) std::memcpy(row, row - row_bytes, row_bytes);
    size_t changed = 0, last = 0;
    for (size_t k = 0; k < segments_.size(); ++k) {
      const Segment& s = segments_[k];
      const Wrote wrote = ComputeSegmentAt(s, k, point[s.coordinate], st,
                                           scratch.data(), nullptr);
      if (wrote != Wrote::kScratch) continue;
      ++changed;
      last = k;
      if (previous_holds_segments) PlaceSegment(k, scratch.data(), row);
    }
    if (!previous_holds_segments) {
      PlaceRuns(spec_.layout, spec_.dtype, pairs_, runs_.data(), runs_.size(),
                scratch.data(), scratch.data() + half_bytes, row);
    }
    previous_holds_segments = true;
    if (changed == 1) {
      // An image row: the points after it that step only this segment's
      // coordinate by one from its anchor, in one kernel call.
      p += ComputeSegmentRun(positions, p, last, st, scratch.data(), out);
    }
  }
}

void RealEncodingPlan::PlaceSegment(size_t k, const std::byte* scratch,
                                    std::byte* row) const {
  PlaceRuns(spec_.layout, spec_.dtype, pairs_, &runs_[segment_runs_[k]],
            segment_runs_[k + 1] - segment_runs_[k], scratch,
            scratch + size_t{compute_pairs_} * dtype_size_, row);
}

// The `slow` callback of a run of one segment's rows: column r * count + i
// is pair i of the segment in the run's scratch row r, at x0 + j + r.
struct RealSlowSegmentRunColumn {
  const RealEncodingPlan* plan;
  const RealEncodingPlan::Segment* segment;
  double x0;
  uint32_t j;       // the run's first row's
  std::byte* rows;  // the run's scratch rows
  size_t row_bytes;
  static void Call(void* self, uint32_t column) {
    const auto* s = static_cast<const RealSlowSegmentRunColumn*>(self);
    const uint32_t r = column / s->segment->count;
    const uint32_t i = column % s->segment->count;
    const double x = s->x0 + (s->j + r);  // exact (checked by the caller)
    s->plan->ComputeValue(*s->segment, i, x, s->rows + r * s->row_bytes);
  }
};

size_t RealEncodingPlan::ComputeSegmentRun(absl::Span<const double> positions,
                                           size_t p, size_t k, AngleState& st,
                                           std::byte* scratch,
                                           std::byte* out) const {
  if (st.step == 0 || !st.has_anchor[k]) return 0;
  const Segment& s = segments_[k];
  const size_t coords = spec_.coordinates;
  const size_t points = positions.size() / coords;
  const double* base = positions.data() + p * coords;
  const double x0 = st.anchor[k];
  const double jp = base[s.coordinate] - x0;  // exact: point p's
  if (!(jp >= 0 && jp < st.step)) return 0;
  const uint32_t first = static_cast<uint32_t>(jp) + 1;
  size_t n = 0;
  for (uint32_t j = first; j < st.step && p + 1 + n < points; ++j, ++n) {
    const double* point = base + (1 + n) * coords;
    bool same = true;  // every other coordinate as point p's
    for (size_t c = 0; same && c < coords; ++c) {
      same = c == s.coordinate || SameBits(point + c, base + c, 1);
    }
    double sum, err;
    TwoSum(x0, j, sum, err);
    const double x = point[s.coordinate];
    if (!same || x == 0 || sum != x || err != 0) break;
    if (!st.built[k * st.step + j] && !EnsureTableRow(s, k, j, st)) return 0;
  }
  if (n < 2) return 0;  // not worth the run's scratch rows
  // The run's rows in scratch rows of their own (the segment's part only).
  const size_t scratch_bytes = 2 * size_t{compute_pairs_} * dtype_size_;
  std::vector<std::byte>& rows = st.run_rows;
  rows.resize(n * scratch_bytes);
  const size_t w = s.words, at = size_t{first} * st.words + w;
  RealSlowSegmentRunColumn ctx{this, &s, x0, first, rows.data(), scratch_bytes};
  AnchorRun run;
  run.rows = static_cast<uint32_t>(n);
  run.table_stride = st.words;
  run.row_stride = scratch_bytes / dtype_size_;
  std::byte* first_row = rows.data() + size_t{s.first} * dtype_size_;
  bool ok = false;
  switch (spec_.dtype) {
    case DType::kFloat32:
      ok = Float32RowsFromAnchorSimd(&st.s0[w], &st.c0[w], &st.sj[at],
                                     &st.cj[at], run, s.count, compute_pairs_,
                                     Layout::kConcatSinCos,
                                     reinterpret_cast<float*>(first_row),
                                     RealSlowSegmentRunColumn::Call, &ctx);
      break;
    case DType::kFloat64: {
      const DdArrays a{&st.s0[w],  &st.s0_lo[w],  &st.c0[w],  &st.c0_lo[w],
                       &st.sj[at], &st.sj_lo[at], &st.cj[at], &st.cj_lo[at]};
      ok = Float64RowsFromAnchorSimd(a, run, s.count, compute_pairs_,
                                     Layout::kConcatSinCos,
                                     reinterpret_cast<double*>(first_row),
                                     RealSlowSegmentRunColumn::Call, &ctx);
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const Half16Arrays a{&st.s0_f[w], &st.c0_f[w], &st.sj_f[at], &st.cj_f[at],
                           &st.s0[w],   &st.c0[w],   &st.sj[at],   &st.cj[at]};
      ok = Half16RowsFromAnchorF32Simd(a, run, s.count, compute_pairs_,
                                       Layout::kConcatSinCos,
                                       spec_.dtype == DType::kBFloat16,
                                       reinterpret_cast<uint16_t*>(first_row),
                                       RealSlowSegmentRunColumn::Call, &ctx);
      break;
    }
  }
  if (!ok) return 0;
  const size_t row_bytes = spec_.row_bytes();
  std::byte* row = out + (p + 1) * row_bytes;
  for (size_t r = 0; r < n; ++r, row += row_bytes) {
    std::memcpy(row, row - row_bytes, row_bytes);
    PlaceSegment(k, rows.data() + r * scratch_bytes, row);
  }
  // The scratch row holds the segment at the run's last point.
  const std::byte* last = rows.data() + (n - 1) * scratch_bytes;
  const size_t off = size_t{s.first} * dtype_size_;
  const size_t len = size_t{s.count} * dtype_size_;
  const size_t half_bytes = scratch_bytes / 2;
  std::memcpy(scratch + off, last + off, len);
  std::memcpy(scratch + half_bytes + off, last + half_bytes + off, len);
  const double x = base[n * coords + s.coordinate];
  std::memcpy(&st.current[k], &x, sizeof x);
  st.has_current[k] = 1;
  return n;
}

RealEncodingPlan::Wrote RealEncodingPlan::ComputeSegmentAt(
    const Segment& s, size_t k, double x, AngleState& st, std::byte* scratch,
    std::byte* row) const {
  if (row == nullptr) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if (st.has_current[k] && st.current[k] == bits) return Wrote::kNothing;
    st.has_current[k] = 1;
    st.current[k] = bits;
  }
  if (x != 0 && st.step != 0 && st.has_anchor[k]) {
    // x = x0 + j exactly, j an integer in [0, step): angle addition.
    const double x0 = st.anchor[k];
    const double j = x - x0;
    double sum, err;
    TwoSum(x0, j, sum, err);
    const uint32_t ji = j >= 0 && j < st.step ? static_cast<uint32_t>(j) : 0;
    if (ji == j && sum == x && err == 0 &&
        RoundFromAnchor(s, k, ji, x, st, scratch, row)) {
      return row != nullptr ? Wrote::kRow : Wrote::kScratch;
    }
  }
  // Computed directly, as the anchor of the points that follow.
  if (x != 0 && st.step != 0 && SetAnchor(s, k, x, st) &&
      RoundFromAnchor(s, k, 0, x, st, scratch, row)) {
    return row != nullptr ? Wrote::kRow : Wrote::kScratch;
  }
  // sin(+-0) = +0 and cos(0) = 1 exactly; without a SIMD target (st.step
  // stays 0), every value by ComputeSegment's paths.
  if (x == 0 && st.step != 0) {
    SetAnchor(s, k, 0, st);
  } else {
    st.step = 0;
  }
  ComputeSegment(s, x, scratch);
  return Wrote::kScratch;
}

void RealEncodingPlan::CopyRotateHalf(std::byte* row, size_t rows) const {
  if (spec_.layout != Layout::kRotateHalf) return;
  // The kernel wrote cos at [0, K) and sin at [2K, 3K): the copies.
  const size_t half_row = size_t{pairs_} * dtype_size_;
  for (size_t r = 0; r < rows; ++r, row += 4 * half_row) {
    std::memcpy(row + half_row, row, half_row);
    std::memcpy(row + 3 * half_row, row + 2 * half_row, half_row);
  }
}

// The `slow` callback of a run of whole rows: column r * pairs + i is pair
// i of the run's row r, at x0 + j + r.
struct RealSlowRunColumn {
  const RealEncodingPlan* plan;
  double x0;
  uint32_t j;  // the run's first row's
  std::byte* scratch;
  std::byte* row;  // the run's first row
  size_t row_bytes;
  static void Call(void* self, uint32_t column) {
    const auto* s = static_cast<const RealSlowRunColumn*>(self);
    const uint32_t r = column / s->plan->pairs_, i = column % s->plan->pairs_;
    const double x = s->x0 + (s->j + r);  // exact (checked by the caller)
    s->plan->ComputeValue(s->plan->whole_, i, x, s->scratch);
    s->plan->PlaceWholePair(i, s->scratch, s->row + r * s->row_bytes);
  }
};

size_t RealEncodingPlan::ComputeWholeRun(absl::Span<const double> positions,
                                         size_t p, AngleState& st,
                                         std::byte* scratch,
                                         std::byte* out) const {
  const size_t k = segments_.size();  // whole_'s
  if (st.step == 0 || !st.has_anchor[k]) return 0;
  const size_t coords = spec_.coordinates;
  const size_t points = positions.size() / coords;
  const double x0 = st.anchor[k];
  const double jp = positions[p * coords] - x0;  // exact: point p's
  if (!(jp >= 0 && jp < st.step)) return 0;
  const uint32_t first = static_cast<uint32_t>(jp) + 1;
  size_t n = 0;
  for (uint32_t j = first; j < st.step && p + 1 + n < points; ++j, ++n) {
    const double* point = positions.data() + (p + 1 + n) * coords;
    bool whole = point[0] != 0;
    for (size_t c = 1; whole && c < coords; ++c) {
      whole = SameBits(point, point + c, 1);
    }
    double sum, err;
    TwoSum(x0, j, sum, err);
    if (!whole || sum != point[0] || err != 0) break;
    if (!st.built[k * st.step + j] && !EnsureTableRow(whole_, k, j, st)) {
      return 0;
    }
  }
  if (n == 0) return 0;
  const size_t w = whole_.words, at = size_t{first} * st.words + w;
  const size_t row_bytes = spec_.row_bytes();
  std::byte* row = out + (p + 1) * row_bytes;
  RealSlowRunColumn ctx{this, x0, first, scratch, row, row_bytes};
  AnchorRun run;
  run.rows = static_cast<uint32_t>(n);
  run.table_stride = st.words;
  run.row_stride = row_bytes / dtype_size_;
  bool ok = false;
  switch (spec_.dtype) {
    case DType::kFloat32:
      ok = Float32RowsFromAnchorSimd(
          &st.s0[w], &st.c0[w], &st.sj[at], &st.cj[at], run, pairs_,
          direct_half_, direct_layout_, reinterpret_cast<float*>(row),
          RealSlowRunColumn::Call, &ctx);
      break;
    case DType::kFloat64: {
      const DdArrays a{&st.s0[w],  &st.s0_lo[w],  &st.c0[w],  &st.c0_lo[w],
                       &st.sj[at], &st.sj_lo[at], &st.cj[at], &st.cj_lo[at]};
      ok = Float64RowsFromAnchorSimd(
          a, run, pairs_, direct_half_, direct_layout_,
          reinterpret_cast<double*>(row), RealSlowRunColumn::Call, &ctx);
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const Half16Arrays a{&st.s0_f[w], &st.c0_f[w], &st.sj_f[at], &st.cj_f[at],
                           &st.s0[w],   &st.c0[w],   &st.sj[at],   &st.cj[at]};
      ok = Half16RowsFromAnchorF32Simd(
          a, run, pairs_, direct_half_, direct_layout_,
          spec_.dtype == DType::kBFloat16, reinterpret_cast<uint16_t*>(row),
          RealSlowRunColumn::Call, &ctx);
      break;
    }
  }
  return ok ? n : 0;
}

void RealEncodingPlan::PlaceWholePair(uint32_t i, const std::byte* scratch,
                                      std::byte* row) const {
  const DType dtype = spec_.dtype;
  const size_t size = dtype_size_;
  const size_t k = size_t{whole_.first} + i;
  uint64_t sin_bits = 0, cos_bits = 0;
  std::memcpy(&sin_bits, scratch + k * size, size);
  std::memcpy(&cos_bits, scratch + (compute_pairs_ + k) * size, size);
  PlacePair(spec_.layout, dtype, pairs_, i, sin_bits, cos_bits, row);
}

void RealEncodingPlan::AccurateSinCos(size_t w, double x, double* s,
                                      double* c) const {
  // Without `risky` the double-double value is within 2^-98 relative; with
  // it, within 2^-128 absolute + 2^-98 relative, which is 2^-67 relative
  // from 2^-60 up. hi adds 2^-53.
  const DoubleDoubleSinCos v = DoubleDoubleSinCosOf(x, freq_[w]);
  constexpr double kTiny = 0x1p-60;
  if (!v.risky ||
      (std::fabs(v.sin.hi) >= kTiny && std::fabs(v.cos.hi) >= kTiny)) {
    *s = v.sin.hi;
    *c = v.cos.hi;
    return;
  }
  uint64_t sb, cb;
  const EncodingSpec& set = sets_[word_set_[w]];
  const uint32_t index = word_index_[w];
  ExactSinCosBitsOfReal([&](mpfr_ptr f) { RealFrequencyMpfr(set, index, f); },
                        x, DType::kFloat64, current_budget, &sb, &cb);
  std::memcpy(s, &sb, sizeof sb);
  std::memcpy(c, &cb, sizeof cb);
}

bool RealEncodingPlan::SetAnchor(const Segment& s, size_t k, double x,
                                 AngleState& st) const {
  const size_t w = s.words, padded = RoundUpToKernelLanes(s.count);
  if (x == 0) {  // exactly 0 and 1
    std::fill_n(&st.s0[w], padded, 0.0);
    std::fill_n(&st.c0[w], padded, 1.0);
    if (st.f64) {
      std::fill_n(&st.s0_lo[w], padded, 0.0);
      std::fill_n(&st.c0_lo[w], padded, 0.0);
    }
  } else if (st.f64) {
    if (!DdSinCosColumnsSimd(&w0_[w], &w1_[w], &w2_[w], s.count, x, &st.s0[w],
                             &st.s0_lo[w], &st.c0[w], &st.c0_lo[w])) {
      return false;
    }
  } else {
    if (!SinCosColumnsSimd(&w0_[w], &w1_[w], s.count, x, &st.s0[w], &st.c0[w],
                           &st.risky[w])) {
      return false;
    }
    for (uint32_t i = 0; i < s.count; ++i) {
      if (st.risky[w + i])
        AccurateSinCos(w + i, x, &st.s0[w + i], &st.c0[w + i]);
    }
  }
  if (st.f16) {
    std::copy_n(&st.s0[w], padded, &st.s0_f[w]);
    std::copy_n(&st.c0[w], padded, &st.c0_f[w]);
  }
  st.anchor[k] = x;
  st.has_anchor[k] = 1;
  return true;
}

bool RealEncodingPlan::EnsureTableRow(const Segment& s, size_t k, uint32_t j,
                                      AngleState& st) const {
  uint8_t& built = st.built[k * st.step + j];
  if (built) return true;
  const size_t size = size_t{st.step} * st.words;
  if (st.sj == nullptr) {
    st.sj.reset(new double[size]);
    st.cj.reset(new double[size]);
    if (st.f64) {
      st.sj_lo.reset(new double[size]);
      st.cj_lo.reset(new double[size]);
    }
    if (st.f16) {
      st.sj_f.reset(new float[size]);
      st.cj_f.reset(new float[size]);
    }
  }
  const size_t w = s.words, at = size_t{j} * st.words + w;
  const size_t padded = RoundUpToKernelLanes(s.count);
  const double pos = j;
  if (st.f64) {
    if (!DdSinCosColumnsSimd(&w0_[w], &w1_[w], &w2_[w], s.count, pos,
                             &st.sj[at], &st.sj_lo[at], &st.cj[at],
                             &st.cj_lo[at])) {
      return false;
    }
  } else {
    if (!SinCosColumnsSimd(&w0_[w], &w1_[w], s.count, pos, &st.sj[at],
                           &st.cj[at], &st.risky[w])) {
      return false;
    }
    for (uint32_t i = 0; i < s.count; ++i) {
      if (st.risky[w + i]) {
        AccurateSinCos(w + i, pos, &st.sj[at + i], &st.cj[at + i]);
      }
    }
    if (st.f16) {
      std::copy_n(&st.sj[at], padded, &st.sj_f[at]);
      std::copy_n(&st.cj[at], padded, &st.cj_f[at]);
    }
  }
  built = 1;
  return true;
}

bool RealEncodingPlan::RoundFromAnchor(const Segment& s, size_t k, uint32_t j,
                                       double x, AngleState& st,
                                       std::byte* scratch,
                                       std::byte* row) const {
  if (j != 0 && !st.built[k * st.step + j] && !EnsureTableRow(s, k, j, st)) {
    return false;
  }
  const size_t w = s.words, at = size_t{j} * st.words + w;
  RealSlowColumn ctx{this, &s, x, scratch};
  ctx.row = row;
  // The scratch row (computation order, kConcatSinCos), or the output row
  // (whole_ only: pair i of the segment is pair i of the row).
  std::byte* out =
      row != nullptr ? row : scratch + size_t{s.first} * dtype_size_;
  const Layout layout = row != nullptr ? direct_layout_ : Layout::kConcatSinCos;
  const uint32_t half = row != nullptr ? direct_half_ : compute_pairs_;
  switch (spec_.dtype) {
    case DType::kFloat32:
      return Float32RowFromAnchorSimd(
          &st.s0[w], &st.c0[w], j == 0 ? nullptr : &st.sj[at],
          j == 0 ? &st.c0[w] : &st.cj[at], s.count, half, layout,
          reinterpret_cast<float*>(out),
          /*stream=*/false, RealSlowColumn::Call, &ctx);
    case DType::kFloat64: {
      DdArrays a{&st.s0[w], &st.s0_lo[w], &st.c0[w], &st.c0_lo[w],
                 nullptr,   nullptr,      nullptr,   nullptr};
      if (j != 0) {
        a.sj_hi = &st.sj[at];
        a.sj_lo = &st.sj_lo[at];
        a.cj_hi = &st.cj[at];
        a.cj_lo = &st.cj_lo[at];
      }
      return Float64RowFromAnchorSimd(
          a, s.count, half, layout, reinterpret_cast<double*>(out),
          /*stream=*/false, RealSlowColumn::Call, &ctx);
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const bool bf16 = spec_.dtype == DType::kBFloat16;
      uint16_t* out16 = reinterpret_cast<uint16_t*>(out);
      if (j == 0) {
        return Half16RowFromAnchorSimd(&st.s0[w], &st.c0[w], nullptr, &st.c0[w],
                                       s.count, half, layout, bf16, out16,
                                       RealSlowColumn::Call, &ctx);
      }
      const Half16Arrays a{&st.s0_f[w], &st.c0_f[w], &st.sj_f[at], &st.cj_f[at],
                           &st.s0[w],   &st.c0[w],   &st.sj[at],   &st.cj[at]};
      return Half16RowFromAnchorF32Simd(a, s.count, half, layout, bf16, out16,
                                        RealSlowColumn::Call, &ctx);
    }
  }
  return false;
}

}  // namespace posenc
