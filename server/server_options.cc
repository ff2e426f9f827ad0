#include "server/server_options.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace posenc {
namespace {

// "2..65536", "0 (off) or 0.001..2147483 seconds", "at least 1048576".
std::string RangeText(const OptionRule& rule) {
  std::string text = rule.zero_means_off ? "0 (off) or " : "";
  if (rule.max == kUnbounded) {
    absl::StrAppend(&text, "at least ", absl::StrFormat("%.15g", rule.min));
  } else {
    absl::StrAppend(&text, absl::StrFormat("%.15g..%.15g", rule.min, rule.max));
  }
  return absl::StrCat(text, rule.unit);
}

absl::Status Invalid(const char* name, absl::string_view must_be,
                     absl::string_view got, const OptionRule& rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " must be ", must_be, ", got ", got,
                   *rule.why ? absl::StrCat(": ", rule.why) : ""));
}

bool IsHostPort(absl::string_view value) {
  const size_t colon = value.rfind(':');
  uint32_t port = 0;
  return colon != absl::string_view::npos && colon != 0 &&
         absl::SimpleAtoi(value.substr(colon + 1), &port) && port <= 65535;
}

template <typename T>
absl::Status Check(const char* name, T value, const OptionRule& rule) {
  if (rule.kind != OptionRule::Kind::kRange) return absl::OkStatus();
  const double v = static_cast<double>(value);
  if (rule.zero_means_off && v == 0) return absl::OkStatus();
  if (std::isfinite(v) && v >= rule.min && v <= rule.max) {
    return absl::OkStatus();
  }
  return Invalid(name, RangeText(rule), absl::StrCat(value), rule);
}

absl::Status Check(const char* name, const std::string& value,
                   const OptionRule& rule) {
  switch (rule.kind) {
    case OptionRule::Kind::kHostPort:
      if ((rule.empty_means_off && value.empty()) || IsHostPort(value)) {
        return absl::OkStatus();
      }
      return Invalid(name,
                     rule.empty_means_off ? "host:port (e.g. 127.0.0.1:9090) "
                                            "or empty"
                                          : "host:port (e.g. 127.0.0.1:50051)",
                     absl::StrCat("'", value, "'"), rule);
    case OptionRule::Kind::kOneOf:
      for (absl::string_view choice : absl::StrSplit(rule.choices, '|')) {
        if (value == choice) return absl::OkStatus();
      }
      return Invalid(name, absl::StrCat("one of ", rule.choices),
                     absl::StrCat("'", value, "'"), rule);
    default:
      return absl::OkStatus();
  }
}

absl::Status Check(const char*, bool, const OptionRule&) {
  return absl::OkStatus();
}

}  // namespace

std::string OptionHelp(const char* help, const OptionRule& rule) {
  switch (rule.kind) {
    case OptionRule::Kind::kRange:
      return absl::StrCat(help, " (", RangeText(rule), ")");
    case OptionRule::Kind::kOneOf:
      return absl::StrCat(help, " (", rule.choices, ")");
    default:
      return help;
  }
}

absl::Status ValidateServerOptions(const ServerOptions& o) {
#define POSENC_CHECK_OPTION(type, name, default_value, rule, help) \
  if (absl::Status s = Check(#name, o.name, rule); !s.ok()) return s;
  POSENC_SERVER_OPTIONS(POSENC_CHECK_OPTION)
#undef POSENC_CHECK_OPTION
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key must be given together");
  }
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls_client_ca needs --tls_cert and --tls_key");
  }
  return absl::OkStatus();
}

}  // namespace posenc
