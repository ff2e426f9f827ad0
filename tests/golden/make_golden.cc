// make_golden: the exact reference for the interop script.
//
// Computes every table of tests/interop/SCRIPT.md independently of posenc's
// own code: each value is evaluated with MPFR at 256 bits and rounded ONCE,
// round-to-nearest-even, straight from that value to the requested dtype
// (float16 and bfloat16 too, never via float32; subnormals included). Rows
// are serialised little-endian, row-major, and hashed with OpenSSL SHA-256.
//
// Prints the expected interop transcript (one line per call) to stdout.
// Regenerate the committed goldens with:
//   ninja -C build posenc_make_golden &&
//   build/tests/interop/posenc_make_golden > tests/golden/interop.txt
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/sha256_hex.h"

namespace {

constexpr mpfr_prec_t kPrecision = 256;

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16 };
enum class Layout { kInterleaved, kConcatSinCos, kConcatCosSin };
enum class Frequency { kPaper, kT2T };

struct Spec {
  uint32_t d;
  double base;
  uint32_t max_len;
  DType dtype;
  Layout layout;
  Frequency frequency;
};

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

// Significand bits (with the hidden one) and the least normal exponent.
struct Format {
  int precision;
  int min_exponent;
};

Format FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {24, -126};
    case DType::kFloat64:
      return {53, -1022};
    case DType::kFloat16:
      return {11, -14};
    case DType::kBFloat16:
      return {8, -126};
  }
  return {0, 0};
}

// Rounds x once, to nearest with ties to even, onto the grid of `format`
// (subnormals included; |x| <= 1 here, so no overflow). The result is
// exactly representable in double, so it is returned as one.
double RoundToFormat(const mpfr_t x, Format format) {
  if (mpfr_zero_p(x)) return mpfr_signbit(x) ? -0.0 : 0.0;
  // x = m * 2^e with 0.5 <= |m| < 1, so floor(log2|x|) = e - 1.
  const long exponent =
      std::max<long>(mpfr_get_exp(x) - 1, format.min_exponent);
  const long quantum_exp = exponent - (format.precision - 1);
  mpfr_t scaled;
  mpfr_init2(scaled, kPrecision);
  mpfr_mul_2si(scaled, x, -quantum_exp, MPFR_RNDN);      // exact
  mpfr_rint(scaled, scaled, MPFR_RNDN);                  // ties to even
  mpfr_mul_2si(scaled, scaled, quantum_exp, MPFR_RNDN);  // exact
  const double result = mpfr_get_d(scaled, MPFR_RNDN);   // exact
  mpfr_clear(scaled);
  return result;
}

// Exact encodings of a double that is representable in the narrow format.
uint16_t ExactHalfBits(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e;
  const double m = std::frexp(v, &e);  // v = m * 2^e, 0.5 <= m < 1
  if (e - 1 < -14) {                   // subnormal: v = k * 2^-24
    return sign | static_cast<uint16_t>(std::ldexp(v, 24));
  }
  const uint16_t frac = static_cast<uint16_t>(std::ldexp(m, 11)) & 0x3ff;
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | frac;
}

uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

void AppendLittleEndian(uint64_t bits, size_t bytes, std::string* out) {
  for (size_t k = 0; k < bytes; ++k) out->push_back(char(bits >> (8 * k)));
}

void AppendValue(const mpfr_t x, DType dtype, std::string* out) {
  const double v = RoundToFormat(x, FormatOf(dtype));
  switch (dtype) {
    case DType::kFloat64: {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      AppendLittleEndian(bits, 8, out);
      break;
    }
    case DType::kFloat32:
      AppendLittleEndian(FloatBits(static_cast<float>(v)), 4, out);
      break;
    case DType::kBFloat16:  // exact in float32, low half is zero
      AppendLittleEndian(FloatBits(static_cast<float>(v)) >> 16, 2, out);
      break;
    case DType::kFloat16:
      AppendLittleEndian(ExactHalfBits(v), 2, out);
      break;
  }
}

