// Highway dynamic dispatch: this file is compiled once per target (as
// core/numerics/row_kernel_simd.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/sincos_floor.cc"
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// Keep after highway.h (the include-guard dance of Highway).
#include "bench/sincos_floor.h"
#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace posenc::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SinCosFloorRowsImpl(const double* x, size_t points, const double* freqs,
                         uint32_t half, float* out) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;
  const size_t n = hn::Lanes(d);
  for (size_t p = 0; p < points; ++p) {
    float* row = out + p * 2 * size_t{half};
    const auto vx = hn::Set(d, x[p]);
    size_t i = 0;
    for (; i + n <= half; i += n) {
      const auto angle = hn::Mul(vx, hn::LoadU(d, freqs + i));
      hn::StoreU(hn::DemoteTo(df, hn::Cos(d, angle)), df, row + i);
      hn::StoreU(hn::DemoteTo(df, hn::Sin(d, angle)), df, row + half + i);
    }
    for (; i < half; ++i) {  // a tail narrower than a vector
      const double angle = x[p] * freqs[i];
      row[i] = static_cast<float>(std::cos(angle));
      row[half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

const char* SinCosFloorTargetImpl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace posenc::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc::bench {

HWY_EXPORT(SinCosFloorRowsImpl);
HWY_EXPORT(SinCosFloorTargetImpl);

void SinCosFloorRows(const double* x, size_t points, const double* freqs,
                     uint32_t half, float* out) {
  HWY_DYNAMIC_DISPATCH(SinCosFloorRowsImpl)(x, points, freqs, half, out);
}

const char* SinCosFloorTarget() {
  return HWY_DYNAMIC_DISPATCH(SinCosFloorTargetImpl)();
}

}  // namespace posenc::bench
#endif  // HWY_ONCE
