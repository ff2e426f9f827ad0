#include "client/hf_config.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/numerics/shortest_double.h"

namespace posenc {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* Find(const Struct& s, const char* key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.has_null_value()) return nullptr;
  return &it->second;
}

absl::StatusOr<double> Number(const Struct& s, const char* key,
                              const std::string& where) {
  const Value* v = Find(s, key);
  if (v == nullptr || !v->has_number_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, key, " must be a number in config.json"));
  }
  return v->number_value();
}

double NumberOr(const Struct& s, const char* key, double fallback) {
  const Value* v = Find(s, key);
  return v != nullptr && v->has_number_value() ? v->number_value() : fallback;
}

absl::StatusOr<uint32_t> Count(const Struct& s, const char* key,
                               const std::string& where) {
  absl::StatusOr<double> v = Number(s, key, where);
  if (!v.ok()) return v.status();
  if (!(*v >= 0 && *v <= 4294967295.0) || std::floor(*v) != *v) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, key, " must be a non-negative integer, got ",
                     ShortestDouble(*v)));
  }
  return static_cast<uint32_t>(*v);
}

// Count when `key` is present (any value but null), else `fallback`.
absl::StatusOr<uint32_t> CountOr(const Struct& s, const char* key,
                                 uint32_t fallback, const std::string& where) {
  if (Find(s, key) == nullptr) return fallback;
  return Count(s, key, where);
}

absl::StatusOr<std::vector<double>> List(const Struct& s, const char* key) {
  const Value* v = Find(s, key);
  if (v == nullptr || !v->has_list_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rope_scaling.", key, " must be a list of numbers in config.json"));
  }
  std::vector<double> out;
  for (const Value& e : v->list_value().values()) {
    if (!e.has_number_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rope_scaling.", key, " must be a list of numbers in config.json"));
    }
    out.push_back(e.number_value());
  }
  return out;
}

}  // namespace

