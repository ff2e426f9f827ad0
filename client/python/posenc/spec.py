"""TableSpec: names one positional-encoding table."""

import dataclasses

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
