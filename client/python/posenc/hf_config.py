"""TableSpecs of Hugging Face models' RoPE tables, from their config.json.

    spec = posenc.spec_from_hf_config("Meta-Llama-3.1-8B/config.json")
    table = client.table(spec)          # (max_len, 2 * d_rot), rotate_half
    cos, sin = table[:, :64], table[:, 64:]

Follows transformers' src/transformers/modeling_rope_utils.py (4.4x-4.5x,
and v5's `rope_parameters`):

- base: `rope_theta` (in the config, or in `rope_parameters`); 10000 when
  absent.
- d: `qk_rope_head_dim` (DeepSeek-V2/V3, whose HF config classes set
  head_dim to it), else `head_dim`, else hidden_size // num_attention_heads.
  The rotary
  dimension is int(d * partial_rotary_factor) as in HF; the spec carries d and
  partial_rotary_factor (unset when 1).
- max_len: `max_position_embeddings` unless max_len= is given.
- rope: `rope_scaling` or `rope_parameters`; scheme from `rope_type`, else
  the legacy `type` ("su" -> "longrope", as HF maps it); "default" (or no
  dict) -> no scaling. Per scheme, only the keys HF reads are taken:
    linear    factor
    dynamic   factor; M = original_max_position_embeddings if the dict has
              it, else the config's max_position_embeddings (HF's M).
    yarn      factor, beta_fast, beta_slow, mscale, mscale_all_dim,
              truncate, attention_factor; M = the dict's
              original_max_position_embeddings, else the config's
              max_position_embeddings. When the dict gives M, HF sets
              factor = max_position_embeddings / M (DeepSeek-V3); choice:
              we do the same only when that ratio is > 1, and keep the
              dict's factor otherwise (Qwen2.5's documented YaRN config
              leaves max_position_embeddings = M = 32768 with factor 4, where
              HF's ratio would be 1, i.e. no scaling).
    llama3    factor, low_freq_factor, high_freq_factor,
              original_max_position_embeddings.
    longrope  short_factor, long_factor, attention_factor; as
              transformers v5: M = the config's top-level
              original_max_position_embeddings (Phi-3's config.json), else
              the dict's (HF's current layout), else
              max_position_embeddings; factor = the dict's factor, else
              max_position_embeddings / M (32 for Phi-3-mini-128k, whose
              default attention factor is then sqrt(1 + ln 32 / ln 4096)
              = 1.1902...). factor only sets the default attention factor.
              (transformers 4 read only the top-level M, and with it took
              the ratio even over an explicit factor.)
- seq_len (dynamic: L; longrope: long_factor when seq_len > M) is unset
  unless seq_len= is given, as HF's tables at initialisation. HF switches a
  longrope model to long_factor once a sequence is longer than M: pass
  seq_len=<your sequence length> for that table.

Unknown rope types raise ValueError, as do an odd (or < 2) rotary dimension
and LongRoPE lists whose length is not d_rot / 2. The server checks the rest
and answers INVALID_ARGUMENT naming the field.
"""

import functools
import json
import os
from typing import Any, Mapping, Optional, Union

from posenc.spec import RopeScaling, TableSpec

_TYPE_ALIASES = {"su": "longrope"}
_KNOWN_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")


def _ill_typed_is_value_error(read):
    """`read` raising ValueError, as documented, for a config whose settings
    have the wrong JSON type or an impossible value (a string or a list
    where a number goes, a zero head count, an infinite size): Python's own
    TypeError, ZeroDivisionError, OverflowError or AttributeError deep in
    the arithmetic would otherwise escape (found by
    tests/test_hostile_inputs.py)."""
    @functools.wraps(read)
    def checked(*args, **kwargs):
        try:
            return read(*args, **kwargs)
        except (TypeError, ZeroDivisionError, OverflowError,
                AttributeError) as error:
            raise ValueError(f"config.json: an ill-typed or impossible "
                             f"setting: {error}") from None
    return checked


