#include "core/spec/table_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/numerics/shortest_double.h"
#include "core/runtime/limit_error.h"

namespace posenc {

const char* FrequencyName(Frequency frequency) {
  switch (frequency) {
    case Frequency::kPaper:
      return "paper";
    case Frequency::kT2T:
      return "t2t";
  }
  return "?";
}

std::string TableSpec::DebugString() const {
  std::string out = absl::StrFormat(
      "d=%u base=%.17g max_len=%u dtype=%s layout=%s frequency=%s", d, base,
      max_len, DTypeName(dtype), LayoutName(layout), FrequencyName(frequency));
  if (rope != nullptr) {
    absl::StrAppend(&out, " rope=", RopeTypeName(rope->type));
    if (rope->factor != 0) absl::StrAppend(&out, " factor=", rope->factor);
  }
  if (grid != nullptr) absl::StrAppend(&out, " grid ", grid->DebugString());
  return out;
}

absl::Status ValidateSpec(const TableSpec& spec, const SpecLimits& limits) {
  if (spec.d == 0) {
    return absl::InvalidArgumentError(
        "spec.d is required: it must be an even number from 2 to " +
        absl::StrCat(limits.max_d));
  }
  if (spec.d % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.d must be even (sin/cos pairs), got ", spec.d));
  }
  if (spec.d > limits.max_d) {
    return LimitError(
        absl::StatusCode::kInvalidArgument, Limit::kD,
        absl::StrCat("spec.d is ", spec.d, ", over the limit ", limits.max_d));
  }
  if (spec.frequency == Frequency::kT2T && spec.d < 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.d must be at least 4 with FREQUENCY_T2T (it divides by d/2-1), "
        "got ",
        spec.d));
  }
  if (!std::isfinite(spec.base) || spec.base <= 1.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.base must be finite and > 1 (0 means 10000), got ",
                     ShortestDouble(spec.base)));
  }
  if (spec.layout == Layout::kRotationMatrix) {
    return absl::InvalidArgumentError(
        "spec.layout: rotation_matrix is an Encode layout of multi-axis RoPE "
        "(EncodingSpec.axes_dim or mrope_section); a table takes interleaved, "
        "concat_sin_cos, concat_cos_sin, rotate_half or interleaved_pairs");
  }
  if (spec.grid != nullptr) return ValidateGridTable(spec, limits);
  if (spec.max_len == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.max_len is required: 1 to max_len_limit=", limits.max_len_limit));
  }
  if (spec.max_len > limits.max_len_limit) {
    return LimitError(absl::StatusCode::kInvalidArgument, Limit::kMaxLen,
                      absl::StrCat("spec.max_len is ", spec.max_len,
                                   ", over the limit ", limits.max_len_limit));
  }
  if (spec.rope != nullptr) {
    if (spec.frequency != Frequency::kPaper) {
      return absl::InvalidArgumentError(
          "spec.rope needs spec.frequency FREQUENCY_PAPER (RoPE's "
          "frequencies are base^(-2i/d))");
    }
    return ValidateRope(*spec.rope, spec.d);
  }
  return absl::OkStatus();
}

absl::Status ValidateRange(uint32_t start, uint32_t end, uint32_t max_len) {
  if (start >= max_len) {
    return absl::OutOfRangeError(absl::StrCat(
        "start is ", start, ", past the last row of spec.max_len=", max_len));
  }
  if (end > max_len) {
    return absl::OutOfRangeError(
        absl::StrCat("end is ", end, ", past spec.max_len=", max_len));
  }
  if (start >= end) {
    return absl::InvalidArgumentError(
        absl::StrCat("start must be < end, got start=", start, " end=", end));
  }
  return absl::OkStatus();
}

}  // namespace posenc
