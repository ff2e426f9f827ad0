"""Grid tables: GridSpec / TableSpec.grid, the routing key, the MAE and
diffusers helpers, and tables from a real server against the libraries'
formulas in float64 numpy.

Run as test_rope.py says; server tests are skipped when POSENC_SERVER is
unset.
"""

import os
import sys
import unittest
from fractions import Fraction

import numpy as np

import posenc
from posenc import GridAxis, GridSpec, TableSpec, diffusers_grid, mae_grid
from posenc.v1 import posenc_pb2
from server_case import ServerCase

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))

# The proto's routing-key example (and tests/unit/routing_key_test.cc's).
MAE_KEY = ("d=768;base=10000;dtype=float32;layout=concat_sin_cos;freq=paper;"
           "grid=14:384:0:1/1,14:384:0:1/1;order=1,0;sin_cos=per_axis;"
           "extra=1")


def one_d(embed_dim, pos):
    """MAE / diffusers get_1d_sincos_pos_embed_from_grid in float64."""
    omega = np.arange(embed_dim // 2, dtype=np.float64) / (embed_dim / 2.0)
    omega = 1.0 / 10000 ** omega
    out = np.einsum("m,d->md", np.asarray(pos, dtype=np.float64).reshape(-1),
                    omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def two_d(embed_dim, grid_h, grid_w):
    """get_2d_sincos_pos_embed_from_grid over meshgrid(grid_w, grid_h)."""
    gw, gh = np.meshgrid(grid_w, grid_h)
    return np.concatenate([one_d(embed_dim // 2, gw), one_d(embed_dim // 2, gh)],
                          axis=1)


class GridSpecTest(unittest.TestCase):
    def test_mae_grid_routing_key_is_the_protos_example(self):
        spec = mae_grid(768, 14, cls_token=True)
        self.assertEqual(spec.routing_key(), MAE_KEY)
        self.assertEqual(spec.rows(), 197)
        proto = spec.to_proto()
        self.assertEqual(proto.max_len, 0)
        self.assertEqual(list(proto.grid.channel_order), [1, 0])
        self.assertEqual(proto.grid.axes[0].channels, 384)

    def test_defaults_and_reduced_fractions_share_a_key(self):
        a = TableSpec(d=64, layout="concat_sin_cos", grid=GridSpec(
            axes=(GridAxis(4, 32), GridAxis(6, 32))))
        b = TableSpec(d=64, max_len=24, layout="concat_sin_cos", grid=GridSpec(
            axes=(GridAxis(4, 32, numerator=16, denominator=16),
                  GridAxis(6, 32, numerator=1, denominator=1)),
            channel_order=(0, 1)))
        self.assertEqual(a.routing_key(), b.routing_key())
        self.assertIn(";order=0,1;", a.routing_key())
        c = TableSpec(d=64, layout="concat_sin_cos", grid=GridSpec(
            axes=(GridAxis(4, 32, numerator=2, denominator=6),
                  GridAxis(6, 32)), sin_cos="grouped"))
        self.assertIn("grid=4:32:0:1/3,6:32:0:1/1;", c.routing_key())
        self.assertIn(";sin_cos=grouped;", c.routing_key())

    def test_bad_sin_cos_name_is_a_value_error(self):
        with self.assertRaises(ValueError):
            GridSpec(axes=(GridAxis(2, 2),), sin_cos="both").to_proto()

    def test_diffusers_grid_exact_rationals(self):
        # interpolation_scale 1.875 = 15/8, base_size 16, n = 10:
        # step 16 / (10 * 15/8) = 64/75.
        spec = diffusers_grid(64, 10, base_size=16,
                              interpolation_scale=Fraction(15, 8))
        axis = spec.grid.axes[0]
        self.assertEqual((axis.numerator, axis.denominator), (64, 75))
        # SD3: pos_embed_max_size 192, base_size 64, crop 64 x 96.
        sd3 = diffusers_grid(1536, (64, 96), base_size=64,
                             pos_embed_max_size=192)
        h, w = sd3.grid.axes
        self.assertEqual((h.first_index, w.first_index), (64, 48))
        self.assertEqual((h.numerator, h.denominator), (1, 3))
        self.assertEqual(sd3.to_proto().grid.axes[1].size, 96)


@unittest.skipUnless(os.environ.get("POSENC_SERVER"), "POSENC_SERVER unset")
class GridServerTest(ServerCase):
    def test_mae_table_matches_maes_formula(self):
        got = self.client.table(mae_grid(64, 6, cls_token=True))
        self.assertEqual(got.shape, (37, 64))
        self.assertTrue(np.all(got[0] == 0))
        grid = np.arange(6, dtype=np.float64)
        want = two_d(64, grid, grid)
        np.testing.assert_allclose(got[1:], want, rtol=0, atol=1e-7)

    def test_sd3_crop_matches_diffusers_formula(self):
        spec = diffusers_grid(32, (10, 13), base_size=8, pos_embed_max_size=24)
        got = self.client.table(dataclasses_replace(spec, dtype="float64"))
        full = np.arange(24, dtype=np.float64) * 8 / 24
        want = two_d(32, full, full).reshape(24, 24, 32)[7:17, 5:18].reshape(
            -1, 32)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)

    def test_bad_grid_is_invalid_argument_naming_the_field(self):
        spec = TableSpec(d=16, grid=GridSpec(axes=(GridAxis(4, 8),
                                                   GridAxis(0, 8))))
        with self.assertRaises(posenc.PosencError) as caught:
            self.client.table(spec)
        self.assertEqual(caught.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("spec.grid.axes[1].size", str(caught.exception))


def dataclasses_replace(spec, **changes):
    import dataclasses
    return dataclasses.replace(spec, **changes)


if __name__ == "__main__":
    unittest.main()
