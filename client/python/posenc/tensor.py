"""Tensor messages to numpy arrays."""

import numpy as np

from posenc.v1 import posenc_pb2

# Little-endian element types of the wire format. bfloat16 has no numpy
# dtype: its raw bits are returned as uint16 (see bfloat16_bits_to_float32).
_NUMPY_DTYPES = {
    posenc_pb2.DTYPE_FLOAT32: np.dtype("<f4"),
    posenc_pb2.DTYPE_FLOAT64: np.dtype("<f8"),
    posenc_pb2.DTYPE_FLOAT16: np.dtype("<f2"),
    posenc_pb2.DTYPE_BFLOAT16: np.dtype("<u2"),
}


def numpy_dtype(dtype: int) -> np.dtype:
    """The numpy dtype of a posenc.v1.DType (uint16 bits for bfloat16)."""
    try:
        return _NUMPY_DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype}") from None


def to_numpy(tensor: posenc_pb2.Tensor) -> np.ndarray:
    """A read-only array over the tensor's bytes (no copy), shaped as sent.

    Raises ValueError when dtype, shape and byte count disagree.
    """
    dtype = numpy_dtype(tensor.dtype)
    shape = tuple(tensor.shape)
    count = int(np.prod(shape, dtype=np.int64))
    if count * dtype.itemsize != len(tensor.data):
        raise ValueError(f"shape {shape} of {dtype} needs "
                         f"{count * dtype.itemsize} bytes, got "
                         f"{len(tensor.data)}")
    return np.frombuffer(tensor.data, dtype=dtype).reshape(shape)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """Widens bfloat16 bits (uint16) to float32 exactly."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32)
