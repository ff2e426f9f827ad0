"""Encode: EncodingSpec, the request, and rows of real-valued points from a
real server (sync and asyncio clients).

Run as test_rope.py says; server tests are skipped when POSENC_SERVER is
unset.
"""

import asyncio
import math
import os
import re
import sys
import time
import unittest

import numpy as np

import posenc
import posenc.aio
from posenc import EncodingSpec, TableSpec
from posenc.client import encode_grid_request, encode_request
from posenc.spec import routing_metadata
from posenc.v1 import posenc_pb2
from server_case import ServerCase

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))

NERF = EncodingSpec(frequency="octaves", layout="concat_sin_cos",
                    num_frequencies=10, min_freq_exp=0, max_freq_exp=8,
                    coordinates=3, include_input=True)
FLUX = EncodingSpec(axes_dim=(16, 56, 56), layout="rotation_matrix")
QWEN2_VL = EncodingSpec(dim=128, max_period=1000000,
                        mrope_section=(16, 24, 24), layout="rotate_half")


def flux_rope_float64(ids, axes_dim=(16, 56, 56), theta=10000):
    """FLUX math.rope + EmbedND in float64 numpy: (n, K, 2, 2)."""
    out = []
    for a, d in enumerate(axes_dim):
        omega = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
        angle = np.asarray(ids, dtype=np.float64)[:, a:a + 1] * omega
        out.append(np.stack([np.cos(angle), -np.sin(angle), np.sin(angle),
                             np.cos(angle)], axis=-1))
    return np.concatenate(out, axis=1).reshape(len(ids), -1, 2, 2)


class EncodingSpecTest(unittest.TestCase):
    def test_defaults_are_the_protos(self):
        proto = EncodingSpec(dim=8).to_proto()
        self.assertEqual(proto.dim, 8)
        self.assertEqual(proto.dtype, posenc_pb2.DTYPE_FLOAT32)
        self.assertEqual(proto.layout, posenc_pb2.LAYOUT_INTERLEAVED)
        self.assertEqual(proto.frequency,
                         posenc_pb2.FREQUENCY_SCHEME_EXPONENTIAL)
        for field in ("max_period", "shift", "scale", "num_frequencies",
                      "min_freq_exp", "max_freq_exp", "coordinates"):
            self.assertEqual(getattr(proto, field), 0, field)
        self.assertFalse(proto.pad_odd_dim)
        self.assertFalse(proto.include_input)

    def test_every_field_reaches_the_proto(self):
        proto = EncodingSpec(dim=321, dtype="float16",
                             layout="concat_cos_sin", max_period=500.5,
                             shift=1, scale=1000, pad_odd_dim=True).to_proto()
        self.assertEqual((proto.dim, proto.max_period, proto.shift,
                          proto.scale, proto.pad_odd_dim),
                         (321, 500.5, 1, 1000, True))
        self.assertEqual(proto.dtype, posenc_pb2.DTYPE_FLOAT16)
        self.assertEqual(proto.layout, posenc_pb2.LAYOUT_CONCAT_COS_SIN)
        proto = NERF.to_proto()
        self.assertEqual(proto.frequency, posenc_pb2.FREQUENCY_SCHEME_OCTAVES)
        self.assertEqual((proto.num_frequencies, proto.min_freq_exp,
                          proto.max_freq_exp, proto.coordinates,
                          proto.include_input), (10, 0, 8, 3, True))

    def test_unknown_names_raise(self):
        with self.assertRaisesRegex(ValueError, "frequency must be one of"):
            EncodingSpec(dim=8, frequency="paper").to_proto()
        with self.assertRaisesRegex(ValueError, "dtype must be one of"):
            EncodingSpec(dim=8, dtype="int8").to_proto()

    def test_width(self):
        self.assertEqual(EncodingSpec(dim=256).width(), 256)
        self.assertEqual(EncodingSpec(dim=321, pad_odd_dim=True).width(), 321)
        self.assertEqual(NERF.width(), 2 * 3 * 10 + 3)
        self.assertEqual(EncodingSpec(dim=8, coordinates=2).width(), 16)

    def test_request_is_point_major_exact_doubles(self):
        points = np.array([[0.5, -0.25, 0.1], [0.3, 1, -0.75]])
        request = encode_request(NERF, points)
        self.assertEqual(list(request.positions),
                         [0.5, -0.25, 0.1, 0.3, 1.0, -0.75])
        request = encode_request(EncodingSpec(dim=4), [1 / 3, 999.5])
        self.assertEqual(list(request.positions), [1 / 3, 999.5])
        self.assertEqual(request.spec, EncodingSpec(dim=4).to_proto())

    def test_multi_axis_fields_reach_the_proto(self):
        proto = FLUX.to_proto()
        self.assertEqual(list(proto.axes_dim), [16, 56, 56])
        self.assertEqual(proto.layout, posenc_pb2.LAYOUT_ROTATION_MATRIX)
        self.assertEqual(proto.coordinates, 0)  # the server: the axes
        self.assertEqual(FLUX.width(), 256)
        proto = EncodingSpec(dim=128, mrope_section=(24, 20, 20),
                             mrope_interleaved=True).to_proto()
        self.assertEqual(list(proto.mrope_section), [24, 20, 20])
        self.assertTrue(proto.mrope_interleaved)
        self.assertEqual(QWEN2_VL.width(), 256)
        self.assertEqual(EncodingSpec(dim=128, mrope_section=(16, 24, 24),
                                      layout="concat_cos_sin").width(), 128)

    def test_grid_request_axes(self):
        request = encode_grid_request(FLUX, [0, (3, 4), (5, 6)])
        self.assertEqual(len(request.positions), 0)
        self.assertEqual([(a.start, a.count) for a in request.grid.axes],
                         [(0, 1), (3, 4), (5, 6)])

    def test_rotation_matrix_layout_key_name(self):
        # Every client names layout 6 as the proto does (no table takes it).
        from posenc.spec import routing_key
        key = routing_key(TableSpec(d=4, max_len=1,
                                    layout="rotation_matrix").to_proto())
        self.assertEqual(
            key, "d=4;base=10000;dtype=float32;layout=rotation_matrix;"
                 "freq=paper")

    def test_no_routing_key(self):
        self.assertEqual(routing_metadata(encode_request(EncodingSpec(dim=4),
                                                         [1.0])), ())
        gather = posenc_pb2.GetRowsRequest(
            spec=TableSpec(d=4, max_len=8).to_proto(), positions=[1])
        self.assertEqual(routing_metadata(gather)[0][0], "x-posenc-table")


