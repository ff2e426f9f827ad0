#include "core/plan/plain_table_plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include "core/numerics/rounding.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/numerics/sincos_double_double.h"
#include "core/numerics/sincos_fast.h"
#include "core/plan/exact_sincos_mpfr.h"
#include "core/spec/rope.h"

namespace posenc {
namespace {

constexpr double kMinFastFrequency = 0x1p-900;

// Angle addition (core/numerics/angle_addition.h): anchors every K rows, K a
// power of two <= kMaxAngleStep with the sin/cos(j f) table (16 bytes per
// column and j) within kAngleTableBytes; ranges shorter than kMinAngleRows use
// the per-row path.
constexpr uint32_t kMaxAngleStep = 64;
// float64 anchors (double-double sin/cos, several times a row's cost) are
// spaced further apart: K = 128 keeps d = 512's table at 1 MiB.
constexpr uint32_t kMaxAngleStep64 = 128;
constexpr size_t kAngleTableBytes = size_t{1} << 20;
constexpr uint32_t kMinAngleRows = 16;
// The float64 table costs about K anchor rows to build: the range path is
// used for ranges of at least 2K rows.
constexpr uint32_t kMinAngleRows64 = 2 * kMaxAngleStep64;
// Outputs at least this large (more than a core's L2) are written with
// non-temporal stores: no read-for-ownership, and the table would not stay
// in cache anyway.
constexpr uint64_t kStreamMinBytes = uint64_t{4} << 20;

// A fast value times the attention factor's high word: error <= kFastRelError
// + 2^-52 relative, covered (with the rounding of y +- slack) by 2^-45.
constexpr double kScaledCheckSlack = 0x1p-45;

bool IsRopeLayout(Layout layout) {
  return layout == Layout::kRotateHalf || layout == Layout::kInterleavedPairs;
}

// The `slow` callback of the SIMD kernels: the scalar rigorous path
// (ComputeColumn) for one column of the row being written.
struct SlowColumn {
  const PlainTablePlan* plan;
  uint32_t pos;
  std::byte* row;
  static void Call(void* self, uint32_t column) {
    const auto* c = static_cast<const SlowColumn*>(self);
    c->plan->ComputeColumn(column, c->pos, c->row);
  }
};

}  // namespace

struct PlainTablePlan::AngleTable {
  std::once_flag once;
  uint32_t step = 0;                  // K; 0: path not used
  size_t padded = 0;                  // row stride of sin_j / cos_j
  KernelVector<double> sin_j, cos_j;  // [j * padded + i] = sin/cos(j * f_i)
  // float64: low words of the double-double sin_j / cos_j (NaN hi: risky).
  KernelVector<double> sin_j_lo, cos_j_lo;
  // float16 / bfloat16: sin_j / cos_j rounded to float32 (the float32-lane
  // kernel, Half16RowFromAnchorF32Simd).
  KernelVector<float> sin_j32, cos_j32;
  // The bytes of the vectors above once built (MemoryBytes reads it from
  // any thread).
  std::atomic<size_t> bytes{0};
};

namespace {

// The plan a RoPE layout is computed by: the same family as concat_cos_sin.
std::shared_ptr<const PlainTablePlan> InnerPlan(const TableSpec& spec) {
  if (!IsRopeLayout(spec.layout)) return nullptr;
  TableSpec inner = spec;
  inner.layout = Layout::kConcatCosSin;
  return std::make_shared<const PlainTablePlan>(inner);
}

}  // namespace

PlainTablePlan::PlainTablePlan(const TableSpec& spec)
    : spec_(spec),
      half_(spec.d / 2),
      inner_(InnerPlan(spec)),
      // The inner plan's frequencies are this plan's: computed once (a cold
      // one-row call on a new RoPE family pays for them).
      freq_(inner_ != nullptr ? inner_->freq_ : ExactFrequencies(spec)),
      angle_(std::make_shared<AngleTable>()) {
  if (inner_ != nullptr) {
    scaled_ = inner_->scaled_;
    attn_hi_ = inner_->attn_hi_;
    attn_lo_ = inner_->attn_lo_;
  } else if (spec.rope != nullptr && HasAttentionFactor(*spec.rope)) {
    scaled_ = true;
    mpfr_t a;
    mpfr_init2(a, 192);
    AttentionFactorMpfr(*spec.rope, a);
    attn_hi_ = mpfr_get_d(a, MPFR_RNDN);
    mpfr_sub_d(a, a, attn_hi_, MPFR_RNDN);
    attn_lo_ = mpfr_get_d(a, MPFR_RNDN);
    mpfr_clear(a);
  }
  has_tiny_angle_cos_ = TinyAngleCosBits(spec_, &tiny_angle_cos_bits_);
  // f_i decreases with i, so the fast columns are a prefix.
  fast_columns_ = 0;
  while (fast_columns_ < half_ && freq_[fast_columns_].w0 >= kMinFastFrequency)
    ++fast_columns_;
  const size_t padded = RoundUpToKernelLanes(fast_columns_);
  w0_.assign(padded, 1.0);
  w1_.assign(padded, 0.0);
  w2_.assign(padded, 0.0);
  for (uint32_t i = 0; i < fast_columns_; ++i) {
    w0_[i] = freq_[i].w0;
    w1_[i] = freq_[i].w1;
    w2_[i] = freq_[i].w2;
  }
}

void PlainTablePlan::StorePair(uint32_t column, uint64_t sin_bits,
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
    case Layout::kRotateHalf:  // cos at i and h+i, sin at d+i and d+h+i
      cos_col = column;
      sin_col = spec_.d + size_t{column};
      StoreBits(cos_bits, spec_.dtype, row + (cos_col + half_) * size);
      StoreBits(sin_bits, spec_.dtype, row + (sin_col + half_) * size);
      break;
    case Layout::kInterleavedPairs:  // cos at 2i, 2i+1; sin at d+2i, d+2i+1
      cos_col = 2 * size_t{column};
      sin_col = spec_.d + cos_col;
      StoreBits(cos_bits, spec_.dtype, row + (cos_col + 1) * size);
      StoreBits(sin_bits, spec_.dtype, row + (sin_col + 1) * size);
      break;
    case Layout::kRotationMatrix:  // never a table's (ValidateSpec)
      break;
  }
  StoreBits(sin_bits, spec_.dtype, row + sin_col * size);
  StoreBits(cos_bits, spec_.dtype, row + cos_col * size);
}

