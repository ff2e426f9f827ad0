// Highway dynamic dispatch: this file is compiled once per target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/numerics/row_kernel_simd.cc"
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// Keep after highway.h (the include-guard dance of Highway).
#include "core/numerics/angle_addition.h"
#include "core/numerics/rounding.h"
#include "core/numerics/row_kernel_simd.h"
#include "core/numerics/sincos_double_double.h"
#include "core/numerics/sincos_fast.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Where pair 0's sin and cos go in a float32 row of `layout` (pair i is then
// at +2i for kInterleaved, +i otherwise).
inline float* SinBase(Layout layout, float* row, uint32_t half) {
  return layout == Layout::kConcatCosSin ? row + half : row;
}
inline float* CosBase(Layout layout, float* row, uint32_t half) {
  return layout == Layout::kConcatSinCos ? row + half : row;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define POSENC_SIMD_FMA 1
#else
#define POSENC_SIMD_FMA 0
#endif

#if POSENC_SIMD_FMA

template <class D, class V = hn::Vec<D>>
HWY_INLINE void SinCosVec(D d, V pos, V w0, V w1, V& sin_x, V& cos_x,
                          hn::Mask<D>& risky) {
  const hn::RebindToUnsigned<D> du;
  // Same operations as FastSinCosScalar (core/numerics/sincos_fast.h).
  const V xh = hn::Mul(pos, w0);
  const V e0 = hn::MulSub(pos, w0, xh);  // exact
  const V xl = hn::MulAdd(pos, w1, e0);
  const V q = hn::Round(hn::Mul(xh, hn::Set(d, kTwoOverPi)));
  const V t1 = hn::NegMulAdd(q, hn::Set(d, kPio2W1), xh);  // exact
  const V p2 = hn::Set(d, kPio2W2);
  const V a2h = hn::Mul(q, p2);
  const V a2l = hn::MulSub(q, p2, a2h);
  const V u = hn::Sub(xl, a2h);
  // TwoSum(t1, u).
  const V rh = hn::Add(t1, u);
  const V bb = hn::Sub(rh, t1);
  V rl = hn::Add(hn::Sub(t1, hn::Sub(rh, bb)), hn::Sub(u, bb));
  rl = hn::Sub(rl, hn::MulAdd(q, hn::Set(d, kPio2W3), a2l));
  const V zero = hn::Zero(d);
  risky = hn::And(hn::Ne(q, zero),
                  hn::Lt(hn::Abs(rh), hn::Set(d, kRiskyReducedArg)));
  const V z = hn::Mul(rh, rh);
  V ps = hn::Set(d, kSinC[8]);
  for (int k = 7; k >= 1; --k) ps = hn::MulAdd(ps, z, hn::Set(d, kSinC[k]));
  V pc = hn::Set(d, kCosC[9]);
  for (int k = 8; k >= 2; --k) pc = hn::MulAdd(pc, z, hn::Set(d, kCosC[k]));
  const V s = hn::Add(rh, hn::MulAdd(hn::Mul(rh, z), ps, rl));
  const V w = hn::MulAdd(z, hn::MulAdd(z, pc, hn::Set(d, -0.5)),
                         hn::Neg(hn::Mul(rh, rl)));
  const V c = hn::Add(hn::Set(d, 1.0), w);
  // Quadrant bits of q (0 <= q < 2^51): low mantissa bits of q + 1.5*2^52.
  const auto qbits = hn::BitCast(du, hn::Add(q, hn::Set(d, 0x1.8p52)));
  const auto one = hn::Set(du, 1);
  const auto two = hn::Set(du, 2);
  const auto odd = hn::RebindMask(d, hn::Ne(hn::And(qbits, one), hn::Zero(du)));
  const V sin_sign = hn::BitCast(d, hn::ShiftLeft<62>(hn::And(qbits, two)));
  const V cos_sign =
      hn::BitCast(d, hn::ShiftLeft<62>(hn::And(hn::Add(qbits, one), two)));
  sin_x = hn::Xor(hn::IfThenElse(odd, c, s), sin_sign);
  cos_x = hn::Xor(hn::IfThenElse(odd, s, c), cos_sign);
}

bool Float32RowSimdImpl(const double* w0, const double* w1, uint32_t columns,
                        uint32_t half, Layout layout, double pos, float* row,
                        SlowColumnFn slow, void* ctx) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(df)> du32;
  const size_t n = hn::Lanes(d);
  const auto p = hn::Set(d, pos);
  const auto slack = hn::Set(d, kFastCheckSlack);
  float* const sin_base = SinBase(layout, row, half);
  float* const cos_base = CosBase(layout, row, half);
  uint32_t i = 0;
  for (; i + n <= columns; i += n) {
    hn::Vec<decltype(d)> s, c;
    hn::Mask<decltype(d)> risky;
    SinCosVec(d, p, hn::LoadU(d, w0 + i), hn::LoadU(d, w1 + i), s, c, risky);
    // Decided iff y - slack|y| and y + slack|y| round to the same float.
    const auto ss = hn::Mul(hn::Abs(s), slack);
    const auto cs = hn::Mul(hn::Abs(c), slack);
    const auto s_lo = hn::DemoteTo(df, hn::Sub(s, ss));
    const auto s_hi = hn::DemoteTo(df, hn::Add(s, ss));
    const auto c_lo = hn::DemoteTo(df, hn::Sub(c, cs));
    const auto c_hi = hn::DemoteTo(df, hn::Add(c, cs));
    const auto undecided =
        hn::Or(hn::Ne(hn::BitCast(du32, s_lo), hn::BitCast(du32, s_hi)),
               hn::Ne(hn::BitCast(du32, c_lo), hn::BitCast(du32, c_hi)));
    if (HWY_UNLIKELY(!hn::AllFalse(du32, undecided) ||
                     !hn::AllFalse(d, risky))) {
      for (uint32_t k = 0; k < n; ++k) slow(ctx, i + k);
      continue;
    }
    if (layout == Layout::kInterleaved) {
      hn::StoreInterleaved2(s_lo, c_lo, df, row + 2 * i);
    } else {
      hn::StoreU(s_lo, df, sin_base + i);
      hn::StoreU(c_lo, df, cos_base + i);
    }
  }
  for (; i < columns; ++i) slow(ctx, i);
  return true;
}

bool SinCosColumnsSimdImpl(const double* w0, const double* w1, uint32_t columns,
                           double pos, double* sin_out, double* cos_out,
                           uint8_t* risky_out) {
  const hn::ScalableTag<double> d;
  const size_t n = hn::Lanes(d);
  const auto p = hn::Set(d, pos);
  const auto one = hn::Set(d, 1.0);
  for (uint32_t i = 0; i < columns; i += n) {
    hn::Vec<decltype(d)> s, c;
    hn::Mask<decltype(d)> risky;
    SinCosVec(d, p, hn::LoadU(d, w0 + i), hn::LoadU(d, w1 + i), s, c, risky);
    hn::StoreU(s, d, sin_out + i);
    hn::StoreU(c, d, cos_out + i);
    double flags[hn::MaxLanes(d)];
    hn::StoreU(hn::IfThenElseZero(risky, one), d, flags);
    for (size_t k = 0; k < n; ++k) risky_out[i + k] = flags[k] != 0;
  }
  return true;
}

