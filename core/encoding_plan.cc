#include "core/encoding_plan.h"

#include <algorithm>
#include <cmath>

#include "core/exact_sincos_mpfr.h"
#include "core/rounding.h"
#include "core/row_kernel_simd.h"
#include "core/sincos_double_double.h"
#include "core/sincos_fast.h"

namespace posenc {
namespace {

constexpr double kMinFastFrequency = 0x1p-900;

// Bits of the correctly rounded real value t, given y with
// |y - t| <= kFastRelError * |t|, or false when undecided.
bool RoundFastValue(double y, DType dtype, uint64_t* bits) {
  const double slack = kFastCheckSlack * std::fabs(y);
  const uint64_t lo = RoundDoubleToBits(y - slack, dtype);
  const uint64_t hi = RoundDoubleToBits(y + slack, dtype);
  if (lo != hi) return false;
  *bits = lo;
  return true;
}

}  // namespace

EncodingPlan::EncodingPlan(const TableSpec& spec)
    : spec_(spec), half_(spec.d / 2), freq_(ExactFrequencies(spec)) {
  // f_i decreases with i, so the fast columns are a prefix.
  fast_columns_ = 0;
  while (fast_columns_ < half_ && freq_[fast_columns_].w0 >= kMinFastFrequency)
    ++fast_columns_;
  const size_t padded = RoundUpToKernelLanes(fast_columns_);
  w0_.assign(padded, 1.0);
  w1_.assign(padded, 0.0);
  for (uint32_t i = 0; i < fast_columns_; ++i) {
    w0_[i] = freq_[i].w0;
    w1_[i] = freq_[i].w1;
  }
}

void EncodingPlan::StorePair(uint32_t column, uint64_t sin_bits,
                             uint64_t cos_bits, std::byte* row) const {
  const size_t size = DTypeSize(spec_.dtype);
  size_t sin_col = column, cos_col = column;
  switch (spec_.layout) {
    case Layout::kInterleaved:
      sin_col = 2 * size_t{column};
      cos_col = sin_col + 1;
      break;
    case Layout::kConcatSinCos:
      cos_col = half_ + size_t{column};
      break;
    case Layout::kConcatCosSin:
      sin_col = half_ + size_t{column};
      break;
  }
  StoreBits(sin_bits, spec_.dtype, row + sin_col * size);
  StoreBits(cos_bits, spec_.dtype, row + cos_col * size);
}

void EncodingPlan::ComputeColumn(uint32_t column, uint32_t pos,
                                 std::byte* row) const {
  uint64_t sin_bits, cos_bits;
  bool decided = false;
  if (pos == 0) {
    sin_bits = EncodeExact(0.0, spec_.dtype);
    cos_bits = EncodeExact(1.0, spec_.dtype);
    decided = true;
  } else if (column < fast_columns_) {
    if (spec_.dtype == DType::kFloat64) {
      const DoubleDoubleSinCos v =
          DoubleDoubleSinCosOf(static_cast<double>(pos), freq_[column]);
      double s, c;
      if (!v.risky && RoundDoubleDoubleToDouble(v.sin, &s) &&
          RoundDoubleDoubleToDouble(v.cos, &c)) {
        sin_bits = EncodeExact(s, spec_.dtype);
        cos_bits = EncodeExact(c, spec_.dtype);
        decided = true;
      }
    } else {
      const FastSinCos v =
          FastSinCosScalar(static_cast<double>(pos), w0_[column], w1_[column]);
      decided = !v.risky && RoundFastValue(v.sin, spec_.dtype, &sin_bits) &&
                RoundFastValue(v.cos, spec_.dtype, &cos_bits);
    }
  }
  if (!decided) ExactSinCosBits(spec_, column, pos, &sin_bits, &cos_bits);
  StorePair(column, sin_bits, cos_bits, row);
}

void EncodingPlan::ComputeRowFloat32(uint32_t pos, std::byte* row) const {
  struct Ctx {
    const EncodingPlan* plan;
    uint32_t pos;
    std::byte* row;
  } ctx{this, pos, row};
  auto slow = [](void* p, uint32_t column) {
    const Ctx* c = static_cast<const Ctx*>(p);
    c->plan->ComputeColumn(column, c->pos, c->row);
  };
  uint32_t done = 0;
  if (Float32RowSimd(w0_.data(), w1_.data(), fast_columns_, half_, spec_.layout,
                     pos, reinterpret_cast<float*>(row), slow, &ctx)) {
    done = fast_columns_;
  }
  for (uint32_t i = done; i < half_; ++i) ComputeColumn(i, pos, row);
}

void EncodingPlan::ComputeRowFromDoubles(uint32_t pos, std::byte* row) const {
  // float16 / bfloat16: vector sin/cos in blocks, scalar rounding checks.
  constexpr uint32_t kBlock = 256;
  static_assert(kBlock % kMaxKernelLanes == 0);
  double s[kBlock], c[kBlock];
  uint8_t risky[kBlock];
  uint32_t done = 0;  // columns [0, done) are written
  for (uint32_t i = 0; i < fast_columns_; i += kBlock) {
    const uint32_t n = std::min(kBlock, fast_columns_ - i);
    if (!SinCosColumnsSimd(w0_.data() + i, w1_.data() + i, n, pos, s, c,
                           risky)) {
      break;  // no SIMD target with FMA on this CPU
    }
    done = i + n;
    for (uint32_t k = 0; k < n; ++k) {
      uint64_t sb, cb;
      if (!risky[k] && RoundFastValue(s[k], spec_.dtype, &sb) &&
          RoundFastValue(c[k], spec_.dtype, &cb)) {
        StorePair(i + k, sb, cb, row);
      } else {
        ComputeColumn(i + k, pos, row);
      }
    }
  }
  for (uint32_t i = done; i < half_; ++i) ComputeColumn(i, pos, row);
}

void EncodingPlan::ComputeRow(uint32_t pos, std::byte* row) const {
  if (pos == 0 || spec_.dtype == DType::kFloat64) {
    for (uint32_t i = 0; i < half_; ++i) ComputeColumn(i, pos, row);
  } else if (spec_.dtype == DType::kFloat32) {
    ComputeRowFloat32(pos, row);
  } else {
    ComputeRowFromDoubles(pos, row);
  }
}

}  // namespace posenc