void PlainTablePlan::ExpandRows(const std::byte* inner, uint32_t count,
                                std::byte* out) const {
  const size_t size = DTypeSize(spec_.dtype);
  const size_t half_bytes = size_t{half_} * size;
  for (uint32_t r = 0; r < count; ++r) {
    const std::byte* cos = inner + size_t{r} * spec_.d * size;
    const std::byte* sin = cos + half_bytes;
    std::byte* row = out + size_t{r} * 2 * spec_.d * size;
    if (spec_.layout == Layout::kRotateHalf) {
      std::memcpy(row, cos, half_bytes);
      std::memcpy(row + half_bytes, cos, half_bytes);
      std::memcpy(row + 2 * half_bytes, sin, half_bytes);
      std::memcpy(row + 3 * half_bytes, sin, half_bytes);
    } else {
      std::byte* sin_out = row + 2 * half_bytes;
      for (uint32_t i = 0; i < half_; ++i) {
        std::memcpy(row + 2 * i * size, cos + i * size, size);
        std::memcpy(row + (2 * i + 1) * size, cos + i * size, size);
        std::memcpy(sin_out + 2 * i * size, sin + i * size, size);
        std::memcpy(sin_out + (2 * i + 1) * size, sin + i * size, size);
      }
    }
  }
}