// Stores sin/cos floats of one vector of columns at `i` in the layout, only
// the first `valid` lanes (valid < n goes through a stack buffer).
template <class DF, class VF>
HWY_INLINE void StoreColumns(DF df, VF s, VF c, Layout layout, float* row,
                             float* sin_base, float* cos_base, uint32_t i,
                             size_t valid) {
  const size_t n = hn::Lanes(df);
  if (HWY_LIKELY(valid == n)) {
    if (layout == Layout::kInterleaved) {
      hn::StoreInterleaved2(s, c, df, row + 2 * size_t{i});
    } else {
      hn::StoreU(s, df, sin_base + i);
      hn::StoreU(c, df, cos_base + i);
    }
    return;
  }
  float st[hn::MaxLanes(df)], ct[hn::MaxLanes(df)];
  hn::StoreU(s, df, st);
  hn::StoreU(c, df, ct);
  for (size_t k = 0; k < valid; ++k) {
    if (layout == Layout::kInterleaved) {
      row[2 * (size_t{i} + k)] = st[k];
      row[2 * (size_t{i} + k) + 1] = ct[k];
    } else {
      sin_base[i + k] = st[k];
      cos_base[i + k] = ct[k];
    }
  }
}

// Columns [i, i + Lanes(d)) of a row from an anchor (angle addition): the
// double values ys, yc of sin and cos and the slack es, ec their rounding
// test allows. kAnchorRow: the row is the anchor itself (y = s0, c0,
// relative slack `rel`); otherwise y = s0*cj + c0*sj, c0*cj - s0*sj and the
// absolute slack `abs_slack`. The float32 and 16-bit kernels share it.
template <bool kAnchorRow, class D>
HWY_INLINE void AnchorColumns(D d, const double* s0, const double* c0,
                              const double* sj, const double* cj, uint32_t i,
                              hn::Vec<D> rel, hn::Vec<D> abs_slack,
                              hn::Vec<D>& ys, hn::Vec<D>& yc, hn::Vec<D>& es,
                              hn::Vec<D>& ec) {
  const auto S = hn::LoadU(d, s0 + i);
  const auto C = hn::LoadU(d, c0 + i);
  if (kAnchorRow) {
    ys = S;
    yc = C;
    es = hn::Mul(hn::Abs(ys), rel);
    ec = hn::Mul(hn::Abs(yc), rel);
  } else {
    const auto G = hn::LoadU(d, cj + i);
    const auto Sg = hn::LoadU(d, sj + i);
    ys = hn::MulAdd(S, G, hn::Mul(C, Sg));  // fl(S*G + fl(C*Sg))
    yc = hn::MulSub(C, G, hn::Mul(S, Sg));  // fl(C*G - fl(S*Sg))
    es = abs_slack;
    ec = abs_slack;
  }
}

// Rows from an anchor (angle addition), see core/numerics/row_kernel_simd.h.
// kAnchorRow as in AnchorColumns.
template <bool kAnchorRow, bool kStream>
HWY_INLINE void Float32RowFromAnchorT(const double* s0, const double* c0,
                                      const double* sj, const double* cj,
                                      uint32_t columns, uint32_t half,
                                      Layout layout, float* row,
                                      SlowColumnFn slow, void* ctx,
                                      double slack_scale) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(df)> du32;
  const size_t n = hn::Lanes(d);
  float* const sin_base = SinBase(layout, row, half);
  float* const cos_base = CosBase(layout, row, half);
  const auto rel = hn::Set(d, kFastCheckSlack);
  const auto abs_slack = hn::Set(d, kAngleAddCheckSlack * slack_scale);
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    hn::Vec<decltype(d)> ys, yc, es, ec;
    AnchorColumns<kAnchorRow>(d, s0, c0, sj, cj, i, rel, abs_slack, ys, yc, es,
                              ec);
    const auto s_lo = hn::DemoteTo(df, hn::Sub(ys, es));
    const auto s_hi = hn::DemoteTo(df, hn::Add(ys, es));
    const auto c_lo = hn::DemoteTo(df, hn::Sub(yc, ec));
    const auto c_hi = hn::DemoteTo(df, hn::Add(yc, ec));
    const auto undecided =
        hn::Or(hn::Ne(hn::BitCast(du32, s_lo), hn::BitCast(du32, s_hi)),
               hn::Ne(hn::BitCast(du32, c_lo), hn::BitCast(du32, c_hi)));
    const size_t valid = HWY_MIN(n, size_t{columns - i});
    const bool all_decided = hn::AllFalse(du32, undecided);
    if (kStream && HWY_LIKELY(all_decided && valid == n)) {
      // Non-temporal full-vector stores (aligned by the caller's check).
      if (layout == Layout::kInterleaved) {
        // (c << 32) | s per 64-bit lane = s, c in memory order.
        const hn::Repartition<uint64_t, decltype(d)> du64;
        const auto s64 = hn::PromoteTo(du64, hn::BitCast(du32, s_lo));
        const auto c64 = hn::PromoteTo(du64, hn::BitCast(du32, c_lo));
        hn::Stream(hn::Or(hn::ShiftLeft<32>(c64), s64), du64,
                   reinterpret_cast<uint64_t*>(row + 2 * size_t{i}));
      } else {
        hn::Stream(s_lo, df, sin_base + i);
        hn::Stream(c_lo, df, cos_base + i);
      }
      continue;
    }
    StoreColumns(df, s_lo, c_lo, layout, row, sin_base, cos_base, i, valid);
    if (HWY_UNLIKELY(!all_decided)) {
      uint8_t bits[8] = {};
      hn::StoreMaskBits(du32, undecided, bits);
      for (size_t k = 0; k < valid; ++k) {
        if ((bits[k / 8] >> (k % 8)) & 1)
          slow(ctx, i + static_cast<uint32_t>(k));
      }
    }
  }
}

bool Float32RowFromAnchorSimdImpl(const double* s0, const double* c0,
                                  const double* sj, const double* cj,
                                  uint32_t columns, uint32_t half,
                                  Layout layout, float* row, bool stream,
                                  SlowColumnFn slow, void* ctx,
                                  double slack_scale) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  // Streaming needs every full-vector store aligned to its size.
  const size_t align = layout == Layout::kInterleaved
                           ? 2 * hn::Lanes(df) * sizeof(float)
                           : hn::Lanes(df) * sizeof(float);
  const size_t off = layout == Layout::kInterleaved ? 0 : size_t{half};
  stream = stream && reinterpret_cast<uintptr_t>(row) % align == 0 &&
           (off * sizeof(float)) % align == 0;
  if (stream) {
    if (sj == nullptr) {
      Float32RowFromAnchorT<true, true>(s0, c0, sj, cj, columns, half, layout,
                                        row, slow, ctx, slack_scale);
    } else {
      Float32RowFromAnchorT<false, true>(s0, c0, sj, cj, columns, half, layout,
                                         row, slow, ctx, slack_scale);
    }
  } else if (sj == nullptr) {
    Float32RowFromAnchorT<true, false>(s0, c0, sj, cj, columns, half, layout,
                                       row, slow, ctx, slack_scale);
  } else {
    Float32RowFromAnchorT<false, false>(s0, c0, sj, cj, columns, half, layout,
                                        row, slow, ctx, slack_scale);
  }
  return true;
}

// float16 / bfloat16 parameters of the vector rounding below (compile-time,
// so that every shift is an immediate).
template <int kPrecision, int kMinExponent>
struct Half16Format {
  static constexpr int precision = kPrecision;       // with the implicit one
  static constexpr int min_exponent = kMinExponent;  // smallest normal 2^e
};
using Float16Format = Half16Format<11, -14>;
using BFloat16Format = Half16Format<8, -126>;

