"""The calls' shared parts, for posenc.Client and posenc.aio.Client: the
channel (grpc or grpc.aio) and the request of each call."""

from typing import Iterable, Optional

import grpc
import numpy as np

from posenc.spec import EncodingSpec, TableSpec
from posenc.v1 import posenc_pb2

# Tables can be 64 MiB and more; accept up to 1 GiB per message.
MAX_RECEIVE_BYTES = 1 << 30


def open_channel(grpc_module, target: str,
                 credentials: Optional[grpc.ChannelCredentials]):
    """A channel of `grpc_module` (grpc or grpc.aio) to `target`: plaintext
    when credentials is None; messages of up to MAX_RECEIVE_BYTES."""
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)]
    if credentials is None:
        return grpc_module.insecure_channel(target, options=options)
    return grpc_module.secure_channel(target, credentials, options=options)


def rows_request(spec: TableSpec, start: int,
                 end: Optional[int]) -> posenc_pb2.StreamRowsRequest:
    """The StreamRowsRequest of rows [start, end) (end None: max_len)."""
    request = posenc_pb2.StreamRowsRequest(spec=spec.to_proto(), start=start)
    if end is not None:
        request.end = end
    return request


def batches_request(spec: TableSpec, start: int, end: Optional[int],
                    rows_per_batch: int) -> posenc_pb2.StreamBatchesRequest:
    """The StreamBatchesRequest of rows [start, end) (end None: max_len)."""
    request = posenc_pb2.StreamBatchesRequest(
        spec=spec.to_proto(), start=start, rows_per_batch=rows_per_batch)
    if end is not None:
        request.end = end
    return request


def gather_request(spec: TableSpec,
                   positions: Iterable[int]) -> posenc_pb2.GetRowsRequest:
    """The GetRowsRequest of `positions`, in that order."""
    return posenc_pb2.GetRowsRequest(spec=spec.to_proto(),
                                     positions=list(positions))


def encode_request(spec: EncodingSpec, positions) -> posenc_pb2.EncodeRequest:
    """The EncodeRequest of `spec` and `positions`, flattened point-major."""
    values = np.asarray(positions, dtype=np.float64).reshape(-1)
    return posenc_pb2.EncodeRequest(spec=spec.to_proto(),
                                    positions=values.tolist())


def encode_grid_request(spec: EncodingSpec,
                        grid) -> posenc_pb2.EncodeRequest:
    """The EncodeRequest of `spec` with an integer grid: one entry per
    coordinate, an int start (count 1: a fixed id) or a (start, count)
    pair; the points are row-major, the last coordinate fastest."""
    axes = []
    for axis in grid:
        start, count = (axis, 1) if isinstance(axis, int) else axis
        axes.append(posenc_pb2.GridAxis(start=int(start), count=int(count)))
    return posenc_pb2.EncodeRequest(
        spec=spec.to_proto(), grid=posenc_pb2.PositionGrid(axes=axes))
