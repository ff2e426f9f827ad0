// The RoPE table of a Hugging Face model, read from its config.json: the
// settings transformers' modeling_rope_utils.py reads, mapped to a TableSpec.
//
//   rope_theta                       -> base (default 10000)
//   qk_rope_head_dim (DeepSeek-V2/V3), else head_dim, else
//   hidden_size / num_attention_heads, times
//   partial_rotary_factor (int(), as HF)  -> d, the rotary dimension
//   max_position_embeddings          -> max_len (unless given)
//   rope_scaling (or rope_parameters) with rope_type (or legacy type):
//     linear:   factor
//     dynamic:  factor; M = its original_max_position_embeddings, else
//               max_position_embeddings
//     yarn:     factor, beta_fast, beta_slow, mscale, mscale_all_dim,
//               truncate, attention_factor; M = its
//               original_max_position_embeddings (then, as HF, factor =
//               max_position_embeddings / M when that is above 1), else
//               max_position_embeddings
//     llama3:   factor, low_freq_factor, high_freq_factor,
//               original_max_position_embeddings
//     longrope (or "su"): short_factor, long_factor, attention_factor;
//               M = the config's original_max_position_embeddings with
//               factor = max_position_embeddings / M (Phi-3), else
//               M = rope_scaling's original_max_position_embeddings or
//               max_position_embeddings, and rope_scaling's factor
//   seq_len (dynamic: L; longrope: long_factor when seq_len > M): given,
//   else unset, as HF's tables at initialisation; pass the sequence length
//   (e.g. --seq-len 131072) for the table HF switches to on long inputs.
// The same rules as the Python client's posenc.hf_config.
//
// Pure function; uses protobuf's JSON parser (google.protobuf.Struct).
#ifndef POSENC_CLIENT_HF_CONFIG_H_
#define POSENC_CLIENT_HF_CONFIG_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/table_spec.h"

namespace posenc {

struct HfConfigOptions {
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kRotateHalf;  // HF's own cos/sin layout
  std::optional<uint32_t> max_len;      // unset: max_position_embeddings
  std::optional<uint32_t> seq_len;      // unset: max_len
};

// INVALID_ARGUMENT naming the config key for malformed JSON, a missing or
// ill-typed setting, or an unknown rope_type. The spec is not validated
// against server limits (the server does that).
absl::StatusOr<TableSpec> SpecFromHfConfig(absl::string_view json,
                                           const HfConfigOptions& options);

}  // namespace posenc

#endif  // POSENC_CLIENT_HF_CONFIG_H_
