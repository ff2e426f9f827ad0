#include "common/model_config.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/shortest_double.h"

namespace posenc {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using Arguments = std::map<std::string, std::string>;

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("config_json: ", message));
}

const Value* Find(const Struct& s, const char* key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.has_null_value()) return nullptr;
  return &it->second;
}

// Settings are copied as PresetArguments text; their ranges are checked
// by the preset, which names the argument.
absl::Status CopyNumber(const Struct& s, const char* key, double fallback,
                        const char* argument, Arguments* out) {
  const Value* v = Find(s, key);
  if (v != nullptr && !v->has_number_value()) {
    return Invalid(absl::StrCat(key, " must be a number"));
  }
  (*out)[argument] =
      ShortestDouble(v != nullptr ? v->number_value() : fallback);
  return absl::OkStatus();
}

absl::Status CopyBool(const Struct& s, const char* key, bool fallback,
                      const char* argument, Arguments* out) {
  const Value* v = Find(s, key);
  if (v != nullptr && !v->has_bool_value()) {
    return Invalid(absl::StrCat(key, " must be true or false"));
  }
  (*out)[argument] =
      (v != nullptr ? v->bool_value() : fallback) ? "true" : "false";
  return absl::OkStatus();
}

// Entry `index` of the list of numbers `key` (required).
absl::StatusOr<double> ListEntry(const Struct& s, const char* key, int index) {
  const Value* v = Find(s, key);
  if (v == nullptr || !v->has_list_value() ||
      v->list_value().values_size() <= index ||
      !v->list_value().values(index).has_number_value()) {
    return Invalid(absl::StrCat(key, " must be a list of at least ", index + 1,
                                " numbers"));
  }
  return v->list_value().values(index).number_value();
}

using Reader = std::function<absl::Status(const Struct&, Arguments*)>;

struct PresetReader {
  const char* preset;
  Reader read;
};

struct ClassReader {
  const char* class_name;
  std::vector<PresetReader> presets;  // the first is the default
};

// The time_proj of diffusers' CombinedTimestep(Guidance)TextProjEmbeddings
// (SD3, FLUX): Timesteps(num_channels=256, flip_sin_to_cos=True,
// downscale_freq_shift=0).
absl::Status CombinedTimestepProj(const Struct&, Arguments* out) {
  (*out)["num_channels"] = "256";
  (*out)["flip_sin_to_cos"] = "true";
  (*out)["downscale_freq_shift"] = "0";
  return absl::OkStatus();
}

// UNet2DConditionModel: time_proj = Timesteps(block_out_channels[0],
// flip_sin_to_cos, freq_shift) when time_embedding_type is "positional".
absl::Status UnetTimesteps(const Struct& s, Arguments* out) {
  if (const Value* type = Find(s, "time_embedding_type");
      type != nullptr &&
      !(type->has_string_value() && type->string_value() == "positional")) {
    return Invalid(
        "time_embedding_type is not \"positional\" (a Fourier projection "
        "has random weights, not a sinusoidal encoding)");
  }
  absl::StatusOr<double> channels = ListEntry(s, "block_out_channels", 0);
  if (!channels.ok()) return channels.status();
  (*out)["num_channels"] = ShortestDouble(*channels);
  if (absl::Status st =
          CopyBool(s, "flip_sin_to_cos", true, "flip_sin_to_cos", out);
      !st.ok()) {
    return st;
  }
  return CopyNumber(s, "freq_shift", 0, "downscale_freq_shift", out);
}

const std::vector<ClassReader>& Readers() {
  static const auto* readers = new std::vector<ClassReader>{
      {"UNet2DConditionModel", {{"diffusers.Timesteps", &UnetTimesteps}}},
      {"FluxTransformer2DModel",
       {{"diffusers.Timesteps", &CombinedTimestepProj}}},
      {"SD3Transformer2DModel",
       {{"diffusers.Timesteps", &CombinedTimestepProj}}},
  };
  return *readers;
}

std::string KnownClasses() {
  return absl::StrJoin(Readers(), ", ",
                       [](std::string* out, const ClassReader& r) {
                         out->append(r.class_name);
                       });
}

}  // namespace

absl::StatusOr<ModelConfigCall> ReadModelConfig(absl::string_view config_json,
                                                absl::string_view preset) {
  if (config_json.size() > kMaxModelConfigBytes) {
    return Invalid(absl::StrCat(config_json.size(), " bytes, at most ",
                                kMaxModelConfigBytes));
  }
  Struct config;
  if (!google::protobuf::util::JsonStringToMessage(std::string(config_json),
                                                   &config)
           .ok()) {
    return Invalid("not a JSON object");
  }
  std::string class_name;
  for (const char* key : {"_class_name", "model_type"}) {
    const Value* v = Find(config, key);
    if (v != nullptr && v->has_string_value()) {
      class_name = v->string_value();
      break;
    }
  }
  for (const ClassReader& reader : Readers()) {
    if (class_name != reader.class_name) continue;
    for (const PresetReader& p : reader.presets) {
      if (!preset.empty() && preset != p.preset) continue;
      ModelConfigCall call{p.preset, {}};
      if (absl::Status st = p.read(config, &call.arguments); !st.ok()) {
        return st;
      }
      return call;
    }
    return Invalid(absl::StrCat(
        class_name, " builds no ", preset.substr(0, 64), " (it builds: ",
        absl::StrJoin(reader.presets, ", ",
                      [](std::string* out, const PresetReader& p) {
                        out->append(p.preset);
                      }),
        ")"));
  }
  // At most 64 bytes of a caller's string go into the message.
  return Invalid(absl::StrCat("_class_name / model_type \"",
                              absl::string_view(class_name).substr(0, 64),
                              "\" has no reader (known: ", KnownClasses(),
                              ")"));
}

}  // namespace posenc
