// RealEncodingPlan: an encoding of real-valued points
// (core/spec/encoding_spec.h) with its exact frequencies split into double
// words, built once per spec (a server keeps the last few,
// core/cache/real_encoding_plan_cache.h) and then used to compute any point's
// row exactly: every value is the exact sin/cos(x * F_i), correctly rounded
// once (RNE) to the dtype.
//
// Each value takes the first path that decides it: the SIMD fast path
// (relative error 2^-47), the double-double path (absolute error 2^-125
// plus 2^-96 relative, so it also decides values near a zero crossing),
// whole quarter turns (octave frequencies with an integer exponent, where
// the exact value is 0 or +-1), then MPFR (Ziv's loop).
//
// A row is computed coordinate by coordinate: a segment is the pairs that
// rotate by one coordinate, with their frequencies' words side by side
// (plain specs: coordinate c's half pairs, all with the same frequencies,
// written in place by the kernels; multi-axis RoPE, core/spec/multi_axis.h:
// the pairs of coordinate c wherever they sit in the row, computed into a
// scratch row in segment order, then placed by the layout).
//
// Multi-axis ComputeRows also runs angle addition along runs of points
// (core/numerics/angle_addition.h, the table kernels' identity and bounds): a
// segment whose coordinate is x0 + j, 0 <= j < kAngleStep, exactly, with x0
// the segment's anchor (the last coordinate it computed directly), takes
// sin/cos(x F) = sin(x0 F) cos(j F) + cos(x0 F) sin(j F) from the anchor's
// sin/cos and a per-call table of sin/cos(j F) built row by row as the
// points need them. A point whose coordinates are all equal (a text token's
// (p, p, p)) is one segment of every pair in row order: a plain RoPE row.
// The image tokens of a grid step their width coordinate by one.
//
// Construction costs O(half) MPFR products at 256 bits (~20 us for 160
// frequencies). Immutable after construction: ComputeRows is thread-safe.
#ifndef POSENC_CORE_PLAN_REAL_ENCODING_PLAN_H_
#define POSENC_CORE_PLAN_REAL_ENCODING_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/numerics/kernel_vector.h"
#include "core/plan/slow_path_budget.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/exact_frequency.h"
#include "core/spec/multi_axis.h"
#include "core/spec/position_grid.h"

namespace posenc {

class RealEncodingPlan {
 public:
  // INVALID_ARGUMENT as ValidateEncodingSpec, or when a frequency
  // (scale included) lies outside [2^-800, 2^24] (naming the fields; for
  // multi-axis specs, any axis's frequencies).
  static absl::StatusOr<RealEncodingPlan> Create(const EncodingSpec& spec,
                                                 const SpecLimits& limits);

  const EncodingSpec& spec() const { return spec_; }

  // Heap bytes the plan holds (its arrays), for caches' bounds.
  size_t MemoryBytes() const;

  // The largest |x| a coordinate may have: 2^24 / F_max, rounded down.
  double max_abs_position() const { return max_abs_position_; }

  // Checks the points of a request: INVALID_ARGUMENT when there are none,
  // more than max_points, or a count that is not a multiple of
  // coordinates; OUT_OF_RANGE naming the first positions[k] that is not
  // finite, or nonzero below 2^-64 in magnitude, or above
  // max_abs_position().
  absl::Status ValidatePositions(absl::Span<const double> positions,
                                 uint32_t max_points) const;

  // Checks a grid of points (core/spec/position_grid.h): INVALID_ARGUMENT as
  // CountGridPoints; OUT_OF_RANGE naming grid.axes[c] when an end of axis c
  // is out of the positions' range (every value between lies between them).
  absl::Status ValidateGrid(const PositionGrid& grid,
                            uint32_t max_points) const;

  // Writes the rows of the grid's points, row-major, as ComputeRows.
  // Precondition: ValidateGrid is OK.
  void ComputeGridRows(const PositionGrid& grid, std::byte* out,
                       SlowPathBudget* budget = nullptr) const;

