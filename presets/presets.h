// Presets: a library call, named as the library names it with the
// library's own arguments ("diffusers.get_timestep_embedding",
// embedding_dim=320, flip_sin_to_cos=True), mapped to the spec whose exact
// values are that call's formula over the real numbers. A user names what
// their model calls instead of re-deriving posenc's parameters.
//
// Each preset documents the library version and the function it
// reproduces (PresetInfo::reproduces) and its arguments with their
// defaults, which are the library's. The positions (timesteps, ids) are
// not arguments: they go in the Encode / GetRows call as usual.
//
//   absl::StatusOr<posenc::PresetArguments> args =
//       posenc::PresetArguments::Create({{"embedding_dim", "320"},
//                                        {"flip_sin_to_cos", "True"}});
//   absl::StatusOr<posenc::ResolvedPreset> preset = posenc::ResolvePreset(
//       "diffusers.get_timestep_embedding", *std::move(args),
//       posenc::DType::kFloat32, posenc::SpecLimits{});
//   // preset->spec holds an EncodingSpec: Encode it at the timesteps.
//
// Pure functions over value types; no gRPC, no I/O. Thread-safe.
#ifndef POSENC_PRESETS_PRESETS_H_
#define POSENC_PRESETS_PRESETS_H_

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/table_spec.h"
#include "presets/preset_arguments.h"

namespace posenc {

struct PresetInfo {
  // "<library>.<function or class>", e.g. "diffusers.get_timestep_embedding".
  std::string name;
  // Library, version followed, file and function.
  std::string reproduces;
  // The arguments taken, with the library's defaults, e.g.
  // "embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, ...".
  std::string arguments;
  // "table" (served by GetTable, GetRows, ...) or "encoding" (Encode).
  std::string served_by;
};

// Every preset, in a stable order.
const std::vector<PresetInfo>& Presets();

// A resolved preset: a TableSpec or an EncodingSpec.
struct ResolvedPreset {
  const PresetInfo* info = nullptr;
  std::variant<TableSpec, EncodingSpec> spec;
};

// The spec of preset `name` called with `arguments`, in `dtype` (the
// library computes in float32; posenc serves the exact values in any dtype).
// INVALID_ARGUMENT: an unknown name (listing the known ones), an argument
// missing, malformed, out of range or unknown to that preset
// ("arguments.<name>: ..."), or a spec the limits refuse.
absl::StatusOr<ResolvedPreset> ResolvePreset(absl::string_view name,
                                             PresetArguments arguments,
                                             DType dtype,
                                             const SpecLimits& limits);

}  // namespace posenc

#endif  // POSENC_PRESETS_PRESETS_H_