// Interval rounding test into a 16-bit format: for each lane, whether every
// real in [y - e, y + e] (ends rounded as fl(y -+ e)) rounds (RNE,
// subnormals included) to one float16 / bfloat16 value, and its encoding
// (low 16 bits of `bits`; meaningful only where decided). |y| <= 2 finite,
// e >= 0.
//
// a = fl(|y| - e) and b = fl(|y| + e) are the magnitudes of fl(y - e) and
// fl(y + e) (RN is symmetric) when both have y's sign; a <= 0 means they do
// not (or one is zero): undecided, as RoundDoubleToBits' ends would differ
// at least in the sign of zero (a = 0 exactly is also sent to the slow path,
// conservatively). 2^q is the format's quantum in the binade of a (the
// subnormal quantum below the normal range), the finest quantum in [a, b].
// round_q(x) = fl(x + M) - M, M = 1.5 * 2^(q + 52), rounds x >= 0 to a
// multiple of 2^q with ties to even (one IEEE addition: x + M lies in
// [2^(q+52), 2^(q+53)), where the spacing is 2^q). Decided iff round_q(a) ==
// round_q(b) = r. Then every x in [a, b] has round_q(x) = r (monotone), and
// its correct rounding is r: in a's binade the format rounds to the grid
// 2^q; if [a, b] reaches a higher binade it contains that binade's edge
// 2^k, so r = 2^k and |x - 2^k| <= 2^(q-1), less than half of every coarser
// quantum. The converse may fail (undecided although both ends round to one
// value, only when the interval crosses a binade edge): such lanes take the
// slow path like any undecided one.
// Encoding of r = K 2^q: ((q - q_min) << (p - 1)) + K, q_min the subnormal
// quantum exponent; this also holds for K = 2^p (r = 2^k of the next binade).
template <class F, class D, class V = hn::Vec<D>>
HWY_INLINE void RoundHalf16Interval(
    D d, V y, V e, hn::Vec<hn::RebindToUnsigned<D>>& bits,
    hn::Mask<hn::RebindToUnsigned<D>>& undecided) {
  const hn::RebindToUnsigned<D> du;
  constexpr int p = F::precision;
  constexpr int q_min = F::min_exponent - (p - 1);
  const V ay = hn::Abs(y);
  const V a = hn::Sub(ay, e), b = hn::Add(ay, e);
  // M = 1.5 * 2^(q + 52): 2^e (a's binade, the exponent bits of a) times
  // 1.5 * 2^(53 - p), at least 1.5 * 2^(q_min + 52) (subnormal quantum; also
  // for a below the double normal range, where 2^e reads as 0). a <= 0
  // gives garbage here, but such lanes are undecided.
  const V binade =
      hn::BitCast(d, hn::And(hn::BitCast(du, a), hn::Set(du, 0x7ffull << 52)));
  const V big =
      hn::Max(hn::Mul(binade, hn::Set(d, 0x1.8p0 * (1ull << (53 - p)))),
              hn::Set(d, std::ldexp(1.5, q_min + 52)));
  const auto ra = hn::BitCast(du, hn::Add(a, big));
  const auto rb = hn::BitCast(du, hn::Add(b, big));
  undecided =
      hn::Or(hn::Ne(ra, rb), hn::RebindMask(du, hn::Le(a, hn::Zero(d))));
  // r = K 2^q with K = (mantissa field of a + M) - 2^51. Its encoding
  // ((q - q_min) << (p - 1)) + K, where bits(M) >> (53 - p) =
  // ((q + 1075) << (p - 1)) + 2^(p - 2):
  //   bits(M) >> (53 - p) + mantissa(a + M) - C,
  //   C = ((q_min + 1075) << (p - 1)) + 2^(p - 2) + 2^51.
  constexpr uint64_t kC = (uint64_t{q_min + 1075} << (p - 1)) +
                          (uint64_t{1} << (p - 2)) + (uint64_t{1} << 51);
  const auto mag =
      hn::Sub(hn::Add(hn::ShiftRight<53 - p>(hn::BitCast(du, big)),
                      hn::And(ra, hn::Set(du, (uint64_t{1} << 52) - 1))),
              hn::Set(du, kC));
  const auto sign =
      hn::And(hn::ShiftRight<48>(hn::BitCast(du, y)), hn::Set(du, 0x8000));
  bits = hn::Or(mag, sign);
}

// Stores the 16-bit sin/cos encodings (low 16 bits of each lane of sb, cb:
// 32- or 64-bit unsigned lanes) of one vector of columns at `i` in the
// layout, only the first `valid` lanes (valid < n goes through a stack
// buffer). d32 / d16: uint32_t / uint16_t tags with sb's lane count.
template <class D32, class D16, class VU>
HWY_INLINE void StoreHalf16Columns(D32 d32, D16 d16, VU sb, VU cb,
                                   Layout layout, size_t n, size_t valid,
                                   uint32_t i, uint16_t* row,
                                   uint16_t* sin_base, uint16_t* cos_base) {
  if (layout == Layout::kInterleaved) {
    // (c << 16) | s per lane = s, c in memory order.
    const auto wide = hn::Or(hn::ShiftLeft<16>(cb), sb);
    hn::Vec<D32> pair;
    if constexpr (sizeof(hn::TFromV<VU>) == 4) {
      pair = wide;
    } else {
      pair = hn::TruncateTo(d32, wide);
    }
    if (HWY_LIKELY(valid == n)) {
      hn::StoreU(pair, d32, reinterpret_cast<uint32_t*>(row + 2 * size_t{i}));
    } else {
      uint32_t tmp[hn::MaxLanes(d32)];
      hn::StoreU(pair, d32, tmp);
      std::memcpy(row + 2 * size_t{i}, tmp, valid * sizeof(uint32_t));
    }
    return;
  }
  const auto s16 = hn::TruncateTo(d16, sb);
  const auto c16 = hn::TruncateTo(d16, cb);
  if (HWY_LIKELY(valid == n)) {
    hn::StoreU(s16, d16, sin_base + i);
    hn::StoreU(c16, d16, cos_base + i);
  } else {
    uint16_t st[hn::MaxLanes(d16)], ct[hn::MaxLanes(d16)];
    hn::StoreU(s16, d16, st);
    hn::StoreU(c16, d16, ct);
    std::memcpy(sin_base + i, st, valid * sizeof(uint16_t));
    std::memcpy(cos_base + i, ct, valid * sizeof(uint16_t));
  }
}

// float16 / bfloat16 row from its anchor; see Float32RowFromAnchorT.
// One vector of 16-bit columns from i: rounds sin ys and cos yc (each within
// its bound es / ec) into F, stores the first min(n, columns - i) columns in
// the layout, and calls `slow` for each of those that is undecided or set in
// `extra` (a mask of d's lanes).
template <class F, class D, class V = hn::Vec<D>>
HWY_INLINE void RoundStoreHalf16Columns(D d, V ys, V es, V yc, V ec,
                                        hn::Mask<D> extra, Layout layout,
                                        uint32_t columns, uint32_t i,
                                        uint16_t* row, uint16_t* sin_base,
                                        uint16_t* cos_base, SlowColumnFn slow,
                                        void* ctx) {
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<uint16_t, D> d16;
  const hn::Rebind<uint32_t, D> d32;
  const size_t n = hn::Lanes(d);
  hn::Vec<decltype(du)> sb, cb;
  hn::Mask<decltype(du)> s_undecided, c_undecided;
  RoundHalf16Interval<F>(d, ys, es, sb, s_undecided);
  RoundHalf16Interval<F>(d, yc, ec, cb, c_undecided);
  const auto undecided =
      hn::Or(hn::RebindMask(d, hn::Or(s_undecided, c_undecided)), extra);
  const size_t valid = HWY_MIN(n, size_t{columns - i});
  StoreHalf16Columns(d32, d16, sb, cb, layout, n, valid, i, row, sin_base,
                     cos_base);
  if (HWY_UNLIKELY(!hn::AllFalse(d, undecided))) {
    uint8_t bits[8] = {};
    hn::StoreMaskBits(d, undecided, bits);
    for (size_t k = 0; k < valid; ++k) {
      if ((bits[k / 8] >> (k % 8)) & 1) slow(ctx, i + static_cast<uint32_t>(k));
    }
  }
}