absl::StatusOr<TableSpec> SpecFromHfConfig(absl::string_view json,
                                           const HfConfigOptions& options) {
  Struct config;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;
  if (auto s = google::protobuf::util::JsonStringToMessage(std::string(json),
                                                           &config, parse);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json is not valid JSON: ", s.ToString()));
  }
  // transformers v5 moves rope_theta and the scaling into rope_parameters.
  const Value* params = Find(config, "rope_parameters");
  const Value* scaling =
      params != nullptr ? params : Find(config, "rope_scaling");
  if (scaling != nullptr && !scaling->has_struct_value()) {
    return absl::InvalidArgumentError(
        "rope_scaling must be an object (or null) in config.json");
  }
  TableSpec spec;
  spec.dtype = options.dtype;
  spec.layout = options.layout;
  spec.base = NumberOr(config, "rope_theta", kDefaultBase);
  if (scaling != nullptr) {
    spec.base = NumberOr(scaling->struct_value(), "rope_theta", spec.base);
  }
  // DeepSeek-V2/V3 (multi-head latent attention) rotate only
  // qk_rope_head_dim channels of each head; their HF config classes set
  // head_dim to it, but their config.json files carry no head_dim.
  const char* head_key = Find(config, "qk_rope_head_dim") != nullptr
                             ? "qk_rope_head_dim"
                             : "head_dim";
  uint32_t head_dim = 0;
  if (Find(config, head_key) != nullptr) {
    absl::StatusOr<uint32_t> h = Count(config, head_key, "");
    if (!h.ok()) return h.status();
    head_dim = *h;
  } else {
    absl::StatusOr<uint32_t> hidden = Count(config, "hidden_size", "");
    if (!hidden.ok()) return hidden.status();
    absl::StatusOr<uint32_t> heads = Count(config, "num_attention_heads", "");
    if (!heads.ok()) return heads.status();
    if (*heads == 0) {
      return absl::InvalidArgumentError(
          "num_attention_heads must be > 0 in config.json");
    }
    head_dim = *hidden / *heads;
  }
  // transformers v5 may carry partial_rotary_factor in rope_parameters.
  const double prf = NumberOr(
      config, "partial_rotary_factor",
      params != nullptr && params->has_struct_value()
          ? NumberOr(params->struct_value(), "partial_rotary_factor", 1.0)
          : 1.0);
  // As the server's spec.partial_rotary_factor (0 < f <= 1), so that the
  // product below fits (a negative one was undefined behaviour:
  // fuzz_hf_config).
  if (!(prf > 0 && prf <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("partial_rotary_factor must be in (0, 1] in "
                     "config.json, got ",
                     ShortestDouble(prf)));
  }
  spec.d = static_cast<uint32_t>(head_dim * prf);  // int(), as HF
  absl::StatusOr<uint32_t> mpe = Count(config, "max_position_embeddings", "");
  if (!mpe.ok()) return mpe.status();
  spec.max_len = options.max_len.value_or(*mpe);
  if (scaling == nullptr) return spec;

  const Struct& r = scaling->struct_value();
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    if (const Value* v = Find(r, key); v != nullptr && v->has_string_value()) {
      type = v->string_value();
      break;
    }
  }
  auto rope = std::make_shared<RopeScaling>();
  const std::string where = "rope_scaling.";
  if (type.empty() || type == "default") return spec;
  if (type == "linear" || type == "dynamic") {
    rope->type = type == "linear" ? RopeType::kLinear : RopeType::kDynamic;
    absl::StatusOr<double> factor = Number(r, "factor", where);
    if (!factor.ok()) return factor.status();
    rope->factor = *factor;
    if (rope->type == RopeType::kDynamic) {
      absl::StatusOr<uint32_t> m =
          CountOr(r, "original_max_position_embeddings", *mpe, where);
      if (!m.ok()) return m.status();
      rope->original_max_position_embeddings = *m;
      rope->seq_len = options.seq_len.value_or(0);
    }
  } else if (type == "yarn") {
    rope->type = RopeType::kYarn;
    absl::StatusOr<double> factor = Number(r, "factor", where);
    if (!factor.ok()) return factor.status();
    rope->factor = *factor;
    absl::StatusOr<uint32_t> m =
        CountOr(r, "original_max_position_embeddings", *mpe, where);
    if (!m.ok()) return m.status();
    rope->original_max_position_embeddings = *m;
    // HF: with original_max_position_embeddings in rope_scaling, factor =
    // max_position_embeddings / it (DeepSeek-V3). Taken only when above 1,
    // as posenc.hf_config does: Qwen2.5's documented YaRN config keeps
    // max_position_embeddings = M with factor 4, where HF's ratio would
    // switch the scaling off.
    if (Find(r, "original_max_position_embeddings") != nullptr &&
        rope->original_max_position_embeddings > 0) {
      const double ratio =
          static_cast<double>(*mpe) / rope->original_max_position_embeddings;
      if (ratio > 1) rope->factor = ratio;
    }
    rope->beta_fast = NumberOr(r, "beta_fast", 0);
    rope->beta_slow = NumberOr(r, "beta_slow", 0);
    rope->mscale = NumberOr(r, "mscale", 0);
    rope->mscale_all_dim = NumberOr(r, "mscale_all_dim", 0);
    rope->attention_factor = NumberOr(r, "attention_factor", 0);
    if (const Value* t = Find(r, "truncate"); t != nullptr) {
      if (!t->has_bool_value()) {
        return absl::InvalidArgumentError(
            "rope_scaling.truncate must be true or false in config.json");
      }
      rope->truncate = t->bool_value();
    }
  } else if (type == "llama3") {
    rope->type = RopeType::kLlama3;
    for (auto [key, out] :
         {std::pair<const char*, double*>{"factor", &rope->factor},
          {"low_freq_factor", &rope->low_freq_factor},
          {"high_freq_factor", &rope->high_freq_factor}}) {
      absl::StatusOr<double> v = Number(r, key, where);
      if (!v.ok()) return v.status();
      *out = *v;
    }
    absl::StatusOr<uint32_t> m =
        Count(r, "original_max_position_embeddings", where);
    if (!m.ok()) return m.status();
    rope->original_max_position_embeddings = *m;
  } else if (type == "longrope" || type == "su") {
    rope->type = RopeType::kLongRope;
    absl::StatusOr<std::vector<double>> short_factor = List(r, "short_factor");
    if (!short_factor.ok()) return short_factor.status();
    absl::StatusOr<std::vector<double>> long_factor = List(r, "long_factor");
    if (!long_factor.ok()) return long_factor.status();
    rope->short_factor = *std::move(short_factor);
    rope->long_factor = *std::move(long_factor);
    rope->attention_factor = NumberOr(r, "attention_factor", 0);
    // As HF's _compute_longrope_parameters (transformers v5) after
    // standardize_rope_params: M is the config's top-level
    // original_max_position_embeddings (Phi-3's layout), else the dict's
    // (the current layout), else max_position_embeddings; factor is the
    // dict's, else max_position_embeddings / M.
    const bool top_level =
        Find(config, "original_max_position_embeddings") != nullptr;
    if (top_level || Find(r, "original_max_position_embeddings") != nullptr) {
      absl::StatusOr<uint32_t> m =
          top_level ? Count(config, "original_max_position_embeddings", "")
                    : Count(r, "original_max_position_embeddings", where);
      if (!m.ok()) return m.status();
      rope->original_max_position_embeddings = *m;
    } else {
      rope->original_max_position_embeddings = *mpe;
    }
    if (Find(r, "factor") != nullptr) {
      absl::StatusOr<double> factor = Number(r, "factor", where);
      if (!factor.ok()) return factor.status();
      rope->factor = *factor;
    } else if (rope->original_max_position_embeddings != 0) {
      rope->factor =
          static_cast<double>(*mpe) / rope->original_max_position_embeddings;
    }
    rope->seq_len = options.seq_len.value_or(0);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "rope_scaling.rope_type '", type,
        "' is not one posenc serves (default, linear, dynamic, yarn, llama3, "
        "longrope)"));
  }
  spec.rope = std::move(rope);
  return spec;
}

}  // namespace posenc
