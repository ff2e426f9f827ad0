#include "presets/model_config.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/numerics/shortest_double.h"

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

// Copies the list of numbers `key` as "[a, b, ...]".
absl::Status CopyList(const Struct& s, const char* key, const char* argument,
                      Arguments* out) {
  const Value* v = Find(s, key);
  if (v == nullptr || !v->has_list_value()) {
    return Invalid(absl::StrCat(key, " must be a list of numbers"));
  }
  std::vector<std::string> items;
  for (const Value& e : v->list_value().values()) {
    if (!e.has_number_value()) {
      return Invalid(absl::StrCat(key, " must be a list of numbers"));
    }
    items.push_back(ShortestDouble(e.number_value()));
  }
  (*out)[argument] = absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  return absl::OkStatus();
}

absl::StatusOr<double> RequiredNumber(const Struct& s, const char* key) {
  const Value* v = Find(s, key);
  if (v == nullptr || !v->has_number_value()) {
    return Invalid(absl::StrCat(key, " must be a number"));
  }
  return v->number_value();
}

// FluxTransformer2DModel: pos_embed = FluxPosEmbed(theta=10000,
// axes_dim=axes_dims_rope); the original model's EmbedND(dim =
// attention_head_dim, theta 10000, axes_dim).
absl::Status FluxPosEmbed(const Struct& s, Arguments* out) {
  (*out)["theta"] = "10000";
  return CopyList(s, "axes_dims_rope", "axes_dim", out);
}
absl::Status FluxEmbedNd(const Struct& s, Arguments* out) {
  if (absl::Status st = FluxPosEmbed(s, out); !st.ok()) return st;
  return CopyNumber(s, "attention_head_dim", 128, "dim", out);
}

// SD3Transformer2DModel: pos_embed = PatchEmbed(height=sample_size,
// width=sample_size, patch_size, embed_dim = num_attention_heads *
// attention_head_dim, pos_embed_max_size).
absl::Status Sd3PatchEmbed(const Struct& s, Arguments* out) {
  absl::StatusOr<double> sample = RequiredNumber(s, "sample_size");
  if (!sample.ok()) return sample.status();
  (*out)["height"] = (*out)["width"] = ShortestDouble(*sample);
  if (absl::Status st = CopyNumber(s, "patch_size", 2, "patch_size", out);
      !st.ok()) {
    return st;
  }
  absl::StatusOr<double> heads = RequiredNumber(s, "num_attention_heads");
  if (!heads.ok()) return heads.status();
  absl::StatusOr<double> head_dim = RequiredNumber(s, "attention_head_dim");
  if (!head_dim.ok()) return head_dim.status();
  (*out)["embed_dim"] = ShortestDouble(*heads * *head_dim);
  if (Find(s, "pos_embed_max_size") != nullptr) {
    return CopyNumber(s, "pos_embed_max_size", 0, "pos_embed_max_size", out);
  }
  return absl::OkStatus();
}

// Qwen2-VL / Qwen2.5-VL config.json (model_type qwen2_vl, qwen2_5_vl):
// head_dim = hidden_size / num_attention_heads, rope_theta,
// rope_scaling.mrope_section. Qwen3-VL (qwen3_vl): the same keys under
// text_config, head_dim given, rope_scaling.mrope_section (interleaved).
absl::Status QwenMrope(const Struct& config, Arguments* out) {
  const Struct* s = &config;
  if (const Value* text = Find(config, "text_config");
      text != nullptr && text->has_struct_value()) {
    s = &text->struct_value();
  }
  if (Find(*s, "head_dim") != nullptr) {
    if (absl::Status st = CopyNumber(*s, "head_dim", 0, "head_dim", out);
        !st.ok()) {
      return st;
    }
  } else {
    absl::StatusOr<double> hidden = RequiredNumber(*s, "hidden_size");
    if (!hidden.ok()) return hidden.status();
    absl::StatusOr<double> heads = RequiredNumber(*s, "num_attention_heads");
    if (!heads.ok()) return heads.status();
    if (!(*heads >= 1)) return Invalid("num_attention_heads must be >= 1");
    (*out)["head_dim"] = ShortestDouble(std::floor(*hidden / *heads));
  }
  if (absl::Status st = CopyNumber(*s, "rope_theta", 10000, "rope_theta", out);
      !st.ok()) {
    return st;
  }
  const Value* scaling = Find(*s, "rope_scaling");
  if (scaling == nullptr || !scaling->has_struct_value()) {
    return Invalid("rope_scaling must hold mrope_section");
  }
  return CopyList(scaling->struct_value(), "mrope_section", "mrope_section",
                  out);
}

const std::vector<ClassReader>& Readers() {
  static const auto* readers = new std::vector<ClassReader>{
      {"UNet2DConditionModel", {{"diffusers.Timesteps", &UnetTimesteps}}},
      {"FluxTransformer2DModel",
       {{"diffusers.FluxPosEmbed", &FluxPosEmbed},
        {"flux.EmbedND", &FluxEmbedNd},
        {"diffusers.Timesteps", &CombinedTimestepProj}}},
      {"SD3Transformer2DModel",
       {{"diffusers.PatchEmbed", &Sd3PatchEmbed},
        {"diffusers.Timesteps", &CombinedTimestepProj}}},
      {"qwen2_vl", {{"qwen2_vl.mrope", &QwenMrope}}},
      {"qwen2_5_vl", {{"qwen2_vl.mrope", &QwenMrope}}},
      {"qwen3_vl", {{"qwen3_vl.mrope", &QwenMrope}}},
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
