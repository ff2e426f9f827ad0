#include "core/spec/multi_axis.h"

#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/numerics/shortest_double.h"
#include "core/runtime/limit_error.h"

namespace posenc {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

// The axis count of a multi-axis spec.
size_t AxisCount(const EncodingSpec& spec) {
  return spec.axes_dim.empty() ? spec.mrope_section.size()
                               : spec.axes_dim.size();
}

}  // namespace

absl::Status ValidateMultiAxisSpec(const EncodingSpec& spec,
                                   const SpecLimits& limits) {
  const bool axes = !spec.axes_dim.empty();
  if (axes && !spec.mrope_section.empty()) {
    return Invalid(
        "spec.axes_dim, spec.mrope_section: set one of them (FLUX/axial "
        "axes, or Qwen2-VL sections), not both");
  }
  if (axes && spec.mrope_interleaved) {
    return Invalid(
        "spec.mrope_interleaved: needs spec.mrope_section, not "
        "spec.axes_dim");
  }
  if (spec.scheme != FrequencyScheme::kExponential ||
      spec.num_frequencies != 0 || spec.min_freq_exp != 0 ||
      spec.max_freq_exp != 0) {
    return Invalid(
        "spec.frequency: multi-axis RoPE (spec.axes_dim, spec.mrope_section) "
        "takes exponential frequencies; spec.num_frequencies, "
        "spec.min_freq_exp and spec.max_freq_exp must be unset");
  }
  if (spec.shift != 0) {
    return Invalid(absl::StrCat("spec.shift: ", ShortestDouble(spec.shift),
                                " must be unset with multi-axis RoPE (the "
                                "frequencies are max_period^(-2i/n))"));
  }
  if (spec.pad_odd_dim || spec.include_input) {
    return Invalid(
        "spec.pad_odd_dim, spec.include_input: must be unset with "
        "multi-axis RoPE");
  }
  if (!std::isfinite(spec.scale) || spec.scale < kMinRealScale ||
      spec.scale > kMaxRealScale) {
    return Invalid(absl::StrCat("spec.scale: ", ShortestDouble(spec.scale),
                                " must be finite and in [2^-24, 2^24] "
                                "(0 means 1)"));
  }
  if (spec.scale_divisor == 0) {
    return Invalid(
        "spec.scale_divisor: 0; it divides every frequency, so at least 1 "
        "(1 is none)");
  }
  if (!std::isfinite(spec.max_period) || !(spec.max_period > 1)) {
    return Invalid(
        absl::StrCat("spec.max_period: ", ShortestDouble(spec.max_period),
                     " must be finite and > 1 (0 means 10000)"));
  }
  if (axes) {
    uint64_t sum = 0;
    for (size_t a = 0; a < spec.axes_dim.size(); ++a) {
      const uint32_t n = spec.axes_dim[a];
      if (n < 2 || n % 2 != 0) {
        return Invalid(absl::StrCat("spec.axes_dim[", a, "]: ", n,
                                    " must be even and at least 2 (an axis "
                                    "rotates pairs of channels)"));
      }
      sum += n;
      if (sum > limits.max_d) {
        return LimitError(
            absl::StatusCode::kInvalidArgument, Limit::kD,
            absl::StrCat("spec.axes_dim: the axes' channels sum to ", sum,
                         " at axes_dim[", a, "], over the limit ",
                         limits.max_d));
      }
    }
    if (spec.dim != 0 && spec.dim != sum) {
      return Invalid(absl::StrCat("spec.dim: ", spec.dim,
                                  " differs from sum(spec.axes_dim) = ", sum,
                                  " (leave it unset)"));
    }
  } else {
    if (spec.dim == 0) {
      return Invalid(
          "spec.dim is required with spec.mrope_section: the head dimension "
          "(HF head_dim)");
    }
    if (spec.dim > limits.max_d) {
      return LimitError(absl::StatusCode::kInvalidArgument, Limit::kD,
                        absl::StrCat("spec.dim is ", spec.dim,
                                     ", over the limit ", limits.max_d));
    }
    if (spec.dim % 2 != 0) {
      return Invalid(absl::StrCat("spec.dim: ", spec.dim,
                                  " must be even and in 2..", limits.max_d));
    }
    uint64_t sum = 0;
    for (size_t s = 0; s < spec.mrope_section.size(); ++s) {
      const uint32_t n = spec.mrope_section[s];
      if (n == 0) {
        return Invalid(absl::StrCat("spec.mrope_section[", s,
                                    "]: 0; each section holds at least one "
                                    "frequency"));
      }
      sum += n;
      if (sum > spec.dim / 2) break;  // reported below
    }
    if (sum != spec.dim / 2) {
      return Invalid(absl::StrCat(
          "spec.mrope_section: the sections sum to ",
          sum > spec.dim / 2 ? absl::StrCat("more than ", spec.dim / 2)
                             : absl::StrCat(sum),
          "; they must sum to spec.dim / 2 = ", spec.dim / 2));
    }
    if (spec.mrope_interleaved && spec.mrope_section.size() != 3) {
      return Invalid(absl::StrCat(
          "spec.mrope_section: ", spec.mrope_section.size(),
          " sections; spec.mrope_interleaved (Qwen3-VL) takes 3 (temporal, "
          "height, width)"));
    }
  }
  if (spec.coordinates != AxisCount(spec)) {
    return Invalid(absl::StrCat(
        "spec.coordinates: ", spec.coordinates, " differs from the ",
        AxisCount(spec),
        axes ? " axes of spec.axes_dim" : " sections of spec.mrope_section",
        " (leave it unset)"));
  }
  return absl::OkStatus();
}

