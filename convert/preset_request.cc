#include "convert/preset_request.h"

#include <map>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "convert/proto_conversion.h"
#include "presets/model_config.h"
#include "presets/presets.h"

namespace posenc {

absl::StatusOr<v1::ResolvePresetResponse> ResolvePresetRequest(
    const v1::ResolvePresetRequest& request, const SpecLimits& limits) {
  absl::StatusOr<DType> dtype = DTypeFromProto(request.dtype());
  if (!dtype.ok()) return dtype.status();
  std::string name = request.preset();
  std::map<std::string, std::string> arguments;
  if (!request.config_json().empty()) {
    absl::StatusOr<ModelConfigCall> call =
        ReadModelConfig(request.config_json(), request.preset());
    if (!call.ok()) return call.status();
    name = std::move(call->preset);
    arguments = std::move(call->arguments);
  }
  if (request.arguments_size() > static_cast<int>(kMaxPresetArguments)) {
    return absl::InvalidArgumentError(
        absl::StrCat("arguments: ", request.arguments_size(),
                     " given, at most ", kMaxPresetArguments));
  }
  for (const auto& [key, value] : request.arguments()) arguments[key] = value;
  absl::StatusOr<PresetArguments> parsed =
      PresetArguments::Create(std::move(arguments));
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<ResolvedPreset> resolved =
      ResolvePreset(name, *std::move(parsed), *dtype, limits);
  if (!resolved.ok()) return resolved.status();
  v1::ResolvePresetResponse response;
  if (const auto* table = std::get_if<TableSpec>(&resolved->spec)) {
    *response.mutable_table() = SpecToProto(*table);
  } else {
    *response.mutable_encoding() =
        EncodingSpecToProto(std::get<EncodingSpec>(resolved->spec));
  }
  response.set_preset(resolved->info->name);
  response.set_reproduces(resolved->info->reproduces);
  return response;
}

}  // namespace posenc