void PlainTablePlan::ComputeRowScaled(uint32_t pos, std::byte* row) const {
  if (pos == 0) {
    // Row 0 is a * sin(0) = +0 and a * cos(0) = a in every column: one
    // correctly rounded a (the MPFR path), stored d/2 times. (Per column,
    // that path cost ~5 us each: 10-17 ms for a cold row 0 at d = 4096.)
    uint64_t sin_bits, cos_bits;
    ExactSinCosBits(spec_, 0, 0, &sin_bits, &cos_bits);
    for (uint32_t i = 0; i < half_; ++i) StorePair(i, sin_bits, cos_bits, row);
    return;
  }
  if (spec_.dtype == DType::kFloat64) {
    for (uint32_t i = 0; i < half_; ++i) ComputeColumn(i, pos, row);
    return;
  }
  ComputeRowFromDoubles(pos, row);  // times the attention factor
}

void PlainTablePlan::ComputeColumn(uint32_t column, uint32_t pos,
                                   std::byte* row) const {
  uint64_t sin_bits, cos_bits;
  bool decided = false;
  if (pos == 0 && scaled_) {
    // cos(0) * a = RN(a): the MPFR path (once per column of row 0).
  } else if (pos == 0) {
    sin_bits = EncodeExact(0.0, spec_.dtype);
    cos_bits = EncodeExact(1.0, spec_.dtype);
    decided = true;
  } else if (column < fast_columns_) {
    if (spec_.dtype == DType::kFloat64) {
      DoubleDoubleSinCos v =
          DoubleDoubleSinCosOf(static_cast<double>(pos), freq_[column]);
      if (scaled_) {
        // Relative error < 2^-98 (sin/cos) + 2^-103.7 (product) + 2^-106
        // (a's words): still within kDoubleDoubleRelError = 2^-96.
        const DoubleDouble a{attn_hi_, attn_lo_};
        v.sin = DdMul(v.sin, a);
        v.cos = DdMul(v.cos, a);
      }
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
      const double a = scaled_ ? attn_hi_ : 1.0;
      const double slack = scaled_ ? kScaledCheckSlack : kFastCheckSlack;
      // |fast value - exact| <= kFastRelError |exact|, covered by slack.
      const double ys = v.sin * a, yc = v.cos * a;
      const bool sin_done = !v.risky && RoundWithin(ys, slack * std::fabs(ys),
                                                    spec_.dtype, &sin_bits);
      bool cos_done = !v.risky && RoundWithin(yc, slack * std::fabs(yc),
                                              spec_.dtype, &cos_bits);
      if (!cos_done && has_tiny_angle_cos_ &&
          static_cast<double>(pos) * w0_[column] < kTinyAngle) {
        cos_bits = tiny_angle_cos_bits_;
        cos_done = true;
      }
      decided = sin_done && cos_done;
    }
  } else if (spec_.dtype != DType::kFloat64 && has_tiny_angle_cos_) {
    // f < 2^-900, pos < 2^32, a <= 2: 0 < a sin x < 2^-866, below half the
    // least float32/bfloat16/float16 subnormal, so it rounds to +0; x is
    // tiny. No MPFR for the columns of a base above ~1e270.
    sin_bits = EncodeExact(0.0, spec_.dtype);
    cos_bits = tiny_angle_cos_bits_;
    decided = true;
  }
  if (!decided) ExactSinCosBits(spec_, column, pos, &sin_bits, &cos_bits);
  StorePair(column, sin_bits, cos_bits, row);
}

void PlainTablePlan::ComputeRowFloat32(uint32_t pos, std::byte* row) const {
  SlowColumn ctx{this, pos, row};
  uint32_t done = 0;
  if (Float32RowSimd(w0_.data(), w1_.data(), fast_columns_, half_, spec_.layout,
                     pos, reinterpret_cast<float*>(row), SlowColumn::Call,
                     &ctx)) {
    done = fast_columns_;
  }
  for (uint32_t i = done; i < half_; ++i) ComputeColumn(i, pos, row);
}

