"""posenc.aio.Client: the asyncio client, on grpc.aio.

    import asyncio, posenc, posenc.aio

    async def main():
        async with posenc.aio.Client("127.0.0.1:50051") as client:
            table = await client.table(posenc.TableSpec(d=512, max_len=2048))
            async for start, batch in client.batches(
                    posenc.TableSpec(d=512, max_len=100)):
                ...

    asyncio.run(main())

Same methods, arguments (shared_memory=, as_torch=) and results as
posenc.Client; unary methods are coroutines and streams are async
iterators. With shared_memory=True, table() opens, checks and maps the file
in the event loop's thread (about as long as parsing the same bytes would
take: XXH64 reads each byte once).
"""

from typing import AsyncIterator, Iterable, Optional, Tuple, Union

import grpc
import grpc.aio
import numpy as np

from posenc.calls import (batches_request, encode_grid_request,
                          encode_request, gather_request, open_channel,
                          rows_request)
from posenc.errors import PosencError
from posenc.preset import Preset, preset_from_response, preset_request
from posenc.shared_memory import SharedMemoryOption
from posenc.spec import EncodingSpec, TableSpec, routing_metadata
from posenc.tensor import to_numpy
from posenc.torch_tensor import tensor_out
from posenc.v1 import posenc_pb2
from posenc.v1 import posenc_pb2_grpc


class Client:
    """An asyncio posenc.v1.PositionalEncoding client (grpc.aio).

    Args: target, timeout, credentials and shared_memory, as posenc.Client's
      (timeout: each call's default deadline in seconds, a stream counting as
      one call; every method takes timeout= to override it).

    Every method raises PosencError (code + message) when the call fails,
    streams included. Create it inside a running event loop; use it as an
    async context manager or await close().
    """

    def __init__(self, target: str, timeout: float = 30.0,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 shared_memory: bool = False):
        self._channel = open_channel(grpc.aio, target, credentials)
        self._stub = posenc_pb2_grpc.PositionalEncodingStub(self._channel)
        self._timeout = timeout
        self._shm = SharedMemoryOption(shared_memory)

    async def close(self) -> None:
        await self._channel.close()
        self._shm.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def table(self, spec: TableSpec, timeout: Optional[float] = None,
                    as_torch: bool = False) -> np.ndarray:
        """The whole table, shape (max_len, width), as posenc.Client.table."""
        request = self._shm.request(spec.to_proto())
        table = self._shm.array(await self._unary(self._stub.GetTable,
                                                  request, timeout))
        if table is None:  # the file cannot be opened here: the bytes
            request.accept_shared_memory = False
            table = to_numpy((await self._unary(self._stub.GetTable, request,
                                                timeout)).table)
        return tensor_out(table, as_torch)

    async def rows(self, spec: TableSpec, start: int = 0,
                   end: Optional[int] = None,
                   timeout: Optional[float] = None, as_torch: bool = False
                   ) -> AsyncIterator[Tuple[int, np.ndarray]]:
        """Yields (position, row of shape (width,)) for rows [start, end)."""
        request = rows_request(spec, start, end)
        async for message in self._stream(self._stub.StreamRows, request,
                                          timeout):
            yield message.position, tensor_out(to_numpy(message.row),
                                               as_torch)

    async def batches(self, spec: TableSpec, start: int = 0,
                      end: Optional[int] = None, rows_per_batch: int = 0,
                      timeout: Optional[float] = None,
                      as_torch: bool = False
                      ) -> AsyncIterator[Tuple[int, np.ndarray]]:
        """Yields (first position, batch of shape (rows, width)) over [start, end).

        rows_per_batch=0 lets the server pick about 64 KiB per message.
        """
        request = batches_request(spec, start, end, rows_per_batch)
        async for message in self._stream(self._stub.StreamBatches, request,
                                          timeout):
            yield message.start, tensor_out(to_numpy(message.batch),
                                            as_torch)

    async def gather(self, spec: TableSpec, positions: Iterable[int],
                     timeout: Optional[float] = None,
                     as_torch: bool = False) -> np.ndarray:
        """Rows at `positions` in that order (repeats allowed), (n, width)."""
        request = gather_request(spec, positions)
        response = await self._unary(self._stub.GetRows, request, timeout)
        return tensor_out(to_numpy(response.rows), as_torch)

    async def encode(self, spec: EncodingSpec,
                     positions: Union[Iterable[float], np.ndarray],
                     timeout: Optional[float] = None,
                     as_torch: bool = False) -> np.ndarray:
        """Rows of real-valued points, shape (points, spec.width());
        positions as in posenc.Client.encode. No routing key."""
        response = await self._unary(self._stub.Encode,
                                     encode_request(spec, positions), timeout)
        return tensor_out(to_numpy(response.embeddings), as_torch)

    async def encode_grid(self, spec: EncodingSpec, grid,
                          timeout: Optional[float] = None,
                          as_torch: bool = False) -> np.ndarray:
        """Rows of an integer grid's points, as posenc.Client.encode_grid."""
        response = await self._unary(self._stub.Encode,
                                     encode_grid_request(spec, grid), timeout)
        return tensor_out(to_numpy(response.embeddings), as_torch)

    async def resolve_preset(self, preset: str = "", *,
                             config_json: Optional[str] = None,
                             dtype: str = "float32",
                             timeout: Optional[float] = None,
                             **arguments) -> Preset:
        """As posenc.Client.resolve_preset."""
        return preset_from_response(await self._unary(
            self._stub.ResolvePreset,
            preset_request(preset, config_json, dtype, arguments), timeout))

    async def stats(self, timeout: Optional[float] = None
                    ) -> posenc_pb2.GetStatsResponse:
        """Cache counters, per-method call counts and the server's limits."""
        return await self._unary(self._stub.GetStats,
                                 posenc_pb2.GetStatsRequest(), timeout)

    async def _unary(self, method, request, timeout):
        try:
            return await method(request, timeout=timeout or self._timeout,
                              metadata=routing_metadata(request))
        except grpc.RpcError as error:
            raise PosencError.from_rpc_error(error) from None

    async def _stream(self, method, request, timeout):
        call = method(request, timeout=timeout or self._timeout,
                      metadata=routing_metadata(request))
        try:
            async for message in call:
                yield message
        except grpc.RpcError as error:
            raise PosencError.from_rpc_error(error) from None
        finally:
            call.cancel()  # no-op once finished; frees an abandoned stream
