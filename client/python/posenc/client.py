"""Client: one channel to a posenc server; every call returns numpy arrays
(or torch tensors with as_torch=True)."""

from typing import Iterable, Iterator, Optional, Tuple, Union

import grpc
import numpy as np

from posenc.calls import (MAX_RECEIVE_BYTES, batches_request,  # noqa: F401
                          encode_grid_request, encode_request, gather_request,
                          open_channel, rows_request)
from posenc.errors import PosencError
from posenc.preset import Preset, preset_from_response, preset_request
from posenc.shared_memory import SharedMemoryOption
from posenc.spec import EncodingSpec, TableSpec, routing_metadata
from posenc.tensor import to_numpy
from posenc.torch_tensor import tensor_out
from posenc.v1 import posenc_pb2
from posenc.v1 import posenc_pb2_grpc


class Client:
    """A posenc.v1.PositionalEncoding client.

    Args:
      target: "host:port" (or any gRPC target) of the server.
      timeout: default deadline of each call in seconds; a stream counts as
        one call. Each method also takes timeout= to override it.
      credentials: grpc.ChannelCredentials; None means plaintext.
      shared_memory: table() maps the server's shared-memory file of a
        cached table instead of receiving its bytes, when the server runs
        with --shm_dir and the file can be opened here; otherwise it gets
        the bytes, with no error (docs/shared_memory.md). A file that is not
        the server's, or whose XXH64 differs, is PosencError DATA_LOSS.

    Every method raises PosencError (code + message) when the call fails.
    Arrays are read-only views over the received bytes or the mapped file
    (np.frombuffer; the array keeps the mapping alive): copy them to write.
    bfloat16 tables come back as uint16 bits; widen them with
    posenc.bfloat16_bits_to_float32, or pass as_torch=True to any method
    returning a tensor for a torch.bfloat16 (float32, float64, float16 as
    theirs) tensor over the same memory, read-only by contract (write into a
    clone()). Thread-safe; use as a context manager or call close().
    """

    def __init__(self, target: str, timeout: float = 30.0,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 shared_memory: bool = False):
        self._channel = open_channel(grpc, target, credentials)
        self._stub = posenc_pb2_grpc.PositionalEncodingStub(self._channel)
        self._timeout = timeout
        self._shm = SharedMemoryOption(shared_memory)

    def close(self) -> None:
        self._channel.close()
        self._shm.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def table(self, spec: TableSpec, timeout: Optional[float] = None,
              as_torch: bool = False) -> np.ndarray:
        """The whole table, shape (max_len, width); mapped from the server's
        shared-memory file with shared_memory=True where it can be."""
        request = self._shm.request(spec.to_proto())
        table = self._shm.array(self._unary(self._stub.GetTable, request,
                                            timeout))
        if table is None:  # the file cannot be opened here: the bytes
            request.accept_shared_memory = False
            table = to_numpy(self._unary(self._stub.GetTable, request,
                                         timeout).table)
        return tensor_out(table, as_torch)

    def rows(self, spec: TableSpec, start: int = 0, end: Optional[int] = None,
             timeout: Optional[float] = None, as_torch: bool = False
             ) -> Iterator[Tuple[int, np.ndarray]]:
        """Yields (position, row of shape (width,)) for rows [start, end)."""
        request = rows_request(spec, start, end)
        for message in self._stream(self._stub.StreamRows, request, timeout):
            yield message.position, tensor_out(to_numpy(message.row),
                                               as_torch)

    def batches(self, spec: TableSpec, start: int = 0,
                end: Optional[int] = None, rows_per_batch: int = 0,
                timeout: Optional[float] = None, as_torch: bool = False
                ) -> Iterator[Tuple[int, np.ndarray]]:
        """Yields (first position, batch of shape (rows, width)) over [start, end).

        rows_per_batch=0 lets the server pick about 64 KiB per message.
        """
        request = batches_request(spec, start, end, rows_per_batch)
        for message in self._stream(self._stub.StreamBatches, request,
                                    timeout):
            yield message.start, tensor_out(to_numpy(message.batch),
                                            as_torch)

    def gather(self, spec: TableSpec, positions: Iterable[int],
               timeout: Optional[float] = None,
               as_torch: bool = False) -> np.ndarray:
        """Rows at `positions` in that order (repeats allowed), (n, width)."""
        request = gather_request(spec, positions)
        return tensor_out(to_numpy(self._unary(self._stub.GetRows, request,
                                               timeout).rows), as_torch)

    def encode(self, spec: EncodingSpec,
               positions: Union[Iterable[float], np.ndarray],
               timeout: Optional[float] = None,
               as_torch: bool = False) -> np.ndarray:
        """Rows of real-valued points, shape (points, spec.width()).

        positions: spec.coordinates values per point, point-major: a flat
        sequence, or an array of shape (points, coordinates). Each value is
        sent as the exact float64 it is. Sends no routing key (nothing is
        cached; any replica answers).
        """
        return tensor_out(to_numpy(self._unary(
            self._stub.Encode, encode_request(spec, positions),
            timeout).embeddings), as_torch)

    def encode_grid(self, spec: EncodingSpec, grid,
                    timeout: Optional[float] = None,
                    as_torch: bool = False) -> np.ndarray:
        """Rows of the integer points of a grid (an image's patch ids), as
        encode_grid_request describes: a FLUX h x w latent is
        encode_grid(spec, [0, (0, h), (0, w)]), h * w rows (shape
        (h * w, K, 2, 2) with layout "rotation_matrix")."""
        return tensor_out(to_numpy(self._unary(
            self._stub.Encode, encode_grid_request(spec, grid),
            timeout).embeddings), as_torch)

    def resolve_preset(self, preset: str = "", *,
                       config_json: Optional[str] = None,
                       dtype: str = "float32",
                       timeout: Optional[float] = None,
                       **arguments) -> Preset:
        """The spec of a library call named with its own arguments, e.g.
        resolve_preset("diffusers.get_timestep_embedding", embedding_dim=320,
        flip_sin_to_cos=True); or of a model's config.json text
        (config_json=...), whose class picks the preset when none is named.
        Returns Preset(spec, name, reproduces); pass .spec to table/gather/
        batches or encode. See docs/presets.md."""
        return preset_from_response(self._unary(
            self._stub.ResolvePreset,
            preset_request(preset, config_json, dtype, arguments), timeout))

    def stats(self, timeout: Optional[float] = None
              ) -> posenc_pb2.GetStatsResponse:
        """Cache counters, per-method call counts and the server's limits."""
        return self._unary(self._stub.GetStats,
                           posenc_pb2.GetStatsRequest(), timeout)

    def _unary(self, method, request, timeout):
        try:
            return method(request, timeout=timeout or self._timeout,
                              metadata=routing_metadata(request))
        except grpc.RpcError as error:
            raise PosencError.from_rpc_error(error) from None

    def _stream(self, method, request, timeout):
        call = method(request, timeout=timeout or self._timeout,
                      metadata=routing_metadata(request))
        try:
            yield from call
        except grpc.RpcError as error:
            raise PosencError.from_rpc_error(error) from None
        finally:
            call.cancel()  # no-op once finished; frees an abandoned stream