template <bool kAnchorRow, class F>
HWY_INLINE void Half16RowFromAnchorT(const double* s0, const double* c0,
                                     const double* sj, const double* cj,
                                     uint32_t columns, uint32_t half,
                                     Layout layout, uint16_t* row,
                                     SlowColumnFn slow, void* ctx,
                                     double slack_scale) {
  const hn::ScalableTag<double> d;
  const size_t n = hn::Lanes(d);
  uint16_t* const sin_base = layout == Layout::kConcatCosSin ? row + half : row;
  uint16_t* const cos_base = layout == Layout::kConcatSinCos ? row + half : row;
  const auto rel = hn::Set(d, kFastCheckSlack);
  const auto abs_slack = hn::Set(d, kAngleAddCheckSlack * slack_scale);
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    hn::Vec<decltype(d)> ys, yc, es, ec;
    AnchorColumns<kAnchorRow>(d, s0, c0, sj, cj, i, rel, abs_slack, ys, yc, es,
                              ec);
    RoundStoreHalf16Columns<F>(d, ys, es, yc, ec, hn::FirstN(d, 0), layout,
                               columns, i, row, sin_base, cos_base, slow, ctx);
  }
}

bool Half16RowFromAnchorSimdImpl(const double* s0, const double* c0,
                                 const double* sj, const double* cj,
                                 uint32_t columns, uint32_t half, Layout layout,
                                 bool bfloat16, uint16_t* row,
                                 SlowColumnFn slow, void* ctx,
                                 double slack_scale) {
  auto run = [&](auto anchor_row, auto format) {
    Half16RowFromAnchorT<decltype(anchor_row)::value, decltype(format)>(
        s0, c0, sj, cj, columns, half, layout, row, slow, ctx, slack_scale);
  };
  if (bfloat16) {
    if (sj == nullptr) {
      run(std::true_type{}, BFloat16Format{});
    } else {
      run(std::false_type{}, BFloat16Format{});
    }
  } else if (sj == nullptr) {
    run(std::true_type{}, Float16Format{});
  } else {
    run(std::false_type{}, Float16Format{});
  }
  return true;
}

// The 16-bit twin of Float32RowSimdImpl: sin/cos(pos * (w0 + w1)) of each
// column by SinCosVec, rounded by the anchor-row interval test (relative
// slack) in one pass; risky or undecided columns go to `slow`.
template <class F>
HWY_INLINE void Half16RowT(const double* w0, const double* w1, uint32_t columns,
                           uint32_t half, Layout layout, double pos,
                           uint16_t* row, SlowColumnFn slow, void* ctx) {
  const hn::ScalableTag<double> d;
  const size_t n = hn::Lanes(d);
  uint16_t* const sin_base = layout == Layout::kConcatCosSin ? row + half : row;
  uint16_t* const cos_base = layout == Layout::kConcatSinCos ? row + half : row;
  const auto p = hn::Set(d, pos);
  const auto rel = hn::Set(d, kFastCheckSlack);
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    hn::Vec<decltype(d)> ys, yc;
    hn::Mask<decltype(d)> risky;
    SinCosVec(d, p, hn::LoadU(d, w0 + i), hn::LoadU(d, w1 + i), ys, yc, risky);
    RoundStoreHalf16Columns<F>(d, ys, hn::Mul(hn::Abs(ys), rel), yc,
                               hn::Mul(hn::Abs(yc), rel), risky, layout,
                               columns, i, row, sin_base, cos_base, slow, ctx);
  }
}

bool Half16RowSimdImpl(const double* w0, const double* w1, uint32_t columns,
                       uint32_t half, Layout layout, double pos, bool bfloat16,
                       uint16_t* row, SlowColumnFn slow, void* ctx) {
  if (bfloat16) {
    Half16RowT<BFloat16Format>(w0, w1, columns, half, layout, pos, row, slow,
                               ctx);
  } else {
    Half16RowT<Float16Format>(w0, w1, columns, half, layout, pos, row, slow,
                              ctx);
  }
  return true;
}

// Interval rounding test into a 16-bit format on float32 lanes, by the bits
// of the interval's ends. Both formats' values are float32 values whose low
// kShift bits are zero (bfloat16: 16, subnormals included; float16: 13, in
// its normal range |x| >= 2^-14), and their midpoints are the float32 values
// whose low kShift bits are 1 << (kShift - 1). For positive floats the bits
// order as the values, so a = fl(|y| - e) and b = fl(|y| + e) hold no
// midpoint between them (ends included) iff
//   (bits(b) + 2^(kShift-1)) >> kShift == (bits(a) + 2^(kShift-1) - 1) >>
//   kShift,
// and then every real in [a, b] rounds (RNE) to the value with that key
// (binade edges included: the grid is uniform in the bits). Undecided too
// where a <= 0 (the interval reaches zero: the sign is unknown) and, for
// float16, where a < 2^-14 (its subnormals are not on that grid).
// Encoding: the key, less (127 - 15) << 10 for float16's exponent bias, with
// y's sign; meaningful only where decided.
template <bool kBFloat16, class D, class V = hn::Vec<D>>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> RoundHalf16FromFloat32(
    D d, V y, V e, hn::Mask<hn::RebindToUnsigned<D>>& undecided) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  constexpr int kShift = kBFloat16 ? 16 : 13;
  constexpr uint32_t kHalfQuantum = uint32_t{1} << (kShift - 1);
  constexpr int32_t kMinBits = kBFloat16 ? 1 : (127 - 14) << 23;
  constexpr uint32_t kRebias = kBFloat16 ? 0 : (127 - 15) << 10;
  const V ay = hn::Abs(y);
  const auto a = hn::BitCast(du, hn::Sub(ay, e));
  const auto b = hn::BitCast(du, hn::Add(ay, e));
  const auto lo =
      hn::ShiftRight<kShift>(hn::Add(a, hn::Set(du, kHalfQuantum - 1)));
  const auto hi = hn::ShiftRight<kShift>(hn::Add(b, hn::Set(du, kHalfQuantum)));
  undecided = hn::Or(
      hn::Ne(lo, hi),
      hn::RebindMask(du, hn::Lt(hn::BitCast(di, a), hn::Set(di, kMinBits))));
  const auto sign =
      hn::And(hn::ShiftRight<16>(hn::BitCast(du, y)), hn::Set(du, 0x8000u));
  return hn::Or(hn::Sub(lo, hn::Set(du, kRebias)), sign);
}

