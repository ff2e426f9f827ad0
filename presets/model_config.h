// Model configs users already have, read into a preset call
// (presets/presets.h): a diffusers `unet/config.json` or
// `transformer/config.json` (`_class_name`), or a Hugging Face config.json
// (`model_type`). Each class maps to the presets of the sinusoidal
// encodings its model builds, with the arguments its constructor passes;
// the first listed is the default when the request names no preset.
//
//   UNet2DConditionModel (time_embedding_type "positional", the default)
//     diffusers.Timesteps: num_channels = block_out_channels[0],
//       flip_sin_to_cos (default true), downscale_freq_shift = freq_shift
//       (default 0)
//   FluxTransformer2DModel, SD3Transformer2DModel (their
//   CombinedTimestep...TextProjEmbeddings)
//     diffusers.Timesteps: num_channels 256, flip_sin_to_cos true,
//       downscale_freq_shift 0
//
// Pure function; parses with protobuf's JSON parser (google.protobuf.Struct).
#ifndef POSENC_PRESETS_MODEL_CONFIG_H_
#define POSENC_PRESETS_MODEL_CONFIG_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace posenc {

inline constexpr size_t kMaxModelConfigBytes = 64 * 1024;

struct ModelConfigCall {
  // The preset: the one asked for, or the class's default.
  std::string preset;
  // The arguments the config gives, as PresetArguments text.
  std::map<std::string, std::string> arguments;
};

// INVALID_ARGUMENT naming config_json: larger than kMaxModelConfigBytes,
// not a JSON object, no `_class_name` / `model_type` this reader knows, a
// preset the class does not build (listing those it does), or a setting
// of the wrong type.
absl::StatusOr<ModelConfigCall> ReadModelConfig(absl::string_view config_json,
                                                absl::string_view preset);

}  // namespace posenc

#endif  // POSENC_PRESETS_MODEL_CONFIG_H_
