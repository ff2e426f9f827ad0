"""Presets: argument spelling, and ResolvePreset against a real server (sync
and asyncio): the resolved spec's rows equal the hand-written spec's.

Run as test_rope.py says; server tests are skipped when POSENC_SERVER is
unset.
"""

import asyncio
import os
import sys
import unittest

import numpy as np

import posenc
import posenc.aio
from posenc import EncodingSpec
from posenc.preset import argument_text
from server_case import ServerCase

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests",
                      "testdata", "models")


class ArgumentTextTest(unittest.TestCase):
    def test_python_spellings(self):
        self.assertEqual(argument_text(True), "True")
        self.assertEqual(argument_text(320), "320")
        self.assertEqual(argument_text(0.1), "0.1")
        self.assertEqual(argument_text(1 / 3), "0.3333333333333333")
        self.assertEqual(argument_text([16, 56, 56]), "[16, 56, 56]")
        self.assertEqual(argument_text((4,)), "[4]")
        with self.assertRaises(TypeError):
            argument_text(object())


@unittest.skipUnless(os.environ.get("POSENC_SERVER"), "POSENC_SERVER unset")
class PresetServerTest(ServerCase):
    def test_diffusers_call_same_rows_as_hand_written_spec(self):
        p = self.client.resolve_preset("diffusers.get_timestep_embedding",
                                       embedding_dim=321,
                                       flip_sin_to_cos=True,
                                       downscale_freq_shift=0,
                                       dtype="bfloat16")
        self.assertEqual(p.name, "diffusers.get_timestep_embedding")
        self.assertIn("diffusers", p.reproduces)
        self.assertFalse(p.spec.is_table)
        by_hand = EncodingSpec(dim=321, layout="concat_cos_sin",
                               pad_odd_dim=True, dtype="bfloat16")
        t = [999.5, 0.25, 0]
        got = self.client.encode(p.spec, t)
        want = self.client.encode(by_hand, t)
        self.assertEqual(got.shape, (3, 321))
        np.testing.assert_array_equal(got, want)

    def test_unet_config_picks_timesteps(self):
        with open(os.path.join(MODELS, "sd15_unet_config.json")) as f:
            p = self.client.resolve_preset(config_json=f.read())
        self.assertEqual(p.name, "diffusers.Timesteps")
        self.assertEqual(p.spec.to_proto().dim, 320)

    def test_unknown_argument_is_invalid_argument_naming_it(self):
        with self.assertRaises(posenc.PosencError) as caught:
            self.client.resolve_preset("flux.timestep_embedding", dim=256,
                                       dims=3)
        self.assertEqual(caught.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("arguments.dims", caught.exception.message)

    def test_asyncio_same_spec(self):
        async def run():
            async with posenc.aio.Client(self.target) as c:
                return await c.resolve_preset("flux.timestep_embedding",
                                              dim=256)
        p = asyncio.run(run())
        self.assertEqual(p.spec.to_proto().scale, 1000)


if __name__ == "__main__":
    unittest.main()
