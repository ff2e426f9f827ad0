#include "presets/preset_arguments.h"

#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace posenc {
namespace {

absl::Status Invalid(absl::string_view name, absl::string_view text,
                     absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("arguments.", name, ": \"", text, "\" ", rule));
}

absl::Status Required(absl::string_view name) {
  return absl::InvalidArgumentError(
      absl::StrCat("arguments.", name, ": required"));
}

// A finite double from a JSON/Python number literal. absl::SimpleAtod also
// takes "inf" and "nan", which no argument of a preset accepts.
std::optional<double> ParseNumber(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(text), &value) ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<uint32_t> AsCount(double value, uint32_t min, uint32_t max) {
  if (value != std::floor(value) || value < min || value > max) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

absl::StatusOr<PresetArguments> PresetArguments::Create(
    std::map<std::string, std::string> values) {
  if (values.size() > kMaxPresetArguments) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arguments: ", values.size(), " given, at most ", kMaxPresetArguments));
  }
  for (const auto& [name, text] : values) {
    if (name.empty() || name.size() > kMaxPresetArgumentName) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments: a name of ", name.size(),
                       " bytes; names have 1..", kMaxPresetArgumentName));
    }
    if (text.size() > kMaxPresetArgumentText) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments.", name, ": ", text.size(),
                       " bytes, at most ", kMaxPresetArgumentText));
    }
  }
  return PresetArguments(std::move(values));
}

bool PresetArguments::Has(absl::string_view name) const {
  return values_.find(std::string(name)) != values_.end();
}

const std::string* PresetArguments::Find(absl::string_view name) {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return nullptr;
  read_.insert(it->first);
  return &it->second;
}

absl::StatusOr<double> PresetArguments::Number(absl::string_view name,
                                               std::optional<double> fallback) {
  const std::string* text = Find(name);
  if (text == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Required(name);
  }
  std::optional<double> value = ParseNumber(*text);
  if (!value.has_value()) return Invalid(name, *text, "is not a finite number");
  return *value;
}

absl::StatusOr<uint32_t> PresetArguments::Count(
    absl::string_view name, std::optional<uint32_t> fallback, uint32_t min,
    uint32_t max) {
  const std::string* text = Find(name);
  if (text == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Required(name);
  }
  std::optional<double> value = ParseNumber(*text);
  std::optional<uint32_t> count =
      value.has_value() ? AsCount(*value, min, max) : std::nullopt;
  if (!count.has_value()) {
    return Invalid(name, *text,
                   absl::StrCat("is not an integer in ", min, "..", max));
  }
  return *count;
}

absl::StatusOr<bool> PresetArguments::Bool(absl::string_view name,
                                           std::optional<bool> fallback) {
  const std::string* text = Find(name);
  if (text == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Required(name);
  }
  const std::string word =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(*text));
  if (word == "true" || word == "1") return true;
  if (word == "false" || word == "0") return false;
  return Invalid(name, *text, "is not true or false");
}

absl::StatusOr<std::vector<uint32_t>> PresetArguments::Counts(
    absl::string_view name, std::optional<std::vector<uint32_t>> fallback,
    uint32_t min, uint32_t max, size_t min_length, size_t max_length) {
  const std::string* text = Find(name);
  if (text == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Required(name);
  }
  absl::string_view body = absl::StripAsciiWhitespace(*text);
  if ((absl::ConsumePrefix(&body, "[") && !absl::ConsumeSuffix(&body, "]")) ||
      (absl::ConsumePrefix(&body, "(") && !absl::ConsumeSuffix(&body, ")"))) {
    return Invalid(name, *text, "is not a list such as [16, 56, 56]");
  }
  std::vector<uint32_t> counts;
  // Python writes a one-entry tuple "(4,)": a trailing comma is allowed.
  body = absl::StripAsciiWhitespace(body);
  absl::ConsumeSuffix(&body, ",");
  if (!absl::StripAsciiWhitespace(body).empty()) {
    for (absl::string_view item : absl::StrSplit(body, ',')) {
      if (counts.size() == kMaxPresetListLength) {
        return Invalid(
            name, *text,
            absl::StrCat("has more than ", kMaxPresetListLength, " entries"));
      }
      std::optional<double> value = ParseNumber(item);
      std::optional<uint32_t> count =
          value.has_value() ? AsCount(*value, min, max) : std::nullopt;
      if (!count.has_value()) {
        return Invalid(name, *text,
                       absl::StrCat("has an entry that is not an integer in ",
                                    min, "..", max));
      }
      counts.push_back(*count);
    }
  }
  if (counts.size() < min_length || counts.size() > max_length) {
    return Invalid(name, *text,
                   absl::StrCat("has ", counts.size(), " entries; it takes ",
                                min_length, "..", max_length));
  }
  return counts;
}

absl::Status PresetArguments::CheckAllKnown(absl::string_view preset,
                                            absl::string_view known) const {
  std::set<std::string, std::less<>> names;
  // "a, b=1, c=[2, 3]": a name starts the list or follows ", " and ends at
  // "=" or ",".
  for (absl::string_view item : absl::StrSplit(known, ", ")) {
    const size_t end = item.find('=');
    absl::string_view name = item.substr(0, end);
    if (!name.empty() && absl::ascii_isalpha(name[0])) {
      names.insert(std::string(absl::StripAsciiWhitespace(name)));
    }
  }
  for (const auto& [name, text] : values_) {
    if (names.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments.", name, ": ", preset,
                       " has no such argument (it takes: ", known, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status PresetArguments::CheckAllRead(absl::string_view preset,
                                           absl::string_view known) const {
  for (const auto& [name, text] : values_) {
    if (read_.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments.", name, ": ", preset,
                       " has no such argument (it takes: ", known, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace posenc
