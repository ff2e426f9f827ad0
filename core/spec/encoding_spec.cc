#include "core/spec/encoding_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/numerics/shortest_double.h"
#include "core/runtime/limit_error.h"
#include "core/spec/multi_axis.h"

namespace posenc {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

std::string D(double v) { return ShortestDouble(v); }

}  // namespace

const char* FrequencySchemeName(FrequencyScheme scheme) {
  switch (scheme) {
    case FrequencyScheme::kExponential:
      return "exponential";
    case FrequencyScheme::kOctaves:
      return "octaves";
  }
  return "?";
}

std::string EncodingSpec::DebugString() const {
  std::string s = absl::StrCat(
      "dim=", dim, " dtype=", DTypeName(dtype), " layout=", LayoutName(layout),
      " frequency=", FrequencySchemeName(scheme), " scale=", D(scale));
  if (scale_divisor != 1) absl::StrAppend(&s, " scale_divisor=", scale_divisor);
  if (scheme == FrequencyScheme::kExponential) {
    absl::StrAppend(&s, " max_period=", D(max_period), " shift=", D(shift));
  } else {
    absl::StrAppend(&s, " num_frequencies=", num_frequencies,
                    " min_freq_exp=", D(min_freq_exp),
                    " max_freq_exp=", D(max_freq_exp));
  }
  absl::StrAppend(&s, " coordinates=", coordinates);
  if (pad_odd_dim) absl::StrAppend(&s, " pad_odd_dim");
  if (include_input) absl::StrAppend(&s, " include_input");
  if (!axes_dim.empty()) {
    absl::StrAppend(&s, " axes_dim=[", absl::StrJoin(axes_dim, ","), "]");
  }
  if (!mrope_section.empty()) {
    absl::StrAppend(&s, " mrope_section=[", absl::StrJoin(mrope_section, ","),
                    "]");
  }
  if (mrope_interleaved) absl::StrAppend(&s, " mrope_interleaved");
  return s;
}

uint32_t EncodingSpec::MultiAxisPairs() const {
  if (axes_dim.empty()) return dim / 2;
  uint64_t sum = 0;
  for (uint32_t n : axes_dim) sum += n;
  return static_cast<uint32_t>(std::min<uint64_t>(sum / 2, UINT32_MAX));
}

