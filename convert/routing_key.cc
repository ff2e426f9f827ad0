#include "convert/routing_key.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "convert/proto_conversion.h"

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

std::string ListHashForKey(
    const google::protobuf::RepeatedField<double>& list) {
  uint64_t hash = 0xcbf29ce484222325u;  // FNV-1a 64
  for (const double v : list) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int k = 0; k < 8; ++k) {
      hash ^= (bits >> (8 * k)) & 0xff;  // little-endian bytes
      hash *= 0x100000001b3u;
    }
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx",
                static_cast<unsigned long long>(hash));
  return out;
}

namespace {

void AppendRope(const v1::RopeScaling& r, std::string* out) {
  std::string& key = *out;
  static const char* const kRopeTypes[] = {
      "default", "default", "linear", "dynamic", "yarn", "llama3", "longrope"};
  absl::StrAppend(&key, ";rope=", EnumName(r.type(), kRopeTypes, 7));
  // The non-zero fields in field-number order.
  auto number = [&key](const char* name, double v) {
    if (v != 0) absl::StrAppend(&key, ";", name, "=", FormatBaseForKey(v));
  };
  auto integer = [&key](const char* name, uint32_t v) {
    if (v != 0) absl::StrAppend(&key, ";", name, "=", v);
  };
  number("factor", r.factor());
  integer("original_max_position_embeddings",
          r.original_max_position_embeddings());
  integer("seq_len", r.seq_len());
  number("beta_fast", r.beta_fast());
  number("beta_slow", r.beta_slow());
  number("mscale", r.mscale());
  number("mscale_all_dim", r.mscale_all_dim());
  if (r.has_truncate()) {
    absl::StrAppend(&key, ";truncate=", r.truncate() ? "true" : "false");
  }
  number("attention_factor", r.attention_factor());
  number("low_freq_factor", r.low_freq_factor());
  number("high_freq_factor", r.high_freq_factor());
  if (r.short_factor_size() > 0) {
    absl::StrAppend(&key, ";short_factor=", ListHashForKey(r.short_factor()));
  }
  if (r.long_factor_size() > 0) {
    absl::StrAppend(&key, ";long_factor=", ListHashForKey(r.long_factor()));
  }
}

// ";grid=<size>:<channels>:<first>:<num>/<den>,...;order=..;sin_cos=..;
// extra=.." (see the header).
void AppendGrid(const v1::GridSpec& g, std::string* key) {
  static const char* const kSinCos[] = {"per_axis", "per_axis", "grouped"};
  absl::StrAppend(key, ";grid=");
  for (int a = 0; a < g.axes_size(); ++a) {
    const v1::GridSpecAxis& x = g.axes(a);
    uint32_t num = x.position_numerator() == 0 ? 1 : x.position_numerator();
    uint32_t den = x.position_denominator() == 0 ? 1 : x.position_denominator();
    const uint32_t common = std::gcd(num, den);
    num /= common;
    den /= common;
    absl::StrAppend(key, a ? "," : "", x.size(), ":", x.channels(), ":",
                    x.first_index(), ":", num, "/", den);
  }
  absl::StrAppend(key, ";order=");
  if (g.channel_order_size() == 0) {
    for (int a = 0; a < g.axes_size(); ++a) {
      absl::StrAppend(key, a ? "," : "", a);
    }
  } else {
    absl::StrAppend(key, absl::StrJoin(g.channel_order(), ","));
  }
  absl::StrAppend(key, ";sin_cos=", EnumName(g.sin_cos(), kSinCos, 3),
                  ";extra=", g.extra_zero_rows());
}

}  // namespace

std::string RoutingKey(const v1::TableSpec& spec) {
  static const char* const kDTypes[] = {"float32", "float32", "float64",
                                        "float16", "bfloat16"};
  // rotation_matrix (6) is Encode's and no table takes it; it has its name
  // as the Go, Python and Node clients derive it from the proto.
  static const char* const kLayouts[] = {
      "interleaved", "interleaved",       "concat_sin_cos", "concat_cos_sin",
      "rotate_half", "interleaved_pairs", "rotation_matrix"};
  static const char* const kFrequencies[] = {"paper", "paper", "t2t"};
  const double base = spec.base() == 0 ? 10000.0 : spec.base();
  // A valid partial_rotary_factor names the same table as d = the rotary
  // dimension without it (SpecFromProto resolves it so), so the key folds it
  // into d: every spelling of one family reaches one replica.
  const double prf = spec.partial_rotary_factor();
  const std::optional<uint32_t> rotary = RotaryDimension(spec);
  const uint32_t d = rotary.value_or(spec.d());
  std::string key =
      absl::StrCat("d=", d, ";base=", FormatBaseForKey(base),
                   ";dtype=", EnumName(spec.dtype(), kDTypes, 5),
                   ";layout=", EnumName(spec.layout(), kLayouts, 7),
                   ";freq=", EnumName(spec.frequency(), kFrequencies, 3));
  if (prf != 0 && !rotary.has_value()) {  // out of range: rejected
    absl::StrAppend(&key, ";prf=", FormatBaseForKey(prf));
  }
  if (spec.has_rope() && spec.rope().ByteSizeLong() != 0) {
    AppendRope(spec.rope(), &key);
  }
  if (spec.has_grid()) AppendGrid(spec.grid(), &key);
  return key;
}

}  // namespace posenc