namespace {

// One run of `count` pairs at dst, dst + stride, ... At stride 1 the
// contiguous layouts copy each half whole; the rest are loops on
// non-aliasing arrays (restrict parameters), which the compiler vectorizes
// at stride 1 (a libc copy per pair would cost more than the pair).
template <typename T, Layout kLayout>
void PlaceRun(size_t pairs, size_t dst, size_t stride, size_t count,
              const T* __restrict sin, const T* __restrict cos,
              T* __restrict row) {
  if (stride != 1) {
    for (size_t m = 0; m < count; ++m) {
      PlaceBits<T>(kLayout, pairs, dst + m * stride, sin[m], cos[m], row);
    }
    return;
  }
  const size_t bytes = count * sizeof(T);
  switch (kLayout) {
    case Layout::kConcatSinCos:
      std::memcpy(row + dst, sin, bytes);
      std::memcpy(row + pairs + dst, cos, bytes);
      return;
    case Layout::kConcatCosSin:
      std::memcpy(row + dst, cos, bytes);
      std::memcpy(row + pairs + dst, sin, bytes);
      return;
    case Layout::kRotateHalf:
      std::memcpy(row + dst, cos, bytes);
      std::memcpy(row + pairs + dst, cos, bytes);
      std::memcpy(row + 2 * pairs + dst, sin, bytes);
      std::memcpy(row + 3 * pairs + dst, sin, bytes);
      return;
    default:
      for (size_t m = 0; m < count; ++m) {
        PlaceBits<T>(kLayout, pairs, dst + m, sin[m], cos[m], row);
      }
  }
}

template <typename T, Layout kLayout>
void PlaceTyped(size_t pairs, const PairRun* runs, size_t n, const T* sin,
                const T* cos, T* row) {
  for (size_t r = 0; r < n; ++r) {
    PlaceRun<T, kLayout>(pairs, runs[r].dst, runs[r].stride, runs[r].count,
                         sin + runs[r].src, cos + runs[r].src, row);
  }
}

template <typename T>
void PlaceTyped(Layout layout, size_t pairs, const PairRun* runs, size_t n,
                const std::byte* sin_bytes, const std::byte* cos_bytes,
                std::byte* row_bytes) {
  const T* sin = reinterpret_cast<const T*>(sin_bytes);
  const T* cos = reinterpret_cast<const T*>(cos_bytes);
  T* row = reinterpret_cast<T*>(row_bytes);
  switch (layout) {
    case Layout::kInterleaved:
      return PlaceTyped<T, Layout::kInterleaved>(pairs, runs, n, sin, cos, row);
    case Layout::kConcatSinCos:
      return PlaceTyped<T, Layout::kConcatSinCos>(pairs, runs, n, sin, cos,
                                                  row);
    case Layout::kConcatCosSin:
      return PlaceTyped<T, Layout::kConcatCosSin>(pairs, runs, n, sin, cos,
                                                  row);
    case Layout::kRotateHalf:
      return PlaceTyped<T, Layout::kRotateHalf>(pairs, runs, n, sin, cos, row);
    case Layout::kInterleavedPairs:
      return PlaceTyped<T, Layout::kInterleavedPairs>(pairs, runs, n, sin, cos,
                                                      row);
    case Layout::kRotationMatrix:
      return PlaceTyped<T, Layout::kRotationMatrix>(pairs, runs, n, sin, cos,
                                                    row);
  }
}

}  // namespace

