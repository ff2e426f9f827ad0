"""posenc: Python client of the posenc.v1.PositionalEncoding gRPC service.

    import posenc
    with posenc.Client("127.0.0.1:50051") as client:
        table = client.table(posenc.TableSpec(d=512, max_len=2048))
        emb = client.encode(posenc.EncodingSpec(dim=256), [999.5, 0.25])

posenc.aio.Client has the same methods on asyncio (grpc.aio).

Tables come back as numpy arrays of shape (rows, width): width is d, or
2 * d_rot for the RoPE layouts (see TableSpec). See README.md.
"""

import pkgutil

# posenc.v1 (the generated stubs) may live in another directory on sys.path,
# e.g. the build tree; let this package span both.
__path__ = pkgutil.extend_path(__path__, __name__)

from posenc.client import Client  # noqa: E402
from posenc.errors import PosencError  # noqa: E402
from posenc.spec import (EncodingSpec, GridAxis, GridSpec,  # noqa: E402
                         RopeScaling, TableSpec, diffusers_grid, mae_grid)
from posenc.hf_config import spec_from_hf_config  # noqa: E402
from posenc.tensor import bfloat16_bits_to_float32  # noqa: E402
from posenc import aio  # noqa: E402

__all__ = ["Client", "EncodingSpec", "GridAxis", "GridSpec", "PosencError",
           "RopeScaling", "TableSpec", "aio", "bfloat16_bits_to_float32",
           "diffusers_grid", "mae_grid", "spec_from_hf_config"]
__version__ = "0.1.0"
