#include "core/spec/grid_spec.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/numerics/shortest_double.h"
#include "core/runtime/limit_error.h"
#include "core/spec/table_spec.h"

namespace posenc {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

std::string AxisField(size_t a, const char* field) {
  return absl::StrCat("spec.grid.axes[", a, "].", field);
}

}  // namespace

const char* GridSinCosName(GridSinCos sin_cos) {
  switch (sin_cos) {
    case GridSinCos::kPerAxis:
      return "per_axis";
    case GridSinCos::kGrouped:
      return "grouped";
  }
  return "?";
}

uint64_t GridSpec::rows() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t n = 1;
  for (const GridSpecAxis& a : axes) {
    if (a.size != 0 && n > kMax / a.size) return kMax;
    n *= a.size;
  }
  return n > kMax - extra_zero_rows ? kMax : n + extra_zero_rows;
}

uint64_t GridSpec::channels() const {
  uint64_t c = 0;
  for (const GridSpecAxis& a : axes) c += a.channels;
  return c;
}

std::string GridSpec::DebugString() const {
  std::string s = "axes=";
  for (size_t a = 0; a < axes.size(); ++a) {
    const GridSpecAxis& x = axes[a];
    absl::StrAppend(&s, a ? "," : "", x.size, ":", x.channels, ":",
                    x.first_index, ":", x.numerator, "/", x.denominator);
  }
  absl::StrAppend(&s, " order=", absl::StrJoin(channel_order, ","),
                  " sin_cos=", GridSinCosName(sin_cos),
                  " extra=", extra_zero_rows);
  return s;
}

absl::Status ValidateGridTable(const TableSpec& spec,
                               const SpecLimits& limits) {
  const GridSpec& grid = *spec.grid;
  const size_t n = grid.axes.size();
  if (n == 0 || n > kMaxGridAxes) {
    return Invalid(absl::StrCat("spec.grid.axes: ", n,
                                " axes; a grid has 1 to ", kMaxGridAxes));
  }
  if (spec.rope != nullptr) {
    return Invalid("spec.rope: RoPE scaling does not apply to a grid table");
  }
  if (spec.frequency != Frequency::kPaper) {
    return Invalid(
        absl::StrCat("spec.frequency: ", FrequencyName(spec.frequency),
                     " with a grid; each axis has f_i = base^(-2i / channels) "
                     "(FREQUENCY_PAPER)"));
  }
  if (spec.layout != Layout::kInterleaved &&
      spec.layout != Layout::kConcatSinCos &&
      spec.layout != Layout::kConcatCosSin) {
    return Invalid(absl::StrCat(
        "spec.layout: ", LayoutName(spec.layout),
        " is a RoPE layout; a grid table takes interleaved, concat_sin_cos "
        "or concat_cos_sin"));
  }
  if (grid.sin_cos == GridSinCos::kGrouped &&
      spec.layout == Layout::kInterleaved) {
    return Invalid(
        "spec.grid.sin_cos: GRID_SIN_COS_GROUPED splits every block in two "
        "halves; it needs spec.layout LAYOUT_CONCAT_SIN_COS or "
        "LAYOUT_CONCAT_COS_SIN");
  }
  for (size_t a = 0; a < n; ++a) {
    const GridSpecAxis& axis = grid.axes[a];
    if (axis.size == 0) {
      return Invalid(absl::StrCat(AxisField(a, "size"),
                                  ": 0; an axis has at least 1 point"));
    }
    if (axis.channels > limits.max_d) {
      return LimitError(
          absl::StatusCode::kInvalidArgument, Limit::kD,
          absl::StrCat(AxisField(a, "channels"), " is ", axis.channels,
                       ", over the limit ", limits.max_d));
    }
    if (axis.channels < 2 || axis.channels % 2 != 0) {
      return Invalid(absl::StrCat(AxisField(a, "channels"), ": ", axis.channels,
                                  "; sin/cos come in pairs: even, 2..",
                                  limits.max_d));
    }
    if (axis.numerator == 0) {
      return Invalid(absl::StrCat(AxisField(a, "position_numerator"),
                                  ": 0; at least 1 (unset means 1)"));
    }
    if (axis.denominator == 0) {
      return Invalid(absl::StrCat(AxisField(a, "position_denominator"),
                                  ": 0; at least 1 (unset means 1)"));
    }
  }
  if (grid.channel_order.size() != n) {
    return Invalid(
        absl::StrCat("spec.grid.channel_order: ", grid.channel_order.size(),
                     " entries for ", n, " axes; list each axis once"));
  }
  std::vector<bool> seen(n, false);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t a = grid.channel_order[k];
    if (a >= n || seen[a]) {
      return Invalid(
          absl::StrCat("spec.grid.channel_order[", k, "]: ", a,
                       (a >= n ? " is not an axis index" : " is listed twice"),
                       "; the list is a permutation of 0..", n - 1));
    }
    seen[a] = true;
  }
  if (grid.channels() != spec.d) {
    std::string sum;
    for (size_t a = 0; a < n; ++a) {
      absl::StrAppend(&sum, a ? " + " : "", grid.axes[a].channels);
    }
    return Invalid(absl::StrCat("spec.d: ", spec.d,
                                " differs from the grid's channels, ", sum,
                                " = ", grid.channels()));
  }
  const uint64_t rows = grid.rows();
  if (rows > limits.max_len_limit) {
    return Invalid(absl::StrCat(
        "spec.grid: ",
        rows == std::numeric_limits<uint64_t>::max() ? std::string("> 2^64")
                                                     : absl::StrCat(rows),
        " rows (spec.grid.extra_zero_rows + the product of the sizes) "
        "exceed max_len_limit=",
        limits.max_len_limit));
  }
  if (spec.max_len != rows) {
    return Invalid(absl::StrCat("spec.max_len: ", spec.max_len,
                                " differs from the grid's rows, ", rows,
                                " (leave it unset)"));
  }
  for (size_t a = 0; a < n; ++a) {
    const GridSpecAxis& axis = grid.axes[a];
    // The largest numerator (first_index + size - 1) * numerator must be an
    // exact double, and its angle x * f_0 = x / denominator at most
    // 2^24 (1 - 2^-48), inside what RealEncodingPlan serves:
    // x <= 2^24 den - ceil(den / 2^24) <= 2^24 den (1 - 2^-48).
    const uint64_t last = uint64_t{axis.first_index} + axis.size - 1;
    const uint64_t den = axis.denominator;
    const uint64_t bound = (den << 24) - ((den + (1u << 24) - 1) >> 24);
    if (last > (uint64_t{1} << 53) / axis.numerator ||
        last * axis.numerator > bound) {
      return Invalid(absl::StrCat(
          AxisField(a, "first_index"),
          ", .size, .position_numerator, "
          ".position_denominator: the largest position (",
          axis.first_index, " + ", axis.size, " - 1) * ", axis.numerator, " / ",
          axis.denominator, " must be below 2^24 (the proven angle range)"));
    }
    // The smallest frequency base^(-(half - 1) / half) / denominator above
    // 2^-790 (estimated in double; RealEncodingPlan refuses below 2^-800).
    const double half = axis.channels / 2;
    const double log2_min =
        -(half - 1) / half * std::log2(spec.base) - std::log2(den + 0.0);
    if (!(log2_min > -790)) {
      return Invalid(absl::StrCat("spec.base: ", ShortestDouble(spec.base),
                                  " makes the smallest "
                                  "frequency of ",
                                  AxisField(a, "channels"), " about 2^",
                                  static_cast<int>(log2_min),
                                  ", below 2^-790"));
    }
  }
  return absl::OkStatus();
}

}  // namespace posenc