absl::Status ValidateEncodingSpec(const EncodingSpec& spec,
                                  const SpecLimits& limits) {
  if (spec.mrope_interleaved && spec.mrope_section.empty()) {
    return Invalid(
        "spec.mrope_interleaved: needs spec.mrope_section (Qwen3-VL's "
        "sections)");
  }
  if (spec.multi_axis()) return ValidateMultiAxisSpec(spec, limits);
  if (spec.layout == Layout::kRotateHalf ||
      spec.layout == Layout::kInterleavedPairs ||
      spec.layout == Layout::kRotationMatrix) {
    return Invalid(absl::StrCat(
        "spec.layout: ", LayoutName(spec.layout),
        " is a RoPE layout; it needs spec.axes_dim or spec.mrope_section "
        "(multi-axis RoPE), else an encoding takes interleaved, "
        "concat_sin_cos or concat_cos_sin"));
  }
  if (spec.coordinates == 0 || spec.coordinates > limits.max_d) {
    return LimitError(absl::StatusCode::kInvalidArgument, Limit::kD,
                      absl::StrCat("spec.coordinates: ", spec.coordinates,
                                   " is outside 1..", limits.max_d));
  }
  if (!std::isfinite(spec.scale) || spec.scale < kMinRealScale ||
      spec.scale > kMaxRealScale) {
    return Invalid(absl::StrCat("spec.scale: ", D(spec.scale),
                                " must be finite and in [2^-24, 2^24] "
                                "(0 means 1)"));
  }
  if (spec.scale_divisor == 0) {
    return Invalid(
        "spec.scale_divisor: 0; it divides every frequency, so at "
        "least 1 (1 is none)");
  }
  if (spec.scheme == FrequencyScheme::kExponential) {
    if (spec.num_frequencies != 0 || spec.min_freq_exp != 0 ||
        spec.max_freq_exp != 0) {
      return Invalid(
          "spec.num_frequencies, spec.min_freq_exp, spec.max_freq_exp: "
          "only for FREQUENCY_SCHEME_OCTAVES; must be unset with "
          "exponential frequencies");
    }
    if (spec.dim == 0) return Invalid("spec.dim is required");
    if (spec.dim > limits.max_d) {
      return LimitError(absl::StatusCode::kInvalidArgument, Limit::kD,
                        absl::StrCat("spec.dim is ", spec.dim,
                                     ", over the limit ", limits.max_d));
    }
    if (spec.dim % 2 != 0 && !spec.pad_odd_dim) {
      return Invalid(absl::StrCat(
          "spec.dim: ", spec.dim,
          " is odd; sin/cos come in pairs (set spec.pad_odd_dim for "
          "diffusers' zero column at the end)"));
    }
    if (spec.dim % 2 == 0 && spec.pad_odd_dim) {
      return Invalid(
          absl::StrCat("spec.pad_odd_dim: set with an even "
                       "spec.dim (",
                       spec.dim, "); it pads an odd dim only"));
    }
    if (spec.pad_odd_dim && spec.coordinates != 1) {
      return Invalid(
          absl::StrCat("spec.pad_odd_dim: needs one coordinate, "
                       "spec.coordinates is ",
                       spec.coordinates));
    }
    if (spec.dim < 2) {
      return Invalid(absl::StrCat("spec.dim: ", spec.dim,
                                  " leaves no sin/cos pair; at least 2"));
    }
    if (!std::isfinite(spec.max_period) || !(spec.max_period > 1)) {
      return Invalid(absl::StrCat("spec.max_period: ", D(spec.max_period),
                                  " must be finite and > 1 (0 means 10000)"));
    }
    const double half = spec.dim / 2;
    if (!std::isfinite(spec.shift) || !(spec.shift < half)) {
      return Invalid(absl::StrCat(
          "spec.shift: ", D(spec.shift), " must be finite and < dim / 2 = ",
          spec.dim / 2, " (the exponent is -i / (dim / 2 - shift))"));
    }
  } else {
    if (spec.max_period != kDefaultBase || spec.shift != 0 ||
        spec.pad_odd_dim) {
      return Invalid(
          "spec.max_period, spec.shift, spec.pad_odd_dim: only for "
          "FREQUENCY_SCHEME_EXPONENTIAL; must be unset with octaves");
    }
    if (spec.num_frequencies == 0) {
      return Invalid("spec.num_frequencies is required with octaves");
    }
    if (!std::isfinite(spec.min_freq_exp) ||
        !std::isfinite(spec.max_freq_exp) ||
        spec.min_freq_exp > spec.max_freq_exp) {
      return Invalid(absl::StrCat(
          "spec.min_freq_exp, spec.max_freq_exp: ", D(spec.min_freq_exp),
          " and ", D(spec.max_freq_exp),
          " must be finite with min_freq_exp <= max_freq_exp"));
    }
  }
  const uint64_t channels = 2 * spec.pairs() + (spec.pad_odd_dim ? 1 : 0);
  if (channels > limits.max_d) {
    return LimitError(
        absl::StatusCode::kInvalidArgument, Limit::kD,
        absl::StrCat(spec.scheme == FrequencyScheme::kOctaves
                         ? "spec.num_frequencies"
                         : "spec.coordinates",
                     ": ", spec.coordinates, " coordinates x ", spec.half(),
                     " frequencies x 2 = ", channels,
                     " sin/cos channels, over the limit ", limits.max_d));
  }
  if (spec.scheme == FrequencyScheme::kOctaves && spec.dim != 0 &&
      spec.dim != spec.width()) {
    return Invalid(absl::StrCat("spec.dim: ", spec.dim,
                                " differs from the width of this encoding, ",
                                spec.width(), " (leave it unset)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> CountPoints(size_t values, uint32_t coordinates,
                                     uint32_t max_points) {
  if (values == 0) return Invalid("positions: empty; give at least one point");
  if (coordinates == 0 || values % coordinates != 0) {
    return Invalid(absl::StrCat(
        "positions: ", values,
        " values is not a whole number of points of spec.coordinates = ",
        coordinates, " values each"));
  }
  const size_t points = values / coordinates;
  if (points > max_points) {
    return LimitError(
        absl::StatusCode::kInvalidArgument, Limit::kRowsPerRequest,
        absl::StrCat("positions: ", points, " points, over the limit ",
                     max_points, " per request"));
  }
  return static_cast<uint32_t>(points);
}

}  // namespace posenc