// float16 / bfloat16 row p0 + j, j >= 1, from float32 copies of the anchor
// and table rows; see Half16RowFromAnchorF32Simd.
template <bool kBFloat16>
HWY_INLINE void Half16RowFromAnchorF32T(const Half16Arrays& arr,
                                        uint32_t columns, uint32_t half,
                                        Layout layout, uint16_t* row,
                                        SlowColumnFn slow, void* ctx,
                                        double slack_scale) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint16_t, decltype(d)> d16;
  const size_t n = hn::Lanes(d);
  uint16_t* const sin_base = layout == Layout::kConcatCosSin ? row + half : row;
  uint16_t* const cos_base = layout == Layout::kConcatSinCos ? row + half : row;
  const auto slack =
      hn::Set(d, kAngleAdd32CheckSlack * static_cast<float>(slack_scale));
  const DType dtype = kBFloat16 ? DType::kBFloat16 : DType::kFloat16;
  // One column in double: the retry of an undecided one.
  const hn::CappedTag<double, 1> d1;
  auto retry = [&](uint32_t c) {
    const auto S = hn::LoadU(d1, arr.s0d + c), C = hn::LoadU(d1, arr.c0d + c);
    const auto G = hn::LoadU(d1, arr.cjd + c), Sg = hn::LoadU(d1, arr.sjd + c);
    uint64_t sb, cb;
    if (!RoundHalf16IfDecided(hn::GetLane(hn::MulAdd(S, G, hn::Mul(C, Sg))),
                              kAngleAddCheckSlack * slack_scale, dtype, &sb) ||
        !RoundHalf16IfDecided(hn::GetLane(hn::MulSub(C, G, hn::Mul(S, Sg))),
                              kAngleAddCheckSlack * slack_scale, dtype, &cb)) {
      slow(ctx, c);
      return;
    }
    if (layout == Layout::kInterleaved) {
      row[2 * size_t{c}] = static_cast<uint16_t>(sb);
      row[2 * size_t{c} + 1] = static_cast<uint16_t>(cb);
    } else {
      sin_base[c] = static_cast<uint16_t>(sb);
      cos_base[c] = static_cast<uint16_t>(cb);
    }
  };
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    const auto S = hn::LoadU(d, arr.s0 + i);
    const auto C = hn::LoadU(d, arr.c0 + i);
    const auto G = hn::LoadU(d, arr.cj + i);
    const auto Sg = hn::LoadU(d, arr.sj + i);
    const auto ys = hn::MulAdd(S, G, hn::Mul(C, Sg));  // fl(S*G + fl(C*Sg))
    const auto yc = hn::MulSub(C, G, hn::Mul(S, Sg));  // fl(C*G - fl(S*Sg))
    hn::Mask<decltype(du)> s_undecided, c_undecided;
    const auto sb =
        RoundHalf16FromFloat32<kBFloat16>(d, ys, slack, s_undecided);
    const auto cb =
        RoundHalf16FromFloat32<kBFloat16>(d, yc, slack, c_undecided);
    const auto undecided = hn::Or(s_undecided, c_undecided);
    const size_t valid = HWY_MIN(n, size_t{columns - i});
    // Undecided lanes may hold garbage in both halves of their column:
    // the retry rewrites both values.
    StoreHalf16Columns(du, d16, sb, cb, layout, n, valid, i, row, sin_base,
                       cos_base);
    if (HWY_UNLIKELY(!hn::AllFalse(du, undecided))) {
      uint8_t bits[8] = {};
      hn::StoreMaskBits(du, undecided, bits);
      uint64_t m;
      std::memcpy(&m, bits, sizeof(m));
      m &= valid == 64 ? ~uint64_t{0} : (uint64_t{1} << valid) - 1;
      for (; m != 0; m &= m - 1) {  // set lanes only (few, unpredictable)
        retry(i + static_cast<uint32_t>(__builtin_ctzll(m)));
      }
    }
  }
}

bool Half16RowFromAnchorF32SimdImpl(const Half16Arrays& a, uint32_t columns,
                                    uint32_t half, Layout layout, bool bfloat16,
                                    uint16_t* row, SlowColumnFn slow, void* ctx,
                                    double slack_scale) {
  if (bfloat16) {
    Half16RowFromAnchorF32T<true>(a, columns, half, layout, row, slow, ctx,
                                  slack_scale);
  } else {
    Half16RowFromAnchorF32T<false>(a, columns, half, layout, row, slow, ctx,
                                   slack_scale);
  }
  return true;
}

// Double-double operations on vectors, operation for operation the same as
// core/numerics/double_double.h (TwoSum, FastTwoSum, DdAdd, DdMul).
template <class V>
HWY_INLINE void TwoSumV(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  const V bb = hn::Sub(s, a);
  e = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
}
// x * y of double-doubles as an unnormalised pair (rh, rl): DWTimesDW3 of
// core/numerics/double_double.h (DdMul) without its final FastTwoSum, which is
// exact, so rh + rl is the same real number (relative error <= 5 u^2).
template <class V>
HWY_INLINE void DdMulV(V xh, V xl, V yh, V yl, V& rh, V& rl) {
  rh = hn::Mul(xh, yh);
  const V cl = hn::MulSub(xh, yh, rh);
  const V tl1 = hn::MulAdd(xh, yl, hn::Mul(xl, yl));
  rl = hn::Add(cl, hn::MulAdd(xl, yh, tl1));
}

// (ah + al) + (bh + bl) as sh + t: TwoSum of the high words (exact), then
// t = fl(fl(sl + al) + bl), two roundings of terms below 2^-51 each:
// |error| <= 2^-103.4 for |a|, |b| <= 1 + 2^-50.
template <class V>
HWY_INLINE void DdSumV(V ah, V al, V bh, V bl, V& sh, V& t) {
  V sl;
  TwoSumV(ah, bh, sh, sl);
  t = hn::Add(hn::Add(sl, al), bl);
}

// Normalised double-double operations, operation for operation those of
// core/numerics/double_double.h (DdAdd = AccurateDWPlusDW, DdMul = DWTimesDW3).
template <class V>
HWY_INLINE void FastTwoSumV(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  e = hn::Sub(b, hn::Sub(s, a));
}
template <class V>
HWY_INLINE void DdAddNV(V xh, V xl, V yh, V yl, V& rh, V& rl) {
  V sh, sl, th, tl, vh, vl;
  TwoSumV(xh, yh, sh, sl);
  TwoSumV(xl, yl, th, tl);
  FastTwoSumV(sh, hn::Add(sl, th), vh, vl);
  FastTwoSumV(vh, hn::Add(tl, vl), rh, rl);
}
template <class V>
HWY_INLINE void DdMulNV(V xh, V xl, V yh, V yl, V& rh, V& rl) {
  const V ch = hn::Mul(xh, yh);
  const V cl = hn::MulSub(xh, yh, ch);
  const V tl0 = hn::Mul(xl, yl);
  const V tl1 = hn::MulAdd(xh, yl, tl0);
  const V cl2 = hn::MulAdd(xl, yh, tl1);
  FastTwoSumV(ch, hn::Add(cl, cl2), rh, rl);
}

// HornerDd of core/numerics/sincos_double_double.cc on vectors.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void HornerDdV(D d, const DoubleDouble* c, V zh, V zl, V& ah,
                          V& al) {
  V tail = hn::Set(d, c[13].hi);
  for (int k = 12; k >= 9; --k)
    tail = hn::MulAdd(tail, zh, hn::Set(d, c[k].hi));
  ah = tail;
  al = hn::Zero(d);
  for (int k = 8; k >= 1; --k) {
    V mh, ml;
    DdMulNV(ah, al, zh, zl, mh, ml);
    DdAddNV(mh, ml, hn::Set(d, c[k].hi), hn::Set(d, c[k].lo), ah, al);
  }
}

