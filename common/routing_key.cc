#include "common/routing_key.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace posenc {
namespace {

std::string EnumName(int value, const char* const* names, int count) {
  if (value >= 0 && value < count) return names[value];
  return absl::StrCat(value);
}

}  // namespace

std::string FormatBaseForKey(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == 0) return "0";  // both zeros
  if (x < 0) return absl::StrCat("-", FormatBaseForKey(-x));
  if (std::isinf(x)) return "Infinity";
  // Shortest round-trip digits: "d.ddde+XX" or "de-XX".
  char buffer[64];
  const std::to_chars_result result = std::to_chars(
      buffer, buffer + sizeof(buffer), x, std::chars_format::scientific);
  const std::string text(buffer, result.ptr);
  const size_t e = text.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (text[i] != '.') digits += text[i];
  }
  const int k = static_cast<int>(digits.size());
  const int n = std::atoi(text.c_str() + e + 1) + 1;  // x = 0.digits * 10^n
  if (k <= n && n <= 21) return digits + std::string(n - k, '0');
  if (0 < n && n <= 21)
    return absl::StrCat(digits.substr(0, n), ".", digits.substr(n));
  if (-6 < n && n <= 0) return absl::StrCat("0.", std::string(-n, '0'), digits);
  const std::string exponent =
      absl::StrCat(n - 1 >= 0 ? "+" : "-", std::abs(n - 1));
  if (k == 1) return absl::StrCat(digits, "e", exponent);
  return absl::StrCat(digits.substr(0, 1), ".", digits.substr(1), "e",
                      exponent);
}

std::string RoutingKey(const v1::TableSpec& spec) {
  static const char* const kDTypes[] = {"float32", "float32", "float64",
                                        "float16", "bfloat16"};
  static const char* const kLayouts[] = {"interleaved", "interleaved",
                                         "concat_sin_cos", "concat_cos_sin"};
  static const char* const kFrequencies[] = {"paper", "paper", "t2t"};
  const double base = spec.base() == 0 ? 10000.0 : spec.base();
  return absl::StrCat("d=", spec.d(), ";base=", FormatBaseForKey(base),
                      ";dtype=", EnumName(spec.dtype(), kDTypes, 5),
                      ";layout=", EnumName(spec.layout(), kLayouts, 4),
                      ";freq=", EnumName(spec.frequency(), kFrequencies, 3));
}

}  // namespace posenc