void PlainTablePlan::ComputeRowFromDoubles(uint32_t pos, std::byte* row) const {
  // float16 / bfloat16, and every narrow dtype with a RoPE attention factor
  // a: vector sin/cos in blocks, scalar rounding checks of a * value.
  const double a = scaled_ ? attn_hi_ : 1.0;
  const double slack = scaled_ ? kScaledCheckSlack : kFastCheckSlack;
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
      const double ys = s[k] * a, yc = c[k] * a;
      if (!risky[k] &&
          RoundWithin(ys, slack * std::fabs(ys), spec_.dtype, &sb) &&
          RoundWithin(yc, slack * std::fabs(yc), spec_.dtype, &cb)) {
        StorePair(i + k, sb, cb, row);
      } else {
        ComputeColumn(i + k, pos, row);
      }
    }
  }
  for (uint32_t i = done; i < half_; ++i) ComputeColumn(i, pos, row);
}

void PlainTablePlan::AccurateSinCos(uint32_t column, uint32_t pos, double* s,
                                    double* c) const {
  // hi of a double-double within 2^-96 relative: |hi - v| <= 2^-53 |hi| +
  // 2^-96 |v|. Risky: MPFR, correctly rounded to double.
  const DoubleDoubleSinCos v =
      DoubleDoubleSinCosOf(static_cast<double>(pos), freq_[column]);
  if (!v.risky) {
    *s = v.sin.hi;
    *c = v.cos.hi;
    return;
  }
  TableSpec spec64 = spec_;
  spec64.dtype = DType::kFloat64;
  uint64_t sb, cb;
  ExactSinCosBits(spec64, column, pos, &sb, &cb);
  std::memcpy(s, &sb, 8);
  std::memcpy(c, &cb, 8);
}

bool PlainTablePlan::ComputeAnchor(uint32_t p0, double* s0, double* c0,
                                   uint8_t* risky) const {
  const size_t padded = RoundUpToKernelLanes(fast_columns_);
  if (p0 == 0) {
    std::fill(s0, s0 + padded, 0.0);
    std::fill(c0, c0 + padded, 1.0);
    return true;
  }
  if (!SinCosColumnsSimd(w0_.data(), w1_.data(), fast_columns_, p0, s0, c0,
                         risky)) {
    return false;
  }
  for (uint32_t i = 0; i < fast_columns_; ++i) {
    if (risky[i]) AccurateSinCos(i, p0, &s0[i], &c0[i]);
  }
  return true;
}

const PlainTablePlan::AngleTable& PlainTablePlan::GetAngleTable() const {
  AngleTable& t = *angle_;
  std::call_once(t.once, [this, &t] {
    if (fast_columns_ == 0) return;
    const bool f64 = spec_.dtype == DType::kFloat64;
    const size_t padded = RoundUpToKernelLanes(fast_columns_);
    const size_t bytes_per_j = padded * (f64 ? 32 : 16);
    uint32_t k = f64 ? kMaxAngleStep64 : kMaxAngleStep;
    while (k > 1 && size_t{k} * bytes_per_j > kAngleTableBytes) k /= 2;
    if (k < 2) return;
    KernelVector<double> sin_j(size_t{k} * padded, 0.0);
    KernelVector<double> cos_j(size_t{k} * padded, 1.0);  // j = 0: exact
    if (f64) {
      // Double-double sin/cos(j f_i); risky ones are marked NaN (those
      // columns of row p0 + j then take the per-value path).
      KernelVector<double> sin_lo(sin_j.size(), 0.0), cos_lo(sin_j.size(), 0.0);
      for (uint32_t j = 1; j < k; ++j) {
        const size_t row = size_t{j} * padded;
        DdSinCosColumns(j, &sin_j[row], &sin_lo[row], &cos_j[row],
                        &cos_lo[row]);
      }
      t.sin_j_lo = std::move(sin_lo);
      t.cos_j_lo = std::move(cos_lo);
    }
    std::vector<uint8_t> risky(padded);
    for (uint32_t j = 1; j < k && !f64; ++j) {
      double* s = &sin_j[size_t{j} * padded];
      double* c = &cos_j[size_t{j} * padded];
      if (!SinCosColumnsSimd(w0_.data(), w1_.data(), fast_columns_, j, s, c,
                             risky.data())) {
        for (uint32_t i = 0; i < fast_columns_; ++i) {
          const FastSinCos v = FastSinCosScalar(j, w0_[i], w1_[i]);
          s[i] = v.sin;
          c[i] = v.cos;
          risky[i] = v.risky;
        }
      }
      for (uint32_t i = 0; i < fast_columns_; ++i) {
        if (risky[i]) AccurateSinCos(i, j, &s[i], &c[i]);
      }
    }
    if (spec_.dtype == DType::kFloat16 || spec_.dtype == DType::kBFloat16) {
      t.sin_j32.assign(sin_j.begin(), sin_j.end());
      t.cos_j32.assign(cos_j.begin(), cos_j.end());
    }
    t.padded = padded;
    t.sin_j = std::move(sin_j);
    t.cos_j = std::move(cos_j);
    t.step = k;
    const auto held = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
    t.bytes.store(held(t.sin_j) + held(t.cos_j) + held(t.sin_j_lo) +
                      held(t.cos_j_lo) + held(t.sin_j32) + held(t.cos_j32),
                  std::memory_order_release);
  });
  return t;
}

