"""Presets: a library call named with its own arguments, resolved by the
server (ResolvePreset) to the spec of that call's exact values.

    with posenc.Client(target) as c:
        p = c.resolve_preset("diffusers.get_timestep_embedding",
                             embedding_dim=320, flip_sin_to_cos=True)
        rows = c.encode(p.spec, [999.5])
        unet = c.resolve_preset(config_json=open("unet/config.json").read())

The presets, their arguments and the library version each follows:
docs/presets.md.
"""

from dataclasses import dataclass
from typing import Any, Union

from posenc.spec import _DTYPES, _lookup
from posenc.v1 import posenc_pb2


def argument_text(value: Any) -> str:
    """An argument as the server reads it: Python's own spelling (True,
    320, 999.5, [16, 56, 56]); floats by repr, the shortest round trip."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(argument_text(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"argument of type {type(value).__name__}: pass a bool, "
                    "number, list of numbers or str")


class ResolvedSpec:
    """The spec a preset resolved to, as the server wrote it (every field
    explicit). Pass it to Client.table / gather / batches (a table) or
    Client.encode (an encoding) like a TableSpec or EncodingSpec."""

    def __init__(self, proto: Union[posenc_pb2.TableSpec,
                                    posenc_pb2.EncodingSpec]):
        self._proto = proto

    @property
    def is_table(self) -> bool:
        return isinstance(self._proto, posenc_pb2.TableSpec)

    def to_proto(self):
        return self._proto

    def __repr__(self) -> str:
        kind = "TableSpec" if self.is_table else "EncodingSpec"
        fields = str(self._proto).replace("\n", " ").strip()
        return f"ResolvedSpec({kind}: {fields})"


@dataclass(frozen=True)
class Preset:
    """A resolved preset: its spec, its name (the one a config chose when
    none was given) and what it reproduces (library, version, function)."""
    spec: ResolvedSpec
    name: str
    reproduces: str


def preset_request(preset: str, config_json: str, dtype: str,
                   arguments: dict) -> posenc_pb2.ResolvePresetRequest:
    return posenc_pb2.ResolvePresetRequest(
        preset=preset, config_json=config_json or "",
        dtype=_lookup(_DTYPES, "dtype", dtype),
        arguments={k: argument_text(v) for k, v in arguments.items()})


def preset_from_response(response: posenc_pb2.ResolvePresetResponse
                         ) -> Preset:
    which = response.WhichOneof("spec")
    proto = response.table if which == "table" else response.encoding
    return Preset(ResolvedSpec(proto), response.preset, response.reproduces)
