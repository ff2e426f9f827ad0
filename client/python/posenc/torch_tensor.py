"""numpy arrays of posenc answers to torch tensors, without a copy.

torch is optional: it is imported on the first as_torch=True call, and
posenc works without it.
"""

import threading
import warnings

import numpy as np

# catch_warnings swaps the process's filter list: one posenc call at a time.
_WARNINGS_LOCK = threading.Lock()


def _torch():
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            "as_torch=True needs PyTorch (Debian: python3-torch; pip: "
            f"torch); posenc itself works without it: {error}") from None
    return torch


def to_torch(array: np.ndarray):
    """A torch tensor over the same memory as `array` (a posenc answer: a
    mapped shared-memory file or the received bytes), same shape.

    float32, float64 and float16 keep their type; uint16 (posenc's
    bfloat16 bits, the only uint16 it returns) becomes torch.bfloat16. The
    tensor holds `array`, and so the mapping or the bytes, alive; it is
    read-only by contract: write into a clone(), never into it (a write
    into a shared-memory tensor is a segmentation fault: the mapping is
    PROT_READ).
    """
    torch = _torch()
    dtypes = {np.dtype("<f4"): torch.float32, np.dtype("<f8"): torch.float64,
              np.dtype("<f2"): torch.float16, np.dtype("<u2"): torch.bfloat16}
    # torch.frombuffer warns that a read-only buffer gives a tensor torch
    # cannot mark read-only; posenc's tensors are read-only by contract
    # (README "PyTorch tensors"), so the warning is ignored for this call.
    # (torch warns once per process: a user's own frombuffer of a read-only
    # buffer after this call no longer warns.) The buffer object is the
    # array (not its memory's owner), which the tensor holds alive.
    with _WARNINGS_LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning,
                                message="The given buffer is not writable")
        tensor = torch.frombuffer(array, dtype=dtypes[array.dtype])
    return tensor.reshape(array.shape)


def tensor_out(array: np.ndarray, as_torch: bool):
    """`array`, or to_torch(array) when as_torch: what a call returns."""
    return to_torch(array) if as_torch else array
