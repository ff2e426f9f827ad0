"""TableSpec names one positional-encoding table; EncodingSpec one encoding
of real-valued points (Encode)."""

import dataclasses
import decimal
import math
import struct
from typing import Optional, Sequence

from posenc.v1 import posenc_pb2

_DTYPES = {
    "float32": posenc_pb2.DTYPE_FLOAT32,
    "float64": posenc_pb2.DTYPE_FLOAT64,
    "float16": posenc_pb2.DTYPE_FLOAT16,
    "bfloat16": posenc_pb2.DTYPE_BFLOAT16,
}
_LAYOUTS = {
    "interleaved": posenc_pb2.LAYOUT_INTERLEAVED,
    "concat_sin_cos": posenc_pb2.LAYOUT_CONCAT_SIN_COS,
    "concat_cos_sin": posenc_pb2.LAYOUT_CONCAT_COS_SIN,
    "rotate_half": posenc_pb2.LAYOUT_ROTATE_HALF,
    "interleaved_pairs": posenc_pb2.LAYOUT_INTERLEAVED_PAIRS,
    "rotation_matrix": posenc_pb2.LAYOUT_ROTATION_MATRIX,
}
_FREQUENCIES = {
    "paper": posenc_pb2.FREQUENCY_PAPER,
    "t2t": posenc_pb2.FREQUENCY_T2T,
}
_FREQUENCY_SCHEMES = {
    "exponential": posenc_pb2.FREQUENCY_SCHEME_EXPONENTIAL,
    "octaves": posenc_pb2.FREQUENCY_SCHEME_OCTAVES,
}
_ROPE_TYPES = {
    "default": posenc_pb2.ROPE_TYPE_DEFAULT,
    "linear": posenc_pb2.ROPE_TYPE_LINEAR,
    "dynamic": posenc_pb2.ROPE_TYPE_DYNAMIC,
    "yarn": posenc_pb2.ROPE_TYPE_YARN,
    "llama3": posenc_pb2.ROPE_TYPE_LLAMA3,
    "longrope": posenc_pb2.ROPE_TYPE_LONGROPE,
}


def _lookup(table: dict, field: str, value: str) -> int:
    try:
        return table[value]
    except KeyError:
        raise ValueError(
            f"{field} must be one of {sorted(table)}, got {value!r}") from None


@dataclasses.dataclass(frozen=True)
class RopeScaling:
    """RoPE frequency scaling, named as HF transformers' `rope_scaling`.

    type is None (unset: "default"), "default", "linear", "dynamic", "yarn",
    "llama3" or "longrope". 0 / None / () means unset for every field (see
    posenc.proto, message RopeScaling, for which scheme uses which field).
    truncate None means unset (the server's default, true). The server checks
    the values and answers INVALID_ARGUMENT naming the field.
    """

    type: Optional[str] = None
    factor: float = 0.0
    original_max_position_embeddings: int = 0
    seq_len: int = 0
    beta_fast: float = 0.0
    beta_slow: float = 0.0
    mscale: float = 0.0
    mscale_all_dim: float = 0.0
    truncate: Optional[bool] = None
    attention_factor: float = 0.0
    low_freq_factor: float = 0.0
    high_freq_factor: float = 0.0
    short_factor: Sequence[float] = ()
    long_factor: Sequence[float] = ()

    def to_proto(self) -> posenc_pb2.RopeScaling:
        message = posenc_pb2.RopeScaling(
            type=(posenc_pb2.ROPE_TYPE_UNSPECIFIED if self.type is None
                  else _lookup(_ROPE_TYPES, "rope.type", self.type)),
            factor=self.factor,
            original_max_position_embeddings=(
                self.original_max_position_embeddings),
            seq_len=self.seq_len,
            beta_fast=self.beta_fast,
            beta_slow=self.beta_slow,
            mscale=self.mscale,
            mscale_all_dim=self.mscale_all_dim,
            attention_factor=self.attention_factor,
            low_freq_factor=self.low_freq_factor,
            high_freq_factor=self.high_freq_factor,
            short_factor=[float(x) for x in self.short_factor],
            long_factor=[float(x) for x in self.long_factor],
        )
        if self.truncate is not None:
            message.truncate = bool(self.truncate)
        return message


