// PresetArguments: the arguments of a library call, by the library's own
// names, each written as Python or JSON writes it: "320", "999.5", "1e-3",
// "true" / "True", "[16, 56, 56]" or "(16, 56, 56)". A preset
// (presets/presets.h) reads each argument it knows with a typed reader, which
// fails with INVALID_ARGUMENT naming "arguments.<name>", the text and the
// rule. Every reader marks its argument as read, so an argument the preset
// does not know (a typo, an argument of another function) is an error
// (CheckAllRead) instead of being silently ignored.
//
// Bounds (a hostile caller sends these): at most kMaxPresetArguments names,
// names of at most 64 bytes, values of at most 1 KiB, lists of at most 64
// numbers. Parsing is linear in the text.
//
// Value type; thread-compatible.
#ifndef POSENC_PRESETS_PRESET_ARGUMENTS_H_
#define POSENC_PRESETS_PRESET_ARGUMENTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace posenc {

inline constexpr size_t kMaxPresetArguments = 32;
inline constexpr size_t kMaxPresetArgumentName = 64;
inline constexpr size_t kMaxPresetArgumentText = 1024;
inline constexpr size_t kMaxPresetListLength = 64;

class PresetArguments {
 public:
  // INVALID_ARGUMENT when a bound above is exceeded (naming it).
  static absl::StatusOr<PresetArguments> Create(
      std::map<std::string, std::string> values);

  PresetArguments() = default;

  bool Has(absl::string_view name) const;

  // A finite number (an integer or a decimal/exponent literal). When the
  // argument is absent: `fallback`, or INVALID_ARGUMENT "required" when
  // there is none.
  absl::StatusOr<double> Number(absl::string_view name,
                                std::optional<double> fallback);
  // An integer in [min, max] ("320", or "320.0" as Python's float).
  absl::StatusOr<uint32_t> Count(absl::string_view name,
                                 std::optional<uint32_t> fallback, uint32_t min,
                                 uint32_t max);
  // true/false in any case (JSON's and Python's spellings), or 1/0.
  absl::StatusOr<bool> Bool(absl::string_view name,
                            std::optional<bool> fallback);
  // A list "[a, b, ...]" or "(a, b, ...)" of integers in [min, max], with
  // between min_length and max_length entries; a bare integer is a list of
  // one.
  absl::StatusOr<std::vector<uint32_t>> Counts(
      absl::string_view name, std::optional<std::vector<uint32_t>> fallback,
      uint32_t min, uint32_t max, size_t min_length, size_t max_length);

  // OK when every argument given is named in `known` (the preset's
  // argument list, "a, b=1, c=[2, 3]"); else INVALID_ARGUMENT naming the
  // first other one and `known`. Checked before any reader, so a typo is
  // reported as such rather than as its correct name missing.
  absl::Status CheckAllKnown(absl::string_view preset,
                             absl::string_view known) const;
  // OK when every argument given was read by some reader; else
  // INVALID_ARGUMENT naming the first unread one and the names `known`.
  absl::Status CheckAllRead(absl::string_view preset,
                            absl::string_view known) const;

 private:
  explicit PresetArguments(std::map<std::string, std::string> values)
      : values_(std::move(values)) {}
  // The text of `name`, marking it read; nullptr when absent.
  const std::string* Find(absl::string_view name);

  std::map<std::string, std::string> values_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace posenc

#endif  // POSENC_PRESETS_PRESET_ARGUMENTS_H_