// DoubleDoubleSinCosOf (core/numerics/sincos_double_double.cc) for columns
// [0, columns) at one position, operation for operation (same bits);
// risky results are stored with NaN high words.
bool DdSinCosColumnsSimdImpl(const double* w0, const double* w1,
                             const double* w2, uint32_t columns, double pos,
                             double* s_hi, double* s_lo, double* c_hi,
                             double* c_lo) {
  const hn::ScalableTag<double> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using V = hn::Vec<decltype(d)>;
  const DoubleDoubleTaylor& tt = DoubleDoubleTaylorTables();
  const size_t n = hn::Lanes(d);
  const V p = hn::Set(d, pos);
  const V nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    const V f0 = hn::LoadU(d, w0 + i), f1 = hn::LoadU(d, w1 + i);
    const V f2 = hn::LoadU(d, w2 + i);
    const V x0 = hn::Mul(p, f0), e0 = hn::MulSub(p, f0, x0);
    const V x1 = hn::Mul(p, f1), e1 = hn::MulSub(p, f1, x1);
    const V x2 = hn::Mul(p, f2);
    const V q = hn::Round(hn::Mul(x0, hn::Set(d, kTwoOverPi)));
    const V t1 = hn::NegMulAdd(q, hn::Set(d, kPio2W1), x0);
    const V a2 = hn::Mul(q, hn::Set(d, kPio2W2));
    const V b2 = hn::MulSub(q, hn::Set(d, kPio2W2), a2);
    const V a3 = hn::Mul(q, hn::Set(d, kPio2W3));
    const V b3 = hn::MulSub(q, hn::Set(d, kPio2W3), a3);
    V m1, m1e, m2, m2e;
    TwoSumV(e0, x1, m1, m1e);
    TwoSumV(m1, hn::Neg(a2), m2, m2e);
    const V small = hn::Sub(
        hn::Add(hn::Add(m1e, m2e), hn::Add(e1, x2)),
        hn::Add(hn::Add(b2, a3), hn::Add(b3, hn::Mul(q, hn::Set(d, kPio2W4)))));
    V rh, rl;
    TwoSumV(t1, m2, rh, rl);
    FastTwoSumV(rh, hn::Add(rl, small), rh, rl);
    const auto risky = hn::And(hn::Ne(q, hn::Zero(d)),
                               hn::Lt(hn::Abs(rh), hn::Set(d, 0x1p-28)));
    V zh, zl;
    DdMulNV(rh, rl, rh, rl, zh, zl);
    V psh, psl, pch, pcl, th, tl, uh, ul;
    HornerDdV(d, tt.sin_c, zh, zl, psh, psl);
    DdMulNV(zh, zl, psh, psl, th, tl);
    DdMulNV(rh, rl, th, tl, uh, ul);
    V sh, sl, ch, cl;
    DdAddNV(rh, rl, uh, ul, sh, sl);
    HornerDdV(d, tt.cos_c, zh, zl, pch, pcl);
    DdMulNV(zh, zl, pch, pcl, th, tl);
    DdAddNV(hn::Set(d, 1.0), hn::Zero(d), th, tl, ch, cl);
    // Quadrant (q < 2^51): low mantissa bits of q + 1.5 * 2^52.
    const auto qbits = hn::BitCast(du, hn::Add(q, hn::Set(d, 0x1.8p52)));
    const auto one = hn::Set(du, 1), two = hn::Set(du, 2);
    const auto odd =
        hn::RebindMask(d, hn::Ne(hn::And(qbits, one), hn::Zero(du)));
    const V sin_sign = hn::BitCast(d, hn::ShiftLeft<62>(hn::And(qbits, two)));
    const V cos_sign =
        hn::BitCast(d, hn::ShiftLeft<62>(hn::And(hn::Add(qbits, one), two)));
    // Negation flips both words (as the scalar {-hi, -lo}).
    const V ysh = hn::Xor(hn::IfThenElse(odd, ch, sh), sin_sign);
    const V ysl = hn::Xor(hn::IfThenElse(odd, cl, sl), sin_sign);
    const V ych = hn::Xor(hn::IfThenElse(odd, sh, ch), cos_sign);
    const V ycl = hn::Xor(hn::IfThenElse(odd, sl, cl), cos_sign);
    hn::StoreU(hn::IfThenElse(risky, nan, ysh), d, s_hi + i);
    hn::StoreU(ysl, d, s_lo + i);
    hn::StoreU(hn::IfThenElse(risky, nan, ych), d, c_hi + i);
    hn::StoreU(ycl, d, c_lo + i);
  }
  return true;
}

// Float64 row from its anchor by double-double angle addition
// (core/numerics/angle_addition.h, kDdAngleAddCheckSlack): anchor and table
// values are double-doubles (hi, lo arrays); NaN in a hi word marks a value
// that is not available (risky): its lanes are undecided.
template <bool kAnchorRow, bool kStream>
HWY_INLINE void Float64RowFromAnchorT(const DdArrays& a, uint32_t columns,
                                      uint32_t half, Layout layout, double* row,
                                      SlowColumnFn slow, void* ctx) {
  const hn::ScalableTag<double> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  const size_t n = hn::Lanes(d);
  double* const sin_base = layout == Layout::kConcatCosSin ? row + half : row;
  double* const cos_base = layout == Layout::kConcatSinCos ? row + half : row;
  const V rel = hn::Set(d, kDoubleDoubleCheckSlack);
  const V abs_slack = hn::Set(d, kDdAngleAddCheckSlack * a.slack_scale);
  for (uint32_t i = 0; i < columns; i += static_cast<uint32_t>(n)) {
    const V sh = hn::LoadU(d, a.s0_hi + i), sl = hn::LoadU(d, a.s0_lo + i);
    const V chh = hn::LoadU(d, a.c0_hi + i), cll = hn::LoadU(d, a.c0_lo + i);
    V ysh, ysl, ych, ycl, es, ec;
    if (kAnchorRow) {
      ysh = sh;
      ysl = sl;
      ych = chh;
      ycl = cll;
      es = hn::Mul(hn::Abs(ysh), rel);
      ec = hn::Mul(hn::Abs(ych), rel);
    } else {
      const V gh = hn::LoadU(d, a.cj_hi + i), gl = hn::LoadU(d, a.cj_lo + i);
      const V th = hn::LoadU(d, a.sj_hi + i), tl = hn::LoadU(d, a.sj_lo + i);
      V p1h, p1l, p2h, p2l;
      DdMulV(sh, sl, gh, gl, p1h, p1l);    // sin(p0 f) cos(j f)
      DdMulV(chh, cll, th, tl, p2h, p2l);  // cos(p0 f) sin(j f)
      DdSumV(p1h, p1l, p2h, p2l, ysh, ysl);
      DdMulV(chh, cll, gh, gl, p1h, p1l);  // cos(p0 f) cos(j f)
      DdMulV(sh, sl, th, tl, p2h, p2l);    // sin(p0 f) sin(j f)
      DdSumV(p1h, p1l, hn::Neg(p2h), hn::Neg(p2l), ych, ycl);
      es = abs_slack;
      ec = abs_slack;
    }
    // RN(hi + t) is monotone in t: both ends equal (as doubles, and in
    // sign) decides every real in between (as RoundDoubleDoubleToDouble).
    // Not(Eq), not Ne: Highway's Ne is an ordered compare, false for the
    // NaN that marks a risky value, which must be undecided.
    const V s_lo = hn::Add(ysh, hn::Sub(ysl, es));
    const V s_hi = hn::Add(ysh, hn::Add(ysl, es));
    const V c_lo = hn::Add(ych, hn::Sub(ycl, ec));
    const V c_hi = hn::Add(ych, hn::Add(ycl, ec));
    const auto sign_differs =
        hn::RebindMask(d, hn::Lt(hn::Or(hn::BitCast(di, hn::Xor(s_lo, s_hi)),
                                        hn::BitCast(di, hn::Xor(c_lo, c_hi))),
                                 hn::Zero(di)));
    const auto undecided = hn::Or(
        hn::Not(hn::And(hn::Eq(s_lo, s_hi), hn::Eq(c_lo, c_hi))), sign_differs);
    const size_t valid = HWY_MIN(n, size_t{columns - i});
    if (kStream && HWY_LIKELY(valid == n && hn::AllFalse(d, undecided))) {
      // Non-temporal full-vector stores (aligned by the caller's check);
      // vectors with an undecided lane use ordinary stores, as `slow`
      // overwrites them.
      if (layout == Layout::kInterleaved) {
        HWY_ALIGN double buf[2 * hn::MaxLanes(d)];
        hn::StoreInterleaved2(s_lo, c_lo, d, buf);
        hn::Stream(hn::Load(d, buf), d, row + 2 * size_t{i});
        hn::Stream(hn::Load(d, buf + n), d, row + 2 * size_t{i} + n);
      } else {
        hn::Stream(s_lo, d, sin_base + i);
        hn::Stream(c_lo, d, cos_base + i);
      }
      continue;
    }
    if (HWY_LIKELY(valid == n)) {
      if (layout == Layout::kInterleaved) {
        hn::StoreInterleaved2(s_lo, c_lo, d, row + 2 * size_t{i});
      } else {
        hn::StoreU(s_lo, d, sin_base + i);
        hn::StoreU(c_lo, d, cos_base + i);
      }
    } else {
      double st[hn::MaxLanes(d)], ct[hn::MaxLanes(d)];
      hn::StoreU(s_lo, d, st);
      hn::StoreU(c_lo, d, ct);
      // memcpy: the caller's row may be only byte-aligned.
      for (size_t k = 0; k < valid; ++k) {
        if (layout == Layout::kInterleaved) {
          std::memcpy(row + 2 * (size_t{i} + k), &st[k], sizeof(double));
          std::memcpy(row + 2 * (size_t{i} + k) + 1, &ct[k], sizeof(double));
        } else {
          std::memcpy(sin_base + i + k, &st[k], sizeof(double));
          std::memcpy(cos_base + i + k, &ct[k], sizeof(double));
        }
      }
    }
    if (HWY_UNLIKELY(!hn::AllFalse(d, undecided))) {
      uint8_t bits[8] = {};
      hn::StoreMaskBits(d, undecided, bits);
      for (size_t k = 0; k < valid; ++k) {
        if ((bits[k / 8] >> (k % 8)) & 1)
          slow(ctx, i + static_cast<uint32_t>(k));
      }
    }
  }
}

