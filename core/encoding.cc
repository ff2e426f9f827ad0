#include "core/encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace posenc {
namespace {

// Frequency of pair i, in double precision.
double PairFrequency(const TableSpec& spec, uint32_t i) {
  const double half = spec.d / 2;
  const double exponent = spec.frequency == Frequency::kPaper
                              ? static_cast<double>(i) / half
                              : static_cast<double>(i) / (half - 1);
  return std::pow(spec.base, -exponent);
}

// Round-to-nearest-even from double to a narrower binary format with
// `mant` explicit mantissa bits and exponent bias `bias`.
uint16_t RoundToHalfBits(double x, int mant, int exp_bits) {
  uint16_t sign = std::signbit(x) ? 1u << 15 : 0;
  double a = std::fabs(x);
  const int bias = (1 << (exp_bits - 1)) - 1;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int unbiased = e - 1;
  if (unbiased < 1 - bias) unbiased = 1 - bias;  // subnormal range
  // Scale so the integer part holds the mantissa bits.
  double scaled = std::ldexp(a, mant - unbiased);
  double r = std::nearbyint(scaled);  // ties to even in default rounding mode
  uint64_t m = static_cast<uint64_t>(r);
  if (m >= (uint64_t{2} << mant)) {  // rounding carried into a new binade
    m >>= 1;
    ++unbiased;
  }
  uint32_t biased = (m >> mant) ? static_cast<uint32_t>(unbiased + bias) : 0;
  if (biased >= static_cast<uint32_t>((1 << exp_bits) - 1)) {
    return sign | static_cast<uint16_t>(((1 << exp_bits) - 1) << mant);
  }
  return sign | static_cast<uint16_t>((biased << mant) |
                                      (m & ((uint64_t{1} << mant) - 1)));
}

void Store(double v, DType dtype, std::byte* out, size_t index) {
  switch (dtype) {
    case DType::kFloat32: {
      float f = static_cast<float>(v);
      std::memcpy(out + index * 4, &f, 4);
      return;
    }
    case DType::kFloat64:
      std::memcpy(out + index * 8, &v, 8);
      return;
    case DType::kFloat16: {
      uint16_t h = RoundToHalfBits(v, 10, 5);
      std::memcpy(out + index * 2, &h, 2);
      return;
    }
    case DType::kBFloat16: {
      uint16_t h = RoundToHalfBits(v, 7, 8);
      std::memcpy(out + index * 2, &h, 2);
      return;
    }
  }
}

void ComputeRow(const TableSpec& spec, const std::vector<double>& freqs,
                uint32_t pos, std::byte* row) {
  const uint32_t half = spec.d / 2;
  for (uint32_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * freqs[i];
    const double s = std::sin(angle);
    const double c = std::cos(angle);
    switch (spec.layout) {
      case Layout::kInterleaved:
        Store(s, spec.dtype, row, 2 * i);
        Store(c, spec.dtype, row, 2 * i + 1);
        break;
      case Layout::kConcatSinCos:
        Store(s, spec.dtype, row, i);
        Store(c, spec.dtype, row, half + i);
        break;
      case Layout::kConcatCosSin:
        Store(c, spec.dtype, row, i);
        Store(s, spec.dtype, row, half + i);
        break;
    }
  }
}

std::vector<double> Frequencies(const TableSpec& spec) {
  std::vector<double> freqs(spec.d / 2);
  for (uint32_t i = 0; i < freqs.size(); ++i) freqs[i] = PairFrequency(spec, i);
  return freqs;
}

}  // namespace

void ComputeRows(const TableSpec& spec, uint32_t first, uint32_t count,
                 std::byte* out) {
  const std::vector<double> freqs = Frequencies(spec);
  const size_t row_bytes = spec.row_bytes();
  for (uint32_t r = 0; r < count; ++r) {
    ComputeRow(spec, freqs, first + r, out + r * row_bytes);
  }
}

void ComputePositions(const TableSpec& spec,
                      absl::Span<const uint32_t> positions, std::byte* out) {
  const std::vector<double> freqs = Frequencies(spec);
  const size_t row_bytes = spec.row_bytes();
  for (size_t k = 0; k < positions.size(); ++k) {
    ComputeRow(spec, freqs, positions[k], out + k * row_bytes);
  }
}

void ComputeRowsParallel(const TableSpec& spec, uint32_t first, uint32_t count,
                         std::byte* out, int threads) {
  // Below ~1 MiB of output, thread start-up costs more than it saves.
  constexpr uint64_t kMinBytesPerThread = 1 << 20;
  const uint64_t bytes = uint64_t{count} * spec.row_bytes();
  const int n = static_cast<int>(std::clamp<uint64_t>(
      bytes / kMinBytesPerThread, 1, std::max(threads, 1)));
  if (n <= 1) {
    ComputeRows(spec, first, count, out);
    return;
  }
  std::vector<std::thread> workers;
  const uint32_t per = (count + n - 1) / n;
  for (int t = 0; t < n; ++t) {
    const uint32_t begin = t * per;
    if (begin >= count) break;
    const uint32_t len = std::min(per, count - begin);
    workers.emplace_back([&spec, first, begin, len, out] {
      ComputeRows(spec, first + begin, len, out + begin * spec.row_bytes());
    });
  }
  for (auto& w : workers) w.join();
}

}  // namespace posenc