size_t PlainTablePlan::MemoryBytes() const {
  const auto held = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return sizeof(*this) + held(freq_) + held(w0_) + held(w1_) + held(w2_) +
         angle_->bytes.load(std::memory_order_acquire) +
         (inner_ != nullptr ? inner_->MemoryBytes() : 0);
}

uint32_t PlainTablePlan::AngleAdditionStep() const {
  return GetAngleTable().step;
}

void PlainTablePlan::DdSinCosColumns(uint32_t pos, double* s_hi, double* s_lo,
                                     double* c_hi, double* c_lo) const {
  if (DdSinCosColumnsSimd(w0_.data(), w1_.data(), w2_.data(), fast_columns_,
                          pos, s_hi, s_lo, c_hi, c_lo)) {
    return;
  }
  for (uint32_t i = 0; i < fast_columns_; ++i) {
    const DoubleDoubleSinCos v =
        DoubleDoubleSinCosOf(static_cast<double>(pos), freq_[i]);
    s_hi[i] = v.risky ? std::nan("") : v.sin.hi;
    s_lo[i] = v.sin.lo;
    c_hi[i] = v.risky ? std::nan("") : v.cos.hi;
    c_lo[i] = v.cos.lo;
  }
}

uint32_t PlainTablePlan::ComputeRowsFloat64(uint32_t first, uint32_t count,
                                            std::byte* out) const {
  const AngleTable& t = GetAngleTable();
  uint32_t p = first;
  if (t.step == 0) return p;
  const uint32_t k = t.step, end = first + count;
  const size_t row_bytes = spec_.row_bytes(), padded = t.padded;
  const bool stream = uint64_t{count} * row_bytes >= kStreamMinBytes;
  KernelVector<double> s0h(padded, 0.0), s0l(padded, 0.0), c0h(padded, 1.0),
      c0l(padded, 0.0);
  SlowColumn ctx{this, 0, nullptr};
  while (p < end) {
    const uint32_t p0 = p - p % k;
    // Anchor row: double-double sin/cos(p0 f_i), NaN where risky.
    if (p0 != 0) {
      DdSinCosColumns(p0, s0h.data(), s0l.data(), c0h.data(), c0l.data());
    } else {
      std::fill(s0h.begin(), s0h.end(), 0.0);
      std::fill(s0l.begin(), s0l.end(), 0.0);
      std::fill(c0h.begin(), c0h.end(), 1.0);
      std::fill(c0l.begin(), c0l.end(), 0.0);
    }
    if (scaled_) {
      // The attention factor a = attn_hi_ + attn_lo_ folded into the
      // anchor (DdMul: relative error 2^-104, inside the anchor row's
      // relative slack); a <= 2 doubles the identity's absolute bound
      // (kDdAngleAddCheckSlack), hence slack_scale. NaN stays NaN.
      const DoubleDouble a{attn_hi_, attn_lo_};
      for (size_t i = 0; i < padded; ++i) {
        const DoubleDouble s = DdMul({s0h[i], s0l[i]}, a);
        const DoubleDouble c = DdMul({c0h[i], c0l[i]}, a);
        s0h[i] = s.hi;
        s0l[i] = s.lo;
        c0h[i] = c.hi;
        c0l[i] = c.lo;
      }
    }
    const uint32_t block_end = std::min<uint64_t>(end, uint64_t{p0} + k);
    for (; p < block_end; ++p) {
      std::byte* row = out + size_t{p - first} * row_bytes;
      const uint32_t j = p - p0;
      ctx.pos = p;
      ctx.row = row;
      const size_t at = size_t{j} * padded;
      DdArrays a{s0h.data(), s0l.data(), c0h.data(),
                 c0l.data(), nullptr,    nullptr,
                 nullptr,    nullptr,    scaled_ && attn_hi_ > 1 ? 2.0 : 1.0};
      if (j != 0) {
        a.sj_hi = &t.sin_j[at];
        a.sj_lo = &t.sin_j_lo[at];
        a.cj_hi = &t.cos_j[at];
        a.cj_lo = &t.cos_j_lo[at];
      }
      if (p == 0 ||
          !Float64RowFromAnchorSimd(a, fast_columns_, half_, spec_.layout,
                                    reinterpret_cast<double*>(row), stream,
                                    SlowColumn::Call, &ctx)) {
        ComputeRow(p, row);
        continue;
      }
      for (uint32_t i = fast_columns_; i < half_; ++i) {
        ComputeColumn(i, p, row);
      }
    }
  }
  if (stream) FlushStreamingStores();
  return p;
}