std::vector<PairRun> PairRuns(const uint32_t* src, const uint32_t* dst,
                              size_t n) {
  std::vector<PairRun> runs;
  for (size_t m = 0; m < n; ++m) {
    if (!runs.empty()) {
      PairRun& r = runs.back();
      if (src[m] == r.src + r.count) {
        if (r.count == 1 && dst[m] > r.dst) {
          r.stride = dst[m] - r.dst;
          ++r.count;
          continue;
        }
        if (dst[m] == r.dst + uint64_t{r.count} * r.stride) {
          ++r.count;
          continue;
        }
      }
    }
    runs.push_back({src[m], dst[m], 1, 1});
  }
  return runs;
}

void PlaceRuns(Layout layout, DType dtype, size_t pairs, const PairRun* runs,
               size_t n, const std::byte* sin, const std::byte* cos,
               std::byte* row) {
  switch (dtype) {
    case DType::kFloat64:
      return PlaceTyped<uint64_t>(layout, pairs, runs, n, sin, cos, row);
    case DType::kFloat32:
      return PlaceTyped<uint32_t>(layout, pairs, runs, n, sin, cos, row);
    case DType::kFloat16:
    case DType::kBFloat16:
      return PlaceTyped<uint16_t>(layout, pairs, runs, n, sin, cos, row);
  }
}

std::vector<EncodingSpec> MultiAxisFrequencySets(const EncodingSpec& spec) {
  EncodingSpec plain;
  plain.dtype = spec.dtype;
  plain.max_period = spec.max_period;
  plain.scale = spec.scale;
  plain.scale_divisor = spec.scale_divisor;
  std::vector<EncodingSpec> sets;
  if (spec.axes_dim.empty()) {
    plain.dim = spec.dim;
    sets.push_back(plain);
    return sets;
  }
  sets.reserve(spec.axes_dim.size());
  for (uint32_t n : spec.axes_dim) {
    plain.dim = n;
    sets.push_back(plain);
  }
  return sets;
}

std::vector<AxisPair> MultiAxisPairs(const EncodingSpec& spec) {
  std::vector<AxisPair> pairs;
  pairs.reserve(spec.pairs());
  if (!spec.axes_dim.empty()) {
    for (uint32_t a = 0; a < spec.axes_dim.size(); ++a) {
      for (uint32_t i = 0; i < spec.axes_dim[a] / 2; ++i) {
        pairs.push_back({a, a, i});
      }
    }
    return pairs;
  }
  const uint32_t half = spec.dim / 2;
  const std::vector<uint32_t>& s = spec.mrope_section;
  if (spec.mrope_interleaved) {
    // Qwen3-VL apply_interleaved_mrope: start from the temporal row, then
    // freqs_t[..., offset:3 s[dim]:3] = freqs[dim] for (dim, offset) in
    // ((1, 1), (2, 2)).
    for (uint32_t j = 0; j < half; ++j) {
      uint32_t c = 0;
      if (j % 3 == 1 && j < 3 * uint64_t{s[1]}) c = 1;
      if (j % 3 == 2 && j < 3 * uint64_t{s[2]}) c = 2;
      pairs.push_back({c, 0, j});
    }
    return pairs;
  }
  uint32_t j = 0;
  for (uint32_t c = 0; c < s.size(); ++c) {
    for (uint32_t k = 0; k < s[c]; ++k, ++j) pairs.push_back({c, 0, j});
  }
  return pairs;
}

}  // namespace posenc