  // Writes the rows of positions.size() / coordinates points to `out`
  // (that many times spec().row_bytes() bytes). Precondition:
  // ValidatePositions is OK.
  //
  // `budget` (unless null) bounds the MPFR work of the values the fast
  // paths leave undecided (core/plan/slow_path_budget.h): once it refuses,
  // the call returns early, `out` holds garbage, and budget->status() says
  // why. Null: unbounded, for callers whose angles cannot crowd near
  // multiples of pi/2 (the grid tables' axes: integer positions times
  // rational steps, geometric frequencies of a double base).
  void ComputeRows(absl::Span<const double> positions, std::byte* out,
                   SlowPathBudget* budget = nullptr) const;

  // One point's row (coordinates values at `point`), as ComputeRows.
  void ComputeRow(const double* point, std::byte* row,
                  SlowPathBudget* budget = nullptr) const;

  // Largest j + 1 of the angle-addition runs of multi-axis ComputeRows:
  // anchors and the sin/cos(j F) table rows are each one direct row.
  static constexpr uint32_t kAngleStep = 32;

 private:
  // The pairs rotating by one coordinate.
  struct Segment {
    uint32_t coordinate = 0;
    uint32_t first = 0;  // its first pair in computation order
    uint32_t count = 0;
    // Pairs the kernels compute: count (plain), or count rounded up to
    // whole vectors (multi-axis: the padding's values land in the scratch
    // row and are never placed).
    uint32_t columns = 0;
    uint32_t words = 0;  // its first frequency in freq_ / w0_ / w1_ / w2_
  };

  explicit RealEncodingPlan(const EncodingSpec& spec);
  // OUT_OF_RANGE naming `name` unless x is finite, 0 or at least 2^-64 in
  // magnitude, and at most max_abs_position_.
  absl::Status CheckPosition(double x, const std::string& name) const;
  // scratch: 2 * pairs_ values of dtype (multi-axis), else unused.
  // prev: null, or the point whose values the scratch holds (multi-axis:
  // a coordinate with the same bits there keeps its values).
  void ComputeRowInto(const double* point, const double* prev, std::byte* row,
                      std::byte* scratch) const;
  void ComputeSegment(const Segment& s, double x, std::byte* out) const;
  // Multi-axis ComputeRows: the per-call anchors and sin/cos(j F) table,
  // and the segment computations that use them (k: the segment's index,
  // segments_.size() for whole_).
  struct AngleState;
  void ComputeMultiAxisRows(absl::Span<const double> positions,
                            std::byte* out) const;
  // Segment k's values at x, into the scratch row (row null; nothing when
  // it holds them already), or for whole_ straight into the output row in
  // direct_layout_ when `row` is set (else into the scratch row, to be
  // placed).
  enum class Wrote { kNothing, kScratch, kRow };
  Wrote ComputeSegmentAt(const Segment& s, size_t k, double x, AngleState& st,
                         std::byte* scratch, std::byte* row) const;
  // sin/cos(x F) of the segment's words into the state's anchor arrays,
  // each within kFastRelError (float64: double-double, NaN where risky);
  // false if no SIMD target.
  bool SetAnchor(const Segment& s, size_t k, double x, AngleState& st) const;
  // Row j of the table for the segment's words (built once per call).
  bool EnsureTableRow(const Segment& s, size_t k, uint32_t j,
                      AngleState& st) const;
  // Rounds the anchor (j = 0) or the angle-addition row j (x != 0) into
  // the scratch row, or into `row` as ComputeSegmentAt; false if no SIMD
  // target.
  bool RoundFromAnchor(const Segment& s, size_t k, uint32_t j, double x,
                       AngleState& st, std::byte* scratch,
                       std::byte* row) const;
  // After point p, a whole row written straight into out: the points that
  // follow it whole, at x + 1, x + 2, ... from the same anchor (x != 0,
  // j < step), written by one kernel call. Returns how many (0: none, or
  // no SIMD target).
  size_t ComputeWholeRun(absl::Span<const double> positions, size_t p,
                         AngleState& st, std::byte* scratch,
                         std::byte* out) const;
  // After point p, whose only changed segment is k (in the scratch row,
  // placed): the points that follow it changing only segment k's
  // coordinate, to x + 1, x + 2, ... from its anchor, computed by one
  // kernel call into scratch rows, each placed over a copy of the row
  // before it. Returns how many (0: none, too few, or no SIMD target).
  size_t ComputeSegmentRun(absl::Span<const double> positions, size_t p,
                           size_t k, AngleState& st, std::byte* scratch,
                           std::byte* out) const;
  // Places segment k's pairs from the scratch row into the output row.
  void PlaceSegment(size_t k, const std::byte* scratch, std::byte* row) const;
  // rotate_half rows of whole_ written straight: the copies of cos and sin.
  void CopyRotateHalf(std::byte* row, size_t rows) const;
  // Places pair i of whole_ from the scratch row into the output row.
  void PlaceWholePair(uint32_t i, const std::byte* scratch,
                      std::byte* row) const;
  // sin/cos(x F_w) in double within 2^-52 relative: the double-double
  // path's high words, MPFR (correctly rounded) where that bound fails.
  void AccurateSinCos(size_t w, double x, double* s, double* c) const;
  // ComputeGridRows of a multi-axis spec (points: the grid's count).
  void ComputeMultiAxisGridRows(const PositionGrid& grid, uint64_t points,
                                std::byte* out) const;
  // The per-call bound of ComputeMultiAxisGridRows's axis tables.
  static constexpr size_t kMaxGridTableBytes = size_t{1} << 20;
  // The per-call bound of multi-axis ComputeRows's sin/cos(j F) table (as
  // the table plans' angle table): its step is halved to fit.
  static constexpr size_t kMaxAngleTableBytes = size_t{1} << 20;
  // The rigorous per-value paths for pair i of segment s.
  void ComputeValue(const Segment& s, uint32_t i, double x,
                    std::byte* out) const;
  // Pair k (computation order): in place by the layout (plain), or at
  // sin k, cos pairs_ + k of the scratch row (multi-axis).
  void StorePair(size_t k, uint64_t sin_bits, uint64_t cos_bits,
                 std::byte* out) const;
  friend struct RealSlowColumn;
  friend struct RealSlowRunColumn;
  friend struct RealSlowSegmentRunColumn;

