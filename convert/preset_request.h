// The ResolvePreset RPC's domain step: a ResolvePresetRequest (a preset
// name, its arguments, optionally a model's config.json) to the fully
// explicit spec it names. Shared by the server's adapter and tests.
//
// Pure function; no gRPC. Thread-safe.
#ifndef POSENC_CONVERT_PRESET_REQUEST_H_
#define POSENC_CONVERT_PRESET_REQUEST_H_

#include "absl/status/statusor.h"
#include "core/spec/table_spec.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

// INVALID_ARGUMENT naming `preset`, `arguments.<name>`, `config_json` or
// `dtype` (presets/presets.h, presets/model_config.h). The request's arguments
// override those the config gives.
absl::StatusOr<v1::ResolvePresetResponse> ResolvePresetRequest(
    const v1::ResolvePresetRequest& request, const SpecLimits& limits);

}  // namespace posenc

#endif  // POSENC_CONVERT_PRESET_REQUEST_H_
