// libFuzzer target: ResolvePreset's domain step (common/preset_request.h),
// which the server runs on every ResolvePresetRequest: the preset name, its
// arguments (strings the client chose) and a model's config.json, all
// hostile. An input is the serialized request. The answer must be OK or
// INVALID_ARGUMENT with a message; an OK answer names a spec the server
// serves as it is: its TableSpec converts back (SpecFromProto) and passes
// ValidateSpec under the same limits, or its EncodingSpec converts
// (EncodingSpecFromProto) and passes ValidateEncodingSpec; and the same
// request resolves to the same bytes again. Mutations: half libFuzzer's own on
// the bytes; half parse the request and change its preset (a known one), an
// argument (a known name, a value near a bound or malformed) or the config_json
// (libFuzzer's byte mutation of the JSON text), then serialize it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "convert/preset_request.h"
#include "convert/proto_conversion.h"
#include "core/spec/encoding_spec.h"
#include "posenc/v1/posenc.pb.h"
#include "presets/presets.h"

namespace {

[[noreturn]] void Fail(const std::string& what,
                       const posenc::v1::ResolvePresetRequest& request) {
  const std::string line =
      absl::StrCat("posenc fuzz (preset): ", what,
                   "\n  request: ", request.ShortDebugString());
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::abort();
}

constexpr const char* kArgumentNames[] = {"axes_dim",
                                          "base_size",
                                          "cls_token",
                                          "dim",
                                          "downscale_freq_shift",
                                          "embed_dim",
                                          "embedding_dim",
                                          "extra_tokens",
                                          "feat_shape",
                                          "flip_sin_to_cos",
                                          "grid_size",
                                          "head_dim",
                                          "height",
                                          "in_dim",
                                          "in_pixels",
                                          "include_input",
                                          "interleave_sin_cos",
                                          "interpolation_scale",
                                          "latent_height",
                                          "latent_width",
                                          "max_freq_exp",
                                          "max_period",
                                          "min_freq_exp",
                                          "mrope_section",
                                          "num_channels",
                                          "num_frequencies",
                                          "patch_size",
                                          "pos_embed_max_size",
                                          "reverse_coord",
                                          "rope_theta",
                                          "scale",
                                          "spatial_interpolation_scale",
                                          "spatial_size",
                                          "temperature",
                                          "temporal_interpolation_scale",
                                          "temporal_size",
                                          "theta",
                                          "time_factor",
                                          "width"};

constexpr const char* kValues[] = {
    "0",      "1",        "2",          "3",      "4",
    "16",     "64",       "320",        "65535",  "65536",
    "65537",  "1048576",  "4294967296", "-1",     "0.5",
    "1.0",    "1e308",    "1e-320",     "nan",    "inf",
    "-inf",   "True",     "False",      "true",   "[16, 24, 24]",
    "[1, 2]", "[64, 64]", "[]",         "[",      "16,",
    "(8, 8)", "10000",    "10000.0",    "1e4",    "0x10",
    " 16",    "16 ",      "",           "\"16\"", "[65536, 65536, 65536]"};

constexpr const char* kConfigs[] = {
    R"({"_class_name": "UNet2DConditionModel", "block_out_channels": [320, 640, 1280, 1280], "flip_sin_to_cos": true, "freq_shift": 0})",
    R"({"_class_name": "FluxTransformer2DModel", "axes_dims_rope": [16, 56, 56], "attention_head_dim": 128})",
    R"({"_class_name": "SD3Transformer2DModel", "sample_size": 128, "patch_size": 2, "pos_embed_max_size": 192, "joint_attention_dim": 4096, "num_attention_heads": 24, "attention_head_dim": 64})",
    R"({"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12, "rope_theta": 1000000.0, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})",
    R"({"_class_name": "UNet2DConditionModel", "block_out_channels": [1e999], "freq_shift": "x"})",
    R"({"model_type": 7})",
    "[]",
    "{"};

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  posenc::v1::ResolvePresetRequest request;
  if (rng() % 2 == 0 || !request.ParseFromArray(data, static_cast<int>(size))) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const auto pick = [&rng](const auto& list) {
    return list[rng() % std::size(list)];
  };
  switch (rng() % 6) {
    case 0: {
      const auto& presets = posenc::Presets();
      request.set_preset(presets[rng() % presets.size()].name);
      break;
    }
    case 1:
    case 2:
      (*request.mutable_arguments())[std::string(pick(kArgumentNames))] =
          pick(kValues);
      break;
    case 3:
      if (!request.arguments().empty() && rng() % 2 == 0) {
        const std::string first = request.arguments().begin()->first;
        request.mutable_arguments()->erase(first);
      } else {
        request.set_config_json(pick(kConfigs));
      }
      break;
    case 4: {
      std::string json = request.config_json();
      const size_t room = json.size() + 64;
      json.resize(room);
      json.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(json.data()),
                                   request.config_json().size(), room));
      request.set_config_json(json);
      break;
    }
    default:
      request.set_dtype(static_cast<posenc::v1::DType>(rng() % 6));
      break;
  }
  const std::string out = request.SerializeAsString();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(out.begin(), out.end(), data);
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  posenc::v1::ResolvePresetRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const posenc::SpecLimits limits;
  const absl::StatusOr<posenc::v1::ResolvePresetResponse> answer =
      posenc::ResolvePresetRequest(request, limits);
  if (!answer.ok()) {
    if (answer.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("status " + answer.status().ToString(), request);
    }
    if (answer.status().message().empty()) Fail("no message", request);
    return 0;
  }
  if (answer->has_table()) {
    const absl::StatusOr<posenc::TableSpec> spec =
        posenc::SpecFromProto(answer->table());
    if (!spec.ok()) {
      Fail("the answer's table does not convert: " + spec.status().ToString(),
           request);
    }
    if (absl::Status valid = posenc::ValidateSpec(*spec, limits); !valid.ok()) {
      Fail("the answer's table is refused: " + valid.ToString(), request);
    }
  } else if (answer->has_encoding()) {
    const auto encoding = posenc::EncodingSpecFromProto(answer->encoding());
    if (!encoding.ok()) {
      Fail("the answer's encoding does not convert: " +
               encoding.status().ToString(),
           request);
    }
    if (absl::Status valid = posenc::ValidateEncodingSpec(*encoding, limits);
        !valid.ok()) {
      Fail("the answer's encoding is refused: " + valid.ToString(), request);
    }
  } else {
    Fail("OK without a spec", request);
  }
  const absl::StatusOr<posenc::v1::ResolvePresetResponse> again =
      posenc::ResolvePresetRequest(request, limits);
  if (!again.ok() ||
      again->SerializeAsString() != answer->SerializeAsString()) {
    Fail("the same request resolved differently", request);
  }
  return 0;
}