bool Float64RowFromAnchorSimdImpl(const DdArrays& a, uint32_t columns,
                                  uint32_t half, Layout layout, double* row,
                                  bool stream, SlowColumnFn slow, void* ctx) {
  const hn::ScalableTag<double> d;
  // Streaming needs every full-vector store aligned to its size.
  const size_t align = hn::Lanes(d) * sizeof(double);
  const size_t off = layout == Layout::kInterleaved ? 0 : size_t{half};
  stream = stream && reinterpret_cast<uintptr_t>(row) % align == 0 &&
           (off * sizeof(double)) % align == 0;
  const bool anchor = a.sj_hi == nullptr;
  if (stream && anchor) {
    Float64RowFromAnchorT<true, true>(a, columns, half, layout, row, slow, ctx);
  } else if (stream) {
    Float64RowFromAnchorT<false, true>(a, columns, half, layout, row, slow,
                                       ctx);
  } else if (anchor) {
    Float64RowFromAnchorT<true, false>(a, columns, half, layout, row, slow,
                                       ctx);
  } else {
    Float64RowFromAnchorT<false, false>(a, columns, half, layout, row, slow,
                                        ctx);
  }
  return true;
}

// The `slow` of a run's row r: column c of the row is r * columns + c of
// the run.
struct RunRowSlow {
  SlowColumnFn slow;
  void* ctx;
  uint32_t base;
  static void Call(void* self, uint32_t column) {
    const auto* s = static_cast<const RunRowSlow*>(self);
    s->slow(s->ctx, s->base + column);
  }
};

bool Float32RowsFromAnchorSimdImpl(const double* s0, const double* c0,
                                   const double* sj, const double* cj,
                                   const AnchorRun& run, uint32_t columns,
                                   uint32_t half, Layout layout, float* row,
                                   SlowColumnFn slow, void* ctx) {
  RunRowSlow rs{slow, ctx, 0};
  for (uint32_t r = 0; r < run.rows; ++r, rs.base += columns) {
    const size_t at = r * run.table_stride;
    Float32RowFromAnchorT<false, false>(s0, c0, sj + at, cj + at, columns, half,
                                        layout, row + r * run.row_stride,
                                        RunRowSlow::Call, &rs, 1.0);
  }
  return true;
}

bool Half16RowsFromAnchorF32SimdImpl(const Half16Arrays& a,
                                     const AnchorRun& run, uint32_t columns,
                                     uint32_t half, Layout layout,
                                     bool bfloat16, uint16_t* row,
                                     SlowColumnFn slow, void* ctx) {
  RunRowSlow rs{slow, ctx, 0};
  Half16Arrays at = a;
  for (uint32_t r = 0; r < run.rows; ++r, rs.base += columns) {
    uint16_t* out = row + r * run.row_stride;
    if (bfloat16) {
      Half16RowFromAnchorF32T<true>(at, columns, half, layout, out,
                                    RunRowSlow::Call, &rs, 1.0);
    } else {
      Half16RowFromAnchorF32T<false>(at, columns, half, layout, out,
                                     RunRowSlow::Call, &rs, 1.0);
    }
    at.sj += run.table_stride;
    at.cj += run.table_stride;
    at.sjd += run.table_stride;
    at.cjd += run.table_stride;
  }
  return true;
}

bool Float64RowsFromAnchorSimdImpl(const DdArrays& a, const AnchorRun& run,
                                   uint32_t columns, uint32_t half,
                                   Layout layout, double* row,
                                   SlowColumnFn slow, void* ctx) {
  RunRowSlow rs{slow, ctx, 0};
  DdArrays at = a;
  for (uint32_t r = 0; r < run.rows; ++r, rs.base += columns) {
    Float64RowFromAnchorT<false, false>(at, columns, half, layout,
                                        row + r * run.row_stride,
                                        RunRowSlow::Call, &rs);
    at.sj_hi += run.table_stride;
    at.sj_lo += run.table_stride;
    at.cj_hi += run.table_stride;
    at.cj_lo += run.table_stride;
  }
  return true;
}

void FlushStreamImpl() { hwy::FlushStream(); }

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

#else  // !POSENC_SIMD_FMA

