"""as_torch=True against a real posenc_server: each dtype's torch type over
the same memory as the numpy answer (the received bytes, or the mapped
shared-memory file with --shm_dir), bfloat16 as the very bits numpy gets, a
tensor that keeps its memory alive after its client and array are gone (and
the mapped file after its eviction), and a clear error where torch is not
installed."""

import asyncio
import gc
import os
import subprocess
import sys
import textwrap
import unittest

import numpy as np

import posenc
import posenc.aio
from server_case import ServerCase, ShmServer
from test_shared_memory import FIRST, evict_first, mapped_file

try:
    import torch
except ImportError:
    torch = None

DTYPES = ("float32", "float64", "float16", "bfloat16")
# An unsigned integer type of each dtype's width, to compare bits.
BITS = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16,
        "bfloat16": np.uint16}


def tensor_bits(tensor, dtype: str) -> np.ndarray:
    """The tensor's own bytes as unsigned integers, without a copy (numpy
    has no bfloat16: through its int16 view)."""
    same = tensor.view(torch.int16) if dtype == "bfloat16" else tensor
    return same.numpy().view(BITS[dtype])


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchTest(ServerCase):
    def test_EveryDtype_TorchTypeSameBitsAsNumpy(self):
        for name in DTYPES:
            with self.subTest(dtype=name):
                spec = posenc.TableSpec(d=64, max_len=300, dtype=name)
                tensor = self.client.table(spec, as_torch=True)
                self.assertEqual(tensor.dtype, getattr(torch, name))
                self.assertEqual(tuple(tensor.shape), (300, 64))
                np.testing.assert_array_equal(
                    tensor_bits(tensor, name),
                    self.client.table(spec).view(BITS[name]))

    def test_Bfloat16_ValuesAreTheBitsWidened(self):
        spec = posenc.TableSpec(d=128, max_len=64, dtype="bfloat16")
        tensor = self.client.table(spec, as_torch=True)
        np.testing.assert_array_equal(
            tensor.float().numpy(),
            posenc.bfloat16_bits_to_float32(self.client.table(spec)))

    def test_EveryCallReturningATensor_TakesAsTorch(self):
        spec = posenc.TableSpec(d=32, max_len=128, dtype="float16")
        table = self.client.table(spec)
        rows = self.client.gather(spec, [5, 0, 5], as_torch=True)
        self.assertEqual(rows.dtype, torch.float16)
        np.testing.assert_array_equal(rows.numpy(), table[[5, 0, 5]])
        batches = list(self.client.batches(spec, start=8, end=24,
                                           rows_per_batch=8, as_torch=True))
        self.assertEqual([start for start, _ in batches], [8, 16])
        for start, batch in batches:
            np.testing.assert_array_equal(batch.numpy(),
                                          table[start:start + 8])
        for position, row in self.client.rows(spec, start=3, end=5,
                                              as_torch=True):
            np.testing.assert_array_equal(row.numpy(), table[position])
        encoding = posenc.EncodingSpec(dim=16, dtype="bfloat16")
        encoded = self.client.encode(encoding, [0.5, 2.0], as_torch=True)
        self.assertEqual((encoded.dtype, tuple(encoded.shape)),
                         (torch.bfloat16, (2, 16)))
        np.testing.assert_array_equal(
            tensor_bits(encoded, "bfloat16"),
            self.client.encode(encoding, [0.5, 2.0]))

    def test_ReadOnlyBuffer_NoWarningEvenWithWarningsAsErrors(self):
        # A fresh process: torch warns once per process.
        script = textwrap.dedent(f"""
            import posenc
            with posenc.Client("{self.target}") as client:
                print(client.table(posenc.TableSpec(d=8, max_len=4),
                                   as_torch=True).dtype)
            """)
        result = subprocess.run(
            [sys.executable, "-W", "error", "-c", script],
            capture_output=True, text=True, timeout=60, env=os.environ)
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (0, "torch.float32\n", ""))

    def test_Tensor_OutlivesItsClientAndArray(self):
        spec = posenc.TableSpec(d=256, max_len=512, dtype="bfloat16")
        expected = self.client.table(spec).copy()
        with posenc.Client(self.target) as client:
            tensor = client.table(spec, as_torch=True)
        del client
        gc.collect()
        # Memory freed under the tensor would now be reused by these.
        garbage = [np.full(expected.shape, 0xFFFF, np.uint16)
                   for _ in range(8)]
        np.testing.assert_array_equal(tensor_bits(tensor, "bfloat16"),
                                      expected)
        del garbage


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchSharedMemoryTest(unittest.TestCase):
    def setUp(self):
        self.server = ShmServer(("--cache_bytes=3145728",))

    def tearDown(self):
        self.server.stop()

    def test_EveryDtype_TensorIsTheMappedFileSameBits(self):
        with posenc.Client(self.server.target, shared_memory=True) as client:
            for name in DTYPES:
                with self.subTest(dtype=name):
                    spec = posenc.TableSpec(d=64, max_len=300, dtype=name)
                    tensor = client.table(spec, as_torch=True)
                    self.assertEqual(tensor.dtype, getattr(torch, name))
                    path = mapped_file(tensor.data_ptr())
                    self.assertTrue(path.startswith(
                        self.server.directory() + "/table-"), path)
                    np.testing.assert_array_equal(
                        tensor_bits(tensor, name),
                        self.server.client.table(spec).view(BITS[name]))

    def test_Aio_TensorIsTheMappedFile(self):
        spec = posenc.TableSpec(d=32, max_len=200, dtype="bfloat16")

        async def table():
            async with posenc.aio.Client(self.server.target,
                                         shared_memory=True) as client:
                return await client.table(spec, as_torch=True)

        tensor = asyncio.run(table())
        self.assertEqual(tensor.dtype, torch.bfloat16)
        self.assertTrue(mapped_file(tensor.data_ptr()).startswith(
            self.server.directory() + "/table-"))
        np.testing.assert_array_equal(tensor_bits(tensor, "bfloat16"),
                                      self.server.client.table(spec))

    def test_Tensor_KeepsTheMappingAfterClientArrayAndEviction(self):
        client = posenc.Client(self.server.target, shared_memory=True)
        tensor = client.table(FIRST, as_torch=True)
        expected = tensor.clone()
        path = mapped_file(tensor.data_ptr())
        self.assertTrue(os.path.exists(path), path)
        client.close()
        del client
        gc.collect()
        evict_first(self.server, self)
        self.assertFalse(os.path.exists(path))
        self.assertEqual(mapped_file(tensor.data_ptr()), path + " (deleted)")
        self.assertTrue(torch.equal(tensor, expected))
        # Only the tensor holds the mapping: it is unmapped with the tensor.
        address = tensor.data_ptr()
        del tensor
        gc.collect()
        self.assertIsNone(mapped_file(address))


class NoTorchTest(ServerCase):
    def test_AsTorchWithoutTorch_ImportErrorNumpyStillWorks(self):
        script = textwrap.dedent(f"""
            import sys
            sys.modules["torch"] = None  # import torch raises ImportError
            import posenc
            spec = posenc.TableSpec(d=8, max_len=4)
            with posenc.Client("{self.target}") as client:
                print(client.table(spec).shape)
                try:
                    client.table(spec, as_torch=True)
                except ImportError as error:
                    print(error)
            """)
        result = subprocess.run([sys.executable, "-c", script],
                                capture_output=True, text=True, timeout=60,
                                env=os.environ)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0], "(4, 8)")
        self.assertTrue(lines[1].startswith("as_torch=True needs PyTorch"),
                        lines[1])


if __name__ == "__main__":
    unittest.main()