def _load(config: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> dict:
    if isinstance(config, Mapping):
        return dict(config)
    with open(config, encoding="utf-8") as f:
        loaded = json.load(f)
    if not isinstance(loaded, dict):
        raise ValueError(f"{config}: config.json must hold a JSON object")
    return loaded


def _rope_type(scaling: Mapping[str, Any]) -> str:
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    rope_type = _TYPE_ALIASES.get(rope_type, rope_type)
    if rope_type not in _KNOWN_TYPES:
        raise ValueError(
            f"rope_scaling: unknown rope type {rope_type!r}; posenc knows "
            f"{', '.join(_KNOWN_TYPES)} (and 'su' = 'longrope')")
    return rope_type


def _float(scaling: Mapping[str, Any], key: str) -> float:
    value = scaling.get(key)
    return 0.0 if value is None else float(value)


def _int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or int(value) != value:
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return int(value)


@_ill_typed_is_value_error
def rope_scaling_from_hf(config: Mapping[str, Any],
                         seq_len: Optional[int] = None
                         ) -> Optional[RopeScaling]:
    """The RopeScaling of an HF config dict (None: no scaling)."""
    scaling = config.get("rope_scaling") or config.get("rope_parameters")
    if not scaling:
        return None
    if not isinstance(scaling, Mapping):
        raise ValueError("rope_scaling must be a JSON object, got "
                         f"{scaling!r}")
    rope_type = _rope_type(scaling)
    max_pos = config.get("max_position_embeddings")
    seq = _int(seq_len, "seq_len")
    if rope_type == "default":
        return None
    if rope_type == "linear":
        return RopeScaling(type="linear", factor=_float(scaling, "factor"))
    if rope_type == "dynamic":
        m = scaling.get("original_max_position_embeddings", max_pos)
        return RopeScaling(
            type="dynamic", factor=_float(scaling, "factor"),
            original_max_position_embeddings=_int(
                m, "original_max_position_embeddings"),
            seq_len=seq)
    if rope_type == "yarn":
        factor = _float(scaling, "factor")
        if scaling.get("original_max_position_embeddings") is not None:
            m = scaling["original_max_position_embeddings"]
            if max_pos and max_pos / m > 1:
                factor = float(max_pos / m)
        else:
            m = max_pos
        truncate = scaling.get("truncate")
        return RopeScaling(
            type="yarn", factor=factor,
            original_max_position_embeddings=_int(
                m, "original_max_position_embeddings"),
            beta_fast=_float(scaling, "beta_fast"),
            beta_slow=_float(scaling, "beta_slow"),
            mscale=_float(scaling, "mscale"),
            mscale_all_dim=_float(scaling, "mscale_all_dim"),
            truncate=None if truncate is None else bool(truncate),
            attention_factor=_float(scaling, "attention_factor"))
    if rope_type == "llama3":
        return RopeScaling(
            type="llama3", factor=_float(scaling, "factor"),
            original_max_position_embeddings=_int(
                scaling.get("original_max_position_embeddings"),
                "original_max_position_embeddings"),
            low_freq_factor=_float(scaling, "low_freq_factor"),
            high_freq_factor=_float(scaling, "high_freq_factor"))
    # longrope, as transformers v5 (standardize_rope_params, then
    # _compute_longrope_parameters): M from the top level (Phi-3's
    # config.json), else from the dict (the current layout), else
    # max_position_embeddings; factor from the dict, else
    # max_position_embeddings / M.
    m = config.get("original_max_position_embeddings")
    if m is None:
        m = scaling.get("original_max_position_embeddings")
    if m is None:
        m = max_pos
    if scaling.get("factor") is not None:
        factor = _float(scaling, "factor")
    elif max_pos and m:
        factor = max_pos / m
    else:
        factor = 0.0
    return RopeScaling(
        type="longrope", factor=factor,
        original_max_position_embeddings=_int(
            m, "original_max_position_embeddings"),
        seq_len=seq,
        attention_factor=_float(scaling, "attention_factor"),
        short_factor=tuple(float(x) for x in scaling.get("short_factor")
                           or ()),
        long_factor=tuple(float(x) for x in scaling.get("long_factor") or ()))


@_ill_typed_is_value_error
def spec_from_hf_config(config: Union[str, "os.PathLike[str]",
                                      Mapping[str, Any]],
                        *, max_len: Optional[int] = None,
                        dtype: str = "float32",
                        layout: str = "rotate_half",
                        seq_len: Optional[int] = None) -> TableSpec:
    """The TableSpec of a model's RoPE table, from its config.json.

    config: a path to config.json or its parsed dict. max_len defaults to
    max_position_embeddings. layout "rotate_half" (HF, the default) or
    "interleaved_pairs" (GPT-J), or any other layout. seq_len: see the
    module docstring. Rows are [cos | sin] of width 2 * d_rot for the RoPE
    layouts.
    """
    config = _load(config)
    params = config.get("rope_parameters")
    params = params if isinstance(params, Mapping) else {}
    base = config.get("rope_theta", params.get("rope_theta", 10000.0))
    # DeepSeek-V2/V3 (multi-head latent attention) rotate only
    # qk_rope_head_dim channels of each head; their HF config classes set
    # head_dim to it, but their config.json files carry no head_dim.
    head_dim = config.get("qk_rope_head_dim", config.get("head_dim"))
    if head_dim is None:
        try:
            head_dim = (config["hidden_size"]
                        // config["num_attention_heads"])
        except KeyError as missing:
            raise ValueError(f"config needs head_dim, or hidden_size and "
                             f"num_attention_heads: no {missing}") from None
    head_dim = _int(head_dim, "head_dim")
    prf = config.get("partial_rotary_factor",
                     params.get("partial_rotary_factor", 1.0))
    prf = float(prf)
    d_rot = int(head_dim * prf)
    if d_rot < 2 or d_rot % 2:
        raise ValueError(
            f"rotary dimension int(head_dim * partial_rotary_factor) = "
            f"int({head_dim} * {prf}) = {d_rot} must be even and >= 2")
    rope = rope_scaling_from_hf(config, seq_len=seq_len)
    if rope is not None and rope.type == "longrope":
        for name in ("short_factor", "long_factor"):
            values = getattr(rope, name)
            if len(values) != d_rot // 2:
                raise ValueError(
                    f"rope_scaling.{name} has {len(values)} values; "
                    f"longrope needs d_rot / 2 = {d_rot // 2}")
    if max_len is None:
        max_len = config.get("max_position_embeddings")
        if max_len is None:
            raise ValueError("config has no max_position_embeddings: "
                             "pass max_len=")
    return TableSpec(d=head_dim, max_len=_int(max_len, "max_len"),
                     base=float(base), dtype=dtype, layout=layout,
                     frequency="paper", rope=rope,
                     partial_rotary_factor=0.0 if prf == 1 else prf)