void PlainTablePlan::ComputeRows(uint32_t first, uint32_t count,
                                 std::byte* out) const {
  if (inner_ != nullptr) {
    // Blocks of inner rows (bounded scratch), each expanded.
    const size_t inner_row = inner_->spec().row_bytes();
    const uint32_t block = static_cast<uint32_t>(
        std::clamp<size_t>((size_t{256} << 10) / inner_row, 64, count));
    std::vector<std::byte> scratch(size_t{block} * inner_row);
    for (uint32_t done = 0; done < count;) {
      const uint32_t n = std::min(block, count - done);
      inner_->ComputeRows(first + done, n, scratch.data());
      ExpandRows(scratch.data(), n, out + size_t{done} * spec_.row_bytes());
      done += n;
    }
    return;
  }
  const size_t row_bytes = spec_.row_bytes();
  uint32_t p = first;
  const uint32_t end = first + count;
  if (spec_.dtype == DType::kFloat64 && count >= kMinAngleRows64) {
    p = ComputeRowsFloat64(first, count, out);
  }
  const AngleTable* t = nullptr;
  if (spec_.dtype != DType::kFloat64 && count >= kMinAngleRows) {
    t = &GetAngleTable();
    if (t->step == 0) t = nullptr;
  }
  if (t != nullptr) {
    const uint32_t k = t->step;
    const bool f32 = spec_.dtype == DType::kFloat32;
    const bool stream = f32 && uint64_t{count} * row_bytes >= kStreamMinBytes;
    KernelVector<double> s0(t->padded), c0(t->padded);
    std::vector<uint8_t> risky(t->padded);
    // 16-bit dtypes: the anchor rounded to float32 for the float32-lane
    // kernel of rows j >= 1 (the anchor row itself is rounded from double).
    KernelVector<float> s0f(f32 ? 0 : t->padded), c0f(f32 ? 0 : t->padded);
    const bool bf16 = spec_.dtype == DType::kBFloat16;
    // An attention factor a (RoPE) is folded into the anchor row: s0, c0
    // times a_hi make the identity give a sin and a cos. The inputs'
    // relative error grows by 2^-52 (a_hi, the product) and the identity's
    // absolute bound by the factor a <= 2 (core/spec/rope.h bounds it), so rows
    // j >= 1 take twice the absolute slack when a > 1
    // (core/numerics/angle_addition.h; the anchor row's relative slack 2^-46
    // still covers 2^-47 + 2^-52 and its own rounding).
    const double slack_scale = scaled_ && attn_hi_ > 1 ? 2.0 : 1.0;
    SlowColumn ctx{this, 0, nullptr};
    while (p < end) {
      const uint32_t p0 = p - p % k;
      if (!ComputeAnchor(p0, s0.data(), c0.data(), risky.data())) break;
      if (scaled_) {
        for (size_t i = 0; i < t->padded; ++i) {
          s0[i] *= attn_hi_;
          c0[i] *= attn_hi_;
        }
      }
      if (!f32) {
        std::copy(s0.begin(), s0.end(), s0f.begin());
        std::copy(c0.begin(), c0.end(), c0f.begin());
      }
      const uint32_t block_end = std::min<uint64_t>(end, uint64_t{p0} + k);
      for (; p < block_end; ++p) {
        std::byte* row = out + size_t{p - first} * row_bytes;
        const uint32_t j = p - p0;
        ctx.pos = p;
        ctx.row = row;
        const size_t at = size_t{j} * t->padded;
        const double* sj = j == 0 ? nullptr : &t->sin_j[at];
        const double* cj = &t->cos_j[at];
        auto* row16 = reinterpret_cast<uint16_t*>(row);
        bool ok;
        if (p == 0) {
          ok = false;
        } else if (f32) {
          ok = Float32RowFromAnchorSimd(s0.data(), c0.data(), sj, cj,
                                        fast_columns_, half_, spec_.layout,
                                        reinterpret_cast<float*>(row), stream,
                                        SlowColumn::Call, &ctx, slack_scale);
        } else if (j == 0) {
          ok = Half16RowFromAnchorSimd(
              s0.data(), c0.data(), nullptr, cj, fast_columns_, half_,
              spec_.layout, bf16, row16, SlowColumn::Call, &ctx, slack_scale);
        } else {
          const Half16Arrays a{s0f.data(),
                               c0f.data(),
                               &t->sin_j32[at],
                               &t->cos_j32[at],
                               s0.data(),
                               c0.data(),
                               sj,
                               cj};
          ok = Half16RowFromAnchorF32Simd(a, fast_columns_, half_, spec_.layout,
                                          bf16, row16, SlowColumn::Call, &ctx,
                                          slack_scale);
        }
        if (!ok) {
          ComputeRow(p, row);
          continue;
        }
        for (uint32_t i = fast_columns_; i < half_; ++i) {
          ComputeColumn(i, p, row);
        }
      }
    }
    if (stream) FlushStreamingStores();
  }
  for (; p < end; ++p) ComputeRow(p, out + size_t{p - first} * row_bytes);
}

void PlainTablePlan::ComputeRow(uint32_t pos, std::byte* row) const {
  if (inner_ != nullptr) {
    std::vector<std::byte> scratch(inner_->spec().row_bytes());
    inner_->ComputeRow(pos, scratch.data());
    ExpandRows(scratch.data(), 1, row);
    return;
  }
  if (scaled_) return ComputeRowScaled(pos, row);
  if (pos == 0 || spec_.dtype == DType::kFloat64) {
    for (uint32_t i = 0; i < half_; ++i) ComputeColumn(i, pos, row);
  } else if (spec_.dtype == DType::kFloat32) {
    ComputeRowFloat32(pos, row);
  } else {
    ComputeRowFromDoubles(pos, row);
  }
}

}  // namespace posenc