// Row `pos` of `spec`, serialised.
std::string Row(const Spec& spec, uint32_t pos) {
  const uint32_t half = spec.d / 2;
  std::vector<std::string> sin_bytes(half), cos_bytes(half);
  mpfr_t base, exponent, freq, angle, s, c;
  for (mpfr_ptr v : {base, exponent, freq, angle, s, c}) {
    mpfr_init2(v, kPrecision);
  }
  mpfr_set_d(base, spec.base, MPFR_RNDN);  // exact
  for (uint32_t i = 0; i < half; ++i) {
    // PAPER: f_i = base^(-2i/d); T2T: f_i = base^(-i/(d/2-1)).
    if (spec.frequency == Frequency::kPaper) {
      mpfr_set_si(exponent, -2 * static_cast<long>(i), MPFR_RNDN);
      mpfr_div_ui(exponent, exponent, spec.d, MPFR_RNDN);
    } else {
      mpfr_set_si(exponent, -static_cast<long>(i), MPFR_RNDN);
      mpfr_div_ui(exponent, exponent, half - 1, MPFR_RNDN);
    }
    mpfr_pow(freq, base, exponent, MPFR_RNDN);
    mpfr_mul_ui(angle, freq, pos, MPFR_RNDN);
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    AppendValue(s, spec.dtype, &sin_bytes[i]);
    AppendValue(c, spec.dtype, &cos_bytes[i]);
  }
  for (mpfr_ptr v : {base, exponent, freq, angle, s, c}) mpfr_clear(v);

  std::string row;
  switch (spec.layout) {
    case Layout::kInterleaved:
      for (uint32_t i = 0; i < half; ++i) row += sin_bytes[i] + cos_bytes[i];
      break;
    case Layout::kConcatSinCos:
      for (const auto& b : sin_bytes) row += b;
      for (const auto& b : cos_bytes) row += b;
      break;
    case Layout::kConcatCosSin:
      for (const auto& b : cos_bytes) row += b;
      for (const auto& b : sin_bytes) row += b;
      break;
  }
  return row;
}

using ::posenc::testing::Sha256Hex;

// One transcript line: "<rpc> <name> <dtype> <rows>x<d> sha256=<hex>".
void PrintRows(const char* rpc, const char* name, const Spec& spec,
               const std::vector<uint32_t>& positions) {
  std::string bytes;
  for (uint32_t pos : positions) bytes += Row(spec, pos);
  std::printf("%s %s %s %zux%u sha256=%s\n", rpc, name, DTypeName(spec.dtype),
              positions.size(), spec.d, Sha256Hex(bytes).c_str());
}

std::vector<uint32_t> Range(uint32_t start, uint32_t end) {
  std::vector<uint32_t> positions;
  for (uint32_t p = start; p < end; ++p) positions.push_back(p);
  return positions;
}