_GRID_SIN_COS = {
    "per_axis": posenc_pb2.GRID_SIN_COS_PER_AXIS,
    "grouped": posenc_pb2.GRID_SIN_COS_GROUPED,
}


@dataclasses.dataclass(frozen=True)
class GridAxis:
    """One axis of a GridSpec: `size` points k at the exact rational
    positions (first_index + k) * numerator / denominator (0 means 1), and
    a block of `channels` channels (frequencies base^(-2i / channels))."""

    size: int
    channels: int
    first_index: int = 0
    numerator: int = 0
    denominator: int = 0

    def to_proto(self) -> posenc_pb2.GridSpecAxis:
        return posenc_pb2.GridSpecAxis(
            size=self.size, channels=self.channels,
            first_index=self.first_index,
            position_numerator=self.numerator,
            position_denominator=self.denominator)


@dataclasses.dataclass(frozen=True)
class GridSpec:
    """A grid table's points (TableSpec.grid; docs/encodings.md "Grid
    tables"): axes in row order (the first varies slowest), channel_order
    the axes in the order of their blocks in a row (() means row order;
    MAE and diffusers (1, 0)), sin_cos "per_axis" (each block [sin | cos]
    by the table layout) or "grouped" (all blocks' first halves, then all
    second halves: timm's default), extra_zero_rows zero rows first (cls
    tokens)."""

    axes: Sequence[GridAxis]
    channel_order: Sequence[int] = ()
    sin_cos: str = "per_axis"
    extra_zero_rows: int = 0

    def to_proto(self) -> posenc_pb2.GridSpec:
        return posenc_pb2.GridSpec(
            axes=[a.to_proto() for a in self.axes],
            channel_order=list(self.channel_order),
            sin_cos=_lookup(_GRID_SIN_COS, "grid.sin_cos", self.sin_cos),
            extra_zero_rows=self.extra_zero_rows)

    def rows(self) -> int:
        """extra_zero_rows plus the product of the sizes."""
        return self.extra_zero_rows + math.prod(a.size for a in self.axes)

    def channels(self) -> int:
        return sum(a.channels for a in self.axes)