  EncodingSpec spec_;
  bool multi_axis_ = false;
  uint32_t half_ = 0;   // plain: frequencies per coordinate
  uint32_t pairs_ = 0;  // pairs per row: coordinates * half, or K
  size_t dtype_size_ = 0;
  // Pairs of the row the kernels write: pairs_ (plain), or the padded
  // segments of the scratch row (multi-axis).
  uint32_t compute_pairs_ = 0;
  // Where the kernels write: spec_.layout in the row (plain), or
  // kConcatSinCos in the scratch row (multi-axis).
  Layout compute_layout_ = Layout::kInterleaved;
  double max_abs_position_ = 0;
  std::vector<Segment> segments_;
  std::vector<FrequencyWords> freq_;
  // Words as arrays; each segment's run padded to
  // RoundUpToKernelLanes(count) with copies of its last frequency (so every
  // lane's angle stays within 2^24). Plain specs: one run of half_ words
  // shared by every coordinate.
  KernelVector<double> w0_, w1_, w2_;
  // Multi-axis: the frequency sets (core/spec/multi_axis.h), the set and index
  // of each word (for MPFR), and for each of the K pairs its scratch pair
  // (src_) and row pair (dst_).
  std::vector<EncodingSpec> sets_;
  std::vector<uint32_t> word_set_, word_index_;
  std::vector<uint32_t> src_, dst_;
  // Multi-axis: src_/dst_ as runs; with 2+ coordinates, the segment of
  // every pair in row order (its words after the coordinates' segments,
  // for points whose coordinates are all equal) and its one run.
  std::vector<PairRun> runs_;
  std::vector<uint32_t> segment_runs_;  // segment k's: [k] .. [k + 1]
  bool has_whole_ = false;
  Segment whole_;
  PairRun whole_run_;
  // Whether the kernels write whole_ straight into the output row: in
  // direct_layout_ with direct_half_ (the layouts the kernels know, and
  // rotate_half as concat_cos_sin of half 2K, its copies made after).
  bool direct_whole_ = false;
  Layout direct_layout_ = Layout::kConcatSinCos;
  uint32_t direct_half_ = 0;
};

}  // namespace posenc

#endif  // POSENC_CORE_PLAN_REAL_ENCODING_PLAN_H_