// The routing key's base, written independently of posenc's code: the
// fewest significant digits that read back as `x` (printf %.*e, tried from 1
// to 17 digits), laid out as JavaScript's String(x) (ECMAScript
// Number::toString). Only finite x > 0 occur here.
std::string KeyBase(double x) {
  char text[64];
  for (int precision = 0; precision < 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*e", precision, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  std::string digits;
  const char* e = std::strchr(text, 'e');
  for (const char* c = text; c < e; ++c) {
    if (*c != '.') digits += *c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = static_cast<int>(digits.size());
  const int n = std::atoi(e + 1) + 1;  // x = 0.digits * 10^n
  if (k <= n && n <= 21) return digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return "0." + std::string(-n, '0') + digits;
  const std::string mantissa =
      k == 1 ? digits : digits.substr(0, 1) + "." + digits.substr(1);
  return mantissa + "e" + (n - 1 >= 0 ? "+" : "-") +
         std::to_string(std::abs(n - 1));
}

struct KeyCase {
  const char* name;
  uint32_t d;
  double base;  // 0: unset
  const char* dtype;
  const char* layout;
  const char* frequency;  // "": unset
};

// "Key <name> d=..;base=..;dtype=..;layout=..;freq=.." (SCRIPT.md).
void PrintKey(const KeyCase& c) {
  auto or_default = [](const char* value, const char* fallback) {
    return *value != '\0' ? value : fallback;
  };
  std::printf("Key %s d=%u;base=%s;dtype=%s;layout=%s;freq=%s\n", c.name, c.d,
              KeyBase(c.base != 0 ? c.base : 10000).c_str(),
              or_default(c.dtype, "float32"),
              or_default(c.layout, "interleaved"),
              or_default(c.frequency, "paper"));
}

}  // namespace

int main() {
  // The script of tests/interop/SCRIPT.md, in order.
  const Spec d4 = {
      4, 10000, 16, DType::kFloat32, Layout::kInterleaved, Frequency::kPaper};
  const Spec d512 = {512,
                     500.5,
                     40,
                     DType::kFloat64,
                     Layout::kConcatSinCos,
                     Frequency::kPaper};
  const Spec d1024 = {
      1024, 1e6, 24, DType::kFloat16, Layout::kInterleaved, Frequency::kT2T};
  const Spec d64 = {64,
                    10000,
                    100,
                    DType::kBFloat16,
                    Layout::kConcatCosSin,
                    Frequency::kPaper};
  PrintRows("GetTable", "d4_f32", d4, Range(0, d4.max_len));
  PrintRows("GetTable", "d512_f64_concat", d512, Range(0, d512.max_len));
  PrintRows("GetTable", "d1024_f16_t2t", d1024, Range(0, d1024.max_len));
  PrintRows("GetTable", "d64_bf16_cossin", d64, Range(0, d64.max_len));

  const Spec rows = {
      512, 10000, 64, DType::kFloat32, Layout::kInterleaved, Frequency::kPaper};
  PrintRows("StreamRows", "d512_f32_5_37", rows, Range(5, 37));
  const Spec batches = {
      256, 10000, 128, DType::kBFloat16, Layout::kInterleaved, Frequency::kT2T};
  PrintRows("StreamBatches", "d256_bf16_t2t_3_100_by7", batches, Range(3, 100));
  const Spec gather = {128,
                       1234.5,
                       64,
                       DType::kFloat16,
                       Layout::kConcatSinCos,
                       Frequency::kPaper};
  PrintRows("GetRows", "d128_f16_concat", gather, {9, 0, 9, 63, 1, 2, 2, 40});

  std::printf("GetTable odd_d INVALID_ARGUMENT\n");
  std::printf("GetRows past_max_len OUT_OF_RANGE\n");
  std::printf("GetTable over_max_message RESOURCE_EXHAUSTED\n");
  std::printf("GetStats max_message_bytes 1048576\n");
  const KeyCase keys[] = {
      {"d4_f32", 4, 0, "", "", ""},
      {"d512_f64_concat", 512, 500.5, "float64", "concat_sin_cos", ""},
      {"d1024_f16_t2t", 1024, 1e6, "float16", "", "t2t"},
      {"d64_bf16_cossin", 64, 0, "bfloat16", "concat_cos_sin", ""},
      {"d256_bf16_t2t", 256, 0, "bfloat16", "", "t2t"},
      {"d128_f16_concat", 128, 1234.5, "float16", "concat_sin_cos", ""},
      {"base_1e21", 8, 1e21, "", "", ""},
      {"base_5e-324", 8, 5e-324, "", "", ""},
      {"base_0.1", 8, 0.1, "", "", ""},
      {"base_123456789012345680000", 8, 123456789012345680000.0, "", "", ""},
      {"base_1e-7", 8, 1e-7, "", "", ""},
      {"base_1.7976931348623157e308", 8, 1.7976931348623157e308, "", "", ""},
      {"base_0.30000000000000004", 8, 0.30000000000000004, "", "", ""},
      {"base_1e16", 8, 1e16, "", "", ""},
  };
  for (const KeyCase& key : keys) PrintKey(key);
  // The worked example, from the reference float32 row, as clients print it.
  const std::string example = Row(d4, 2);
  std::printf("Example d4_pos2");
  for (size_t k = 0; k < 4; ++k) {
    float v;
    std::memcpy(&v, example.data() + 4 * k, 4);
    std::printf(" %.4f", v);
  }
  std::printf("\n");
  return 0;
}
