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
//               as transformers v5: M = the config's top-level
//               original_max_position_embeddings (Phi-3's config.json),
//               else rope_scaling's (HF's current layout), else
//               max_position_embeddings; factor = rope_scaling's factor,
//               else max_position_embeddings / M (32 for Phi-3-mini-128k:
//               131072 / 4096, so the default attention factor is
//               sqrt(1 + ln 32 / ln 4096) = 1.1902...). (transformers 4
//               read only the top-level M, and with it took the ratio
//               even over an explicit factor.)
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
#include "core/spec/table_spec.h"

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