def mae_grid(embed_dim: int, grid_size: int,
             cls_token: bool = False) -> "TableSpec":
    """MAE's get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token)."""
    axis = GridAxis(size=grid_size, channels=embed_dim // 2)
    return TableSpec(d=embed_dim, layout="concat_sin_cos",
                     grid=GridSpec(axes=(axis, axis), channel_order=(1, 0),
                                   extra_zero_rows=1 if cls_token else 0))


def diffusers_grid(embed_dim: int, grid_size, base_size: int = 16,
                   interpolation_scale: "Fraction | int" = 1,
                   cls_token: bool = False, extra_tokens: int = 0,
                   pos_embed_max_size: int = 0) -> "TableSpec":
    """diffusers' get_2d_sincos_pos_embed, positions as exact rationals
    k * base_size / (n * interpolation_scale) (interpolation_scale an int or
    fractions.Fraction); with pos_embed_max_size M, SD3's PatchEmbed crop:
    the M x M table's centre grid_size rows and columns, positions
    (first + k) * base_size / (M * interpolation_scale)."""
    from fractions import Fraction
    gh, gw = ((grid_size, grid_size) if isinstance(grid_size, int)
              else tuple(grid_size))
    scale = Fraction(interpolation_scale)
    axes = []
    for n in (gh, gw):
        if pos_embed_max_size:
            step = Fraction(base_size) / (pos_embed_max_size * scale)
            first = (pos_embed_max_size - n) // 2
        else:
            step = Fraction(base_size) / (n * scale)
            first = 0
        axes.append(GridAxis(size=n, channels=embed_dim // 2,
                             first_index=first, numerator=step.numerator,
                             denominator=step.denominator))
    extra = extra_tokens if cls_token else 0
    return TableSpec(d=embed_dim, layout="concat_sin_cos",
                     grid=GridSpec(axes=tuple(axes), channel_order=(1, 0),
                                   extra_zero_rows=extra))


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """A table: rows 0..max_len-1 of `width` channels each.

    base=0 means the server default (10000). dtype is "float32", "float64",
    "float16" or "bfloat16"; layout "interleaved", "concat_sin_cos",
    "concat_cos_sin", or the RoPE layouts "rotate_half" (HF) and
    "interleaved_pairs" (GPT-J); frequency "paper" or "t2t". rope is a
    RopeScaling (None: plain sinusoid); partial_rotary_factor 0 means 1.
    grid is a GridSpec (None: positions 0..max_len-1): a grid table of the
    grid's rows, d the sum of its channels, max_len 0 (the grid's rows).
    Values are checked by the server, which answers INVALID_ARGUMENT
    (raised as PosencError).

    Row width: d, or d_rot = int(d * partial_rotary_factor) when that is
    set; twice that for "rotate_half" and "interleaved_pairs" (cos in the
    first half of the row, sin in the second). Arrays come back in the shape
    the server sends; see width().
    """

    d: int
    max_len: int = 0
    base: float = 0.0
    dtype: str = "float32"
    layout: str = "interleaved"
    frequency: str = "paper"
    rope: Optional[RopeScaling] = None
    partial_rotary_factor: float = 0.0
    grid: Optional[GridSpec] = None

    def to_proto(self) -> posenc_pb2.TableSpec:
        message = posenc_pb2.TableSpec(
            d=self.d,
            base=self.base,
            max_len=self.max_len,
            dtype=_lookup(_DTYPES, "dtype", self.dtype),
            layout=_lookup(_LAYOUTS, "layout", self.layout),
            frequency=_lookup(_FREQUENCIES, "frequency", self.frequency),
            partial_rotary_factor=self.partial_rotary_factor,
        )
        if self.rope is not None:
            message.rope.CopyFrom(self.rope.to_proto())
        if self.grid is not None:
            message.grid.CopyFrom(self.grid.to_proto())
        return message

    def rows(self) -> int:
        """Rows of the table: max_len, or a grid's rows when unset."""
        if self.grid is not None and not self.max_len:
            return self.grid.rows()
        return self.max_len

    def width(self) -> int:
        """Channels per row the server returns for this (valid) spec."""
        d = self.d
        if self.partial_rotary_factor:
            d = int(self.d * self.partial_rotary_factor)
        return 2 * d if self.layout in ("rotate_half",
                                        "interleaved_pairs") else d

    def routing_key(self) -> str:
        """The x-posenc-table key this spec's calls carry (routing_key)."""
        return routing_key(self.to_proto())


@dataclasses.dataclass(frozen=True)
class EncodingSpec:
    """An encoding of real-valued points (Encode): diffusion timesteps,
    flow-matching times, NeRF coordinates. Fields as the proto's
    EncodingSpec; 0 / False means unset (the server's default).

    frequency is "exponential" (default: f_i = max_period^(-i / (half -
    shift)), half = dim // 2; max_period 0 means 10000) or "octaves"
    (f_k = 2 pi 2^(e_k), e_k = linspace(min_freq_exp, max_freq_exp,
    num_frequencies)). scale 0 means 1; coordinates 0 means 1. dtype and
    layout as in TableSpec ("interleaved", "concat_sin_cos" or
    "concat_cos_sin"). Values are checked by the server, which answers
    INVALID_ARGUMENT naming the field (raised as PosencError).

    Row width: 2 * coordinates * half, plus 1 with pad_odd_dim, plus
    coordinates with include_input; see width().

    Multi-axis RoPE (docs/encodings.md "Multi-axis RoPE"): axes_dim (FLUX
    EmbedND's axes_dim, e.g. (16, 56, 56)) or mrope_section (Qwen2-VL's,
    e.g. (16, 24, 24), with dim = head_dim; mrope_interleaved for
    Qwen3-VL). A point is then one id per axis (coordinates 0 means the
    number of axes); layout may also be "rotate_half", "interleaved_pairs"
    or "rotation_matrix" (FLUX: shape (points, K, 2, 2)). K pairs: width
    2K, or 4K for those three layouts.
    """

    dim: int = 0
    dtype: str = "float32"
    layout: str = "interleaved"
    frequency: str = "exponential"
    max_period: float = 0.0
    shift: float = 0.0
    scale: float = 0.0
    pad_odd_dim: bool = False
    num_frequencies: int = 0
    min_freq_exp: float = 0.0
    max_freq_exp: float = 0.0
    coordinates: int = 0
    include_input: bool = False
    axes_dim: Sequence[int] = ()
    mrope_section: Sequence[int] = ()
    mrope_interleaved: bool = False

    def to_proto(self) -> posenc_pb2.EncodingSpec:
        return posenc_pb2.EncodingSpec(
            dim=self.dim,
            dtype=_lookup(_DTYPES, "dtype", self.dtype),
            layout=_lookup(_LAYOUTS, "layout", self.layout),
            frequency=_lookup(_FREQUENCY_SCHEMES, "frequency",
                              self.frequency),
            max_period=self.max_period,
            shift=self.shift,
            scale=self.scale,
            pad_odd_dim=self.pad_odd_dim,
            num_frequencies=self.num_frequencies,
            min_freq_exp=self.min_freq_exp,
            max_freq_exp=self.max_freq_exp,
            coordinates=self.coordinates,
            include_input=self.include_input,
            axes_dim=list(self.axes_dim),
            mrope_section=list(self.mrope_section),
            mrope_interleaved=self.mrope_interleaved,
        )

    def pairs(self) -> int:
        """Rotary pairs K of a multi-axis spec (0 for a plain one)."""
        if self.axes_dim:
            return sum(self.axes_dim) // 2
        return self.dim // 2 if self.mrope_section else 0

    def width(self) -> int:
        """Channels per row the server returns for this (valid) spec."""
        if self.axes_dim or self.mrope_section:
            wide = self.layout in ("rotate_half", "interleaved_pairs",
                                   "rotation_matrix")
            return (4 if wide else 2) * self.pairs()
        coordinates = self.coordinates or 1
        half = (self.num_frequencies if self.frequency == "octaves"
                else self.dim // 2)
        return (2 * coordinates * half + (1 if self.pad_odd_dim else 0)
                + (coordinates if self.include_input else 0))


# The metadata key of the routing key (see routing_key).
ROUTING_KEY_HEADER = "x-posenc-table"

_DTYPE_NAMES = {0: "float32", 1: "float32", 2: "float64", 3: "float16",
                4: "bfloat16"}
_LAYOUT_NAMES = {0: "interleaved", 1: "interleaved", 2: "concat_sin_cos",
                 3: "concat_cos_sin", 4: "rotate_half",
                 5: "interleaved_pairs", 6: "rotation_matrix"}
_FREQUENCY_NAMES = {0: "paper", 1: "paper", 2: "t2t"}
_GRID_SIN_COS_NAMES = {0: "per_axis", 1: "per_axis", 2: "grouped"}
_ROPE_TYPE_NAMES = {0: "default", 1: "default", 2: "linear", 3: "dynamic",
                    4: "yarn", 5: "llama3", 6: "longrope"}
# RopeScaling's fields after `type`, in field-number order, and their kinds.
_ROPE_KEY_FIELDS = (
    ("factor", "double"), ("original_max_position_embeddings", "int"),
    ("seq_len", "int"), ("beta_fast", "double"), ("beta_slow", "double"),
    ("mscale", "double"), ("mscale_all_dim", "double"),
    ("truncate", "bool"), ("attention_factor", "double"),
    ("low_freq_factor", "double"), ("high_freq_factor", "double"),
    ("short_factor", "list"), ("long_factor", "list"),
)


def format_base(x: float) -> str:
    """x as JavaScript's String(x) writes it (ECMAScript Number::toString).

    The shortest round-trip digits (repr), in plain notation for decimal
    exponents -7 < n <= 21 and as d.ddde+NN / d.ddde-NN otherwise.
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + format_base(-x)
    if math.isinf(x):
        return "Infinity"
    _, digit_tuple, exponent = decimal.Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    # x = int(digits) * 10^exponent; drop trailing zeros.
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # x = 0.digits * 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    sign = "+" if n - 1 >= 0 else "-"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{sign}{abs(n - 1)}"


def fnv1a64_hex(values) -> str:
    """16 lowercase hex digits of the FNV-1a 64-bit hash of the values'
    little-endian float64 bytes (the routing key's short_factor and
    long_factor)."""
    data = b"".join(struct.pack("<d", float(v)) for v in values)
    return f"{_fnv1a64(data):016x}"


def _fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def _rope_key_suffix(rope: posenc_pb2.RopeScaling) -> str:
    parts = []
    for name, kind in _ROPE_KEY_FIELDS:
        if kind == "bool":
            if rope.HasField(name):
                parts.append(f";{name}={'true' if rope.truncate else 'false'}")
            continue
        value = getattr(rope, name)
        if kind == "list":
            if len(value):
                parts.append(f";{name}={fnv1a64_hex(value)}")
        elif value != 0:  # NaN is non-zero
            parts.append(f";{name}="
                         + (format_base(value) if kind == "double"
                            else str(value)))
    if rope.type == 0 and not parts:
        return ""
    return (f";rope={_ROPE_TYPE_NAMES.get(rope.type, str(rope.type))}"
            + "".join(parts))


def routing_key(spec: posenc_pb2.TableSpec) -> str:
    """The routing key of a TableSpec message, as every client sends it.

    d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>: every
    field but max_len, defaults resolved (base 0 -> 10000), base written by
    format_base, unknown enum values as numbers; a partial_rotary_factor in
    (0, 1] folded into d (d = int(d * factor), the rotary dimension), any
    other non-zero one appended as ";prf=<x>"; and ";rope=<type>" followed
    by each non-zero rope field (";<name>=<value>", field-number order;
    lists as fnv1a64_hex) when rope has any field set; a grid appends
    ";grid=...;order=...;sin_cos=...;extra=..." (_grid_key_suffix). See
    posenc.proto.
    """
    base = spec.base if spec.base != 0 else 10000.0
    # A partial_rotary_factor in (0, 1] is the same table as d = the rotary
    # dimension without it (the server resolves it so): fold it into d.
    prf = spec.partial_rotary_factor
    fold_prf = 0 < prf <= 1
    d = int(spec.d * prf) if fold_prf else spec.d
    key = (f"d={d};base={format_base(base)}"
           f";dtype={_DTYPE_NAMES.get(spec.dtype, str(spec.dtype))}"
           f";layout={_LAYOUT_NAMES.get(spec.layout, str(spec.layout))}"
           f";freq={_FREQUENCY_NAMES.get(spec.frequency, str(spec.frequency))}")
    if prf != 0 and not fold_prf:  # out of range: the server rejects it
        key += f";prf={format_base(prf)}"
    if spec.HasField("rope"):
        key += _rope_key_suffix(spec.rope)
    if spec.HasField("grid"):
        key += _grid_key_suffix(spec.grid)
    return key


def _grid_key_suffix(grid: posenc_pb2.GridSpec) -> str:
    """;grid=<size>:<channels>:<first>:<num>/<den>,...;order=..;sin_cos=..;
    extra=.. with the fraction's 0s taken as 1 and reduced by its gcd."""
    axes = []
    for a in grid.axes:
        num = a.position_numerator or 1
        den = a.position_denominator or 1
        g = math.gcd(num, den)
        axes.append(f"{a.size}:{a.channels}:{a.first_index}:"
                    f"{num // g}/{den // g}")
    order = (list(grid.channel_order) if len(grid.channel_order)
             else list(range(len(grid.axes))))
    sin_cos = _GRID_SIN_COS_NAMES.get(grid.sin_cos, str(grid.sin_cos))
    return (f";grid={','.join(axes)};order={','.join(map(str, order))}"
            f";sin_cos={sin_cos};extra={grid.extra_zero_rows}")


def routing_metadata(request) -> tuple:
    """Call metadata carrying the routing key of request.spec, if it is a
    TableSpec (Encode's EncodingSpec has none: nothing is cached)."""
    if not isinstance(getattr(request, "spec", None), posenc_pb2.TableSpec):
        return ()
    return ((ROUTING_KEY_HEADER, routing_key(request.spec)),)
