"""TableSpec: names one positional-encoding table."""

import dataclasses
import decimal
import math

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
}
_FREQUENCIES = {
    "paper": posenc_pb2.FREQUENCY_PAPER,
    "t2t": posenc_pb2.FREQUENCY_T2T,
}


def _lookup(table: dict, field: str, value: str) -> int:
    try:
        return table[value]
    except KeyError:
        raise ValueError(
            f"{field} must be one of {sorted(table)}, got {value!r}") from None


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """A table: rows 0..max_len-1 of d channels each.

    base=0 means the server default (10000). dtype is "float32", "float64",
    "float16" or "bfloat16"; layout "interleaved", "concat_sin_cos" or
    "concat_cos_sin"; frequency "paper" or "t2t". Values are checked by the
    server, which answers INVALID_ARGUMENT (raised as PosencError).
    """

    d: int
    max_len: int
    base: float = 0.0
    dtype: str = "float32"
    layout: str = "interleaved"
    frequency: str = "paper"

    def to_proto(self) -> posenc_pb2.TableSpec:
        return posenc_pb2.TableSpec(
            d=self.d,
            base=self.base,
            max_len=self.max_len,
            dtype=_lookup(_DTYPES, "dtype", self.dtype),
            layout=_lookup(_LAYOUTS, "layout", self.layout),
            frequency=_lookup(_FREQUENCIES, "frequency", self.frequency),
        )

    def routing_key(self) -> str:
        """The x-posenc-table key this spec's calls carry (routing_key)."""
        return routing_key(self.to_proto())


# The metadata key of the routing key (see routing_key).
ROUTING_KEY_HEADER = "x-posenc-table"

_DTYPE_NAMES = {0: "float32", 1: "float32", 2: "float64", 3: "float16",
                4: "bfloat16"}
_LAYOUT_NAMES = {0: "interleaved", 1: "interleaved", 2: "concat_sin_cos",
                 3: "concat_cos_sin"}
_FREQUENCY_NAMES = {0: "paper", 1: "paper", 2: "t2t"}


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


def routing_key(spec: posenc_pb2.TableSpec) -> str:
    """The routing key of a TableSpec message, as every client sends it.

    d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>: every
    field but max_len, defaults resolved (base 0 -> 10000), base written by
    format_base, unknown enum values as numbers. See posenc.proto.
    """
    base = spec.base if spec.base != 0 else 10000.0
    return (f"d={spec.d};base={format_base(base)}"
            f";dtype={_DTYPE_NAMES.get(spec.dtype, str(spec.dtype))}"
            f";layout={_LAYOUT_NAMES.get(spec.layout, str(spec.layout))}"
            f";freq={_FREQUENCY_NAMES.get(spec.frequency, str(spec.frequency))}")


def routing_metadata(request) -> tuple:
    """Call metadata carrying the routing key of request.spec, if any."""
    if not hasattr(request, "spec"):
        return ()
    return ((ROUTING_KEY_HEADER, routing_key(request.spec)),)