@unittest.skipUnless(os.environ.get("POSENC_SERVER"), "POSENC_SERVER unset")
class EncodeServerTest(ServerCase):
    def test_integer_points_are_the_tables_rows(self):
        # shift 0 is FREQUENCY_PAPER's table, shift 1 FREQUENCY_T2T's.
        positions = [7, 0, 999, 3, 7]
        for dtype in ("float32", "float64", "float16", "bfloat16"):
            for shift, frequency in ((0, "paper"), (1, "t2t")):
                spec = EncodingSpec(dim=64, dtype=dtype, shift=shift,
                                    layout="concat_cos_sin")
                got = self.client.encode(spec, [float(p) for p in positions])
                want = self.client.gather(
                    TableSpec(d=64, max_len=1000, dtype=dtype,
                              layout="concat_cos_sin", frequency=frequency),
                    positions)
                self.assertEqual(got.shape, (5, 64))
                self.assertEqual(got.dtype, want.dtype)
                np.testing.assert_array_equal(got.view(np.uint8),
                                              want.view(np.uint8))

    def test_fractional_points_and_bfloat16_bits(self):
        spec = EncodingSpec(dim=256, layout="concat_cos_sin", scale=1000)
        t = [0, 0.25, 0.5, 0.999, 1 / 3]
        rows = self.client.encode(spec, t)
        self.assertEqual(rows.shape, (5, 256))
        self.assertEqual(rows.dtype, np.float32)
        # Column 0 is cos(1000 t f_0) with f_0 = 1, column 128 its sin.
        for k, x in enumerate(t):
            self.assertAlmostEqual(rows[k, 0], math.cos(1000 * x), places=6)
            self.assertAlmostEqual(rows[k, 128], math.sin(1000 * x), places=6)
        self.assertEqual(rows[0, 128], 0)
        self.assertFalse(np.signbit(rows[0, 128]))
        bf16 = self.client.encode(
            EncodingSpec(dim=256, layout="concat_cos_sin", scale=1000,
                         dtype="bfloat16"), t)
        self.assertEqual(bf16.dtype, np.uint16)  # bits, as table() returns
        widened = posenc.bfloat16_bits_to_float32(bf16)
        self.assertLessEqual(np.max(np.abs(widened - rows)), 2.0 ** -8)

    def test_nerf_points(self):
        points = np.array([[0.5, -0.25, 0.1], [0.3, 1, -0.75]])
        rows = self.client.encode(NERF, points)
        self.assertEqual(rows.shape, (2, 63))
        # Pair 0 is coordinate 0 at 2 pi 2^0: angle pi for x = 0.5, so sin
        # is exactly +0 and cos -1; the inputs follow the 60 sin/cos columns.
        self.assertEqual(rows[0, 0], 0)
        self.assertFalse(np.signbit(rows[0, 0]))
        self.assertEqual(rows[0, 30], -1)
        np.testing.assert_array_equal(rows[:, 60:],
                                      points.astype(np.float32))
        # x = 1 with e = 0: a whole turn, sin +0 and cos 1 (pair 10 + 0).
        self.assertEqual(rows[1, 10], 0)
        self.assertEqual(rows[1, 40], 1)

    def test_errors_name_the_field(self):
        with self.assertRaises(posenc.PosencError) as odd:
            self.client.encode(EncodingSpec(dim=5), [1.0])
        self.assertEqual(odd.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("spec.dim", odd.exception.message)
        with self.assertRaises(posenc.PosencError) as far:
            self.client.encode(EncodingSpec(dim=256, scale=1000), [0, 17000])
        self.assertEqual(far.exception.code_name, "OUT_OF_RANGE")
        self.assertIn("positions[1]", far.exception.message)
        with self.assertRaises(posenc.PosencError) as partial:
            self.client.encode(NERF, [0.5, 0.25])  # not a whole point
        self.assertEqual(partial.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("positions", partial.exception.message)

    def test_flux_grid_equals_tuples_and_float64_numpy(self):
        ids = [(0, r, c) for r in range(4) for c in range(6)]
        by_grid = self.client.encode_grid(FLUX, [0, (0, 4), (0, 6)])
        self.assertEqual(by_grid.shape, (24, 64, 2, 2))
        by_tuples = self.client.encode(FLUX, np.array(ids, dtype=np.float64))
        np.testing.assert_array_equal(by_grid.view(np.uint8),
                                      by_tuples.view(np.uint8))
        # FLUX's own formula in float64, rounded to float32: the exact
        # values differ from it by at most one float32 ulp.
        want = flux_rope_float64(ids).astype(np.float32)
        np.testing.assert_allclose(by_grid, want, rtol=0, atol=2 ** -24)
        self.assertTrue(np.signbit(by_grid[0, 0, 0, 1]))  # -sin(0) = -0.0

    def test_qwen2_vl_text_ids_are_rope_table_rows(self):
        got = self.client.encode(QWEN2_VL, [[p, p, p] for p in (0, 5, 77)])
        want = self.client.gather(
            TableSpec(d=128, max_len=100, base=1000000, layout="rotate_half"),
            [0, 5, 77])
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        with self.assertRaises(posenc.PosencError) as bad:
            self.client.encode(EncodingSpec(dim=128, mrope_section=(16, 24)),
                               [0, 0])
        self.assertEqual(bad.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("spec.mrope_section", bad.exception.message)

    def test_asyncio_client_same_bytes_and_errors(self):
        spec = EncodingSpec(dim=321, pad_odd_dim=True, dtype="float16",
                            layout="concat_cos_sin")
        positions = [999.5, 0, 1, 500.25, -3.75]
        want = self.client.encode(spec, positions)

        async def run():
            async with posenc.aio.Client(self.target, timeout=30) as client:
                got = await client.encode(spec, positions)
                try:
                    await client.encode(EncodingSpec(dim=5), [1.0])
                    code = "OK"
                except posenc.PosencError as error:
                    code = error.code_name
                return got, code

        got, code = asyncio.run(run())
        self.assertEqual(got.shape, (5, 321))
        self.assertTrue(np.all(got[:, 320] == 0))  # the pad column
        np.testing.assert_array_equal(got.view(np.uint16),
                                      want.view(np.uint16))
        self.assertEqual(code, "INVALID_ARGUMENT")

    def test_no_routing_key_sent(self):
        # The server logs each failed call with the x-posenc-table it got.
        with self.assertRaises(posenc.PosencError):
            self.client.encode(EncodingSpec(dim=3), [1.0])
        with self.assertRaises(posenc.PosencError):
            self.client.gather(TableSpec(d=4, max_len=8), [8])
        encode_re = re.compile(
            r"/posenc\.v1\.PositionalEncoding/Encode -> .* "
            r"x-posenc-table=(\S+)\n")
        rows_re = re.compile(
            r"/posenc\.v1\.PositionalEncoding/GetRows -> .* "
            r"x-posenc-table=(\S+)\n")
        deadline = time.monotonic() + 10
        while True:
            with open(self.log_path) as f:
                log = f.read()
            if (encode_re.search(log) and rows_re.search(log)
                    or time.monotonic() > deadline):
                break
            time.sleep(0.05)
        encode_keys = encode_re.findall(log)
        self.assertTrue(encode_keys, log[-2000:])
        self.assertEqual(set(encode_keys), {"(none)"})
        self.assertIn("d=4;base=10000;dtype=float32;layout=interleaved;"
                      "freq=paper", rows_re.findall(log))


if __name__ == "__main__":
    unittest.main()