bool Float32RowSimdImpl(const double*, const double*, uint32_t, uint32_t,
                        Layout, double, float*, SlowColumnFn, void*) {
  return false;
}
bool SinCosColumnsSimdImpl(const double*, const double*, uint32_t, double,
                           double*, double*, uint8_t*) {
  return false;
}
bool Float32RowFromAnchorSimdImpl(const double*, const double*, const double*,
                                  const double*, uint32_t, uint32_t, Layout,
                                  float*, bool, SlowColumnFn, void*, double) {
  return false;
}
bool Half16RowFromAnchorSimdImpl(const double*, const double*, const double*,
                                 const double*, uint32_t, uint32_t, Layout,
                                 bool, uint16_t*, SlowColumnFn, void*, double) {
  return false;
}
bool Half16RowSimdImpl(const double*, const double*, uint32_t, uint32_t, Layout,
                       double, bool, uint16_t*, SlowColumnFn, void*) {
  return false;
}
bool Half16RowFromAnchorF32SimdImpl(const Half16Arrays&, uint32_t, uint32_t,
                                    Layout, bool, uint16_t*, SlowColumnFn,
                                    void*, double) {
  return false;
}
bool Float64RowFromAnchorSimdImpl(const DdArrays&, uint32_t, uint32_t, Layout,
                                  double*, bool, SlowColumnFn, void*) {
  return false;
}
bool DdSinCosColumnsSimdImpl(const double*, const double*, const double*,
                             uint32_t, double, double*, double*, double*,
                             double*) {
  return false;
}
bool Float32RowsFromAnchorSimdImpl(const double*, const double*, const double*,
                                   const double*, const AnchorRun&, uint32_t,
                                   uint32_t, Layout, float*, SlowColumnFn,
                                   void*) {
  return false;
}
bool Half16RowsFromAnchorF32SimdImpl(const Half16Arrays&, const AnchorRun&,
                                     uint32_t, uint32_t, Layout, bool,
                                     uint16_t*, SlowColumnFn, void*) {
  return false;
}
bool Float64RowsFromAnchorSimdImpl(const DdArrays&, const AnchorRun&, uint32_t,
                                   uint32_t, Layout, double*, SlowColumnFn,
                                   void*) {
  return false;
}
void FlushStreamImpl() {}
const char* TargetNameImpl() { return "scalar"; }

#endif  // POSENC_SIMD_FMA
#undef POSENC_SIMD_FMA

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {

HWY_EXPORT(Float32RowSimdImpl);
HWY_EXPORT(SinCosColumnsSimdImpl);
HWY_EXPORT(Float32RowFromAnchorSimdImpl);
HWY_EXPORT(FlushStreamImpl);
HWY_EXPORT(Half16RowFromAnchorSimdImpl);
HWY_EXPORT(Half16RowSimdImpl);
HWY_EXPORT(Half16RowFromAnchorF32SimdImpl);
HWY_EXPORT(Float64RowFromAnchorSimdImpl);
HWY_EXPORT(DdSinCosColumnsSimdImpl);
HWY_EXPORT(TargetNameImpl);
HWY_EXPORT(Float32RowsFromAnchorSimdImpl);
HWY_EXPORT(Half16RowsFromAnchorF32SimdImpl);
HWY_EXPORT(Float64RowsFromAnchorSimdImpl);

bool Float32RowsFromAnchorSimd(const double* s0, const double* c0,
                               const double* sj, const double* cj,
                               const AnchorRun& run, uint32_t columns,
                               uint32_t half, Layout layout, float* row,
                               SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Float32RowsFromAnchorSimdImpl)(
      s0, c0, sj, cj, run, columns, half, layout, row, slow, ctx);
}

bool Half16RowsFromAnchorF32Simd(const Half16Arrays& a, const AnchorRun& run,
                                 uint32_t columns, uint32_t half, Layout layout,
                                 bool bfloat16, uint16_t* row,
                                 SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Half16RowsFromAnchorF32SimdImpl)(
      a, run, columns, half, layout, bfloat16, row, slow, ctx);
}

bool Float64RowsFromAnchorSimd(const DdArrays& a, const AnchorRun& run,
                               uint32_t columns, uint32_t half, Layout layout,
                               double* row, SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Float64RowsFromAnchorSimdImpl)(
      a, run, columns, half, layout, row, slow, ctx);
}

bool Float32RowFromAnchorSimd(const double* s0, const double* c0,
                              const double* sj, const double* cj,
                              uint32_t columns, uint32_t half, Layout layout,
                              float* row, bool stream, SlowColumnFn slow,
                              void* ctx, double slack_scale) {
  return HWY_DYNAMIC_DISPATCH(Float32RowFromAnchorSimdImpl)(
      s0, c0, sj, cj, columns, half, layout, row, stream, slow, ctx,
      slack_scale);
}

bool Half16RowFromAnchorSimd(const double* s0, const double* c0,
                             const double* sj, const double* cj,
                             uint32_t columns, uint32_t half, Layout layout,
                             bool bfloat16, uint16_t* row, SlowColumnFn slow,
                             void* ctx, double slack_scale) {
  return HWY_DYNAMIC_DISPATCH(Half16RowFromAnchorSimdImpl)(
      s0, c0, sj, cj, columns, half, layout, bfloat16, row, slow, ctx,
      slack_scale);
}

bool Half16RowFromAnchorF32Simd(const Half16Arrays& a, uint32_t columns,
                                uint32_t half, Layout layout, bool bfloat16,
                                uint16_t* row, SlowColumnFn slow, void* ctx,
                                double slack_scale) {
  return HWY_DYNAMIC_DISPATCH(Half16RowFromAnchorF32SimdImpl)(
      a, columns, half, layout, bfloat16, row, slow, ctx, slack_scale);
}

bool Float64RowFromAnchorSimd(const DdArrays& a, uint32_t columns,
                              uint32_t half, Layout layout, double* row,
                              bool stream, SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Float64RowFromAnchorSimdImpl)(
      a, columns, half, layout, row, stream, slow, ctx);
}

bool DdSinCosColumnsSimd(const double* w0, const double* w1, const double* w2,
                         uint32_t columns, double pos, double* s_hi,
                         double* s_lo, double* c_hi, double* c_lo) {
  return HWY_DYNAMIC_DISPATCH(DdSinCosColumnsSimdImpl)(w0, w1, w2, columns, pos,
                                                       s_hi, s_lo, c_hi, c_lo);
}

void FlushStreamingStores() { HWY_DYNAMIC_DISPATCH(FlushStreamImpl)(); }

bool Float32RowSimd(const double* w0, const double* w1, uint32_t columns,
                    uint32_t half, Layout layout, double pos, float* row,
                    SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Float32RowSimdImpl)(w0, w1, columns, half, layout,
                                                  pos, row, slow, ctx);
}

bool Half16RowSimd(const double* w0, const double* w1, uint32_t columns,
                   uint32_t half, Layout layout, double pos, bool bfloat16,
                   uint16_t* row, SlowColumnFn slow, void* ctx) {
  return HWY_DYNAMIC_DISPATCH(Half16RowSimdImpl)(w0, w1, columns, half, layout,
                                                 pos, bfloat16, row, slow, ctx);
}

bool SinCosColumnsSimd(const double* w0, const double* w1, uint32_t columns,
                       double pos, double* sin_out, double* cos_out,
                       uint8_t* risky) {
  return HWY_DYNAMIC_DISPATCH(SinCosColumnsSimdImpl)(w0, w1, columns, pos,
                                                     sin_out, cos_out, risky);
}

const char* SimdKernelTargetName() {
  return HWY_DYNAMIC_DISPATCH(TargetNameImpl)();
}

const char* SimdBestTargetName() {
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  const int64_t best = targets & -targets;  // lower bit = better target
#if HWY_ARCH_X86
  if (best == 0 || best > HWY_AVX2) return "scalar";
#endif
  return hwy::TargetName(best);
}

}  // namespace posenc
#endif  // HWY_ONCE
