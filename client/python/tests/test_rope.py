"""RoPE specs: routing keys, spec_from_hf_config, and tables from a server.

Run (Debian's Python, stubs from gen_stubs.sh):
    client/python/gen_stubs.sh /tmp/py && \\
    POSENC_SERVER=build/server/posenc_server \\
    PYTHONPATH=client/python:/tmp/py /usr/bin/python3 -m unittest \\
        discover -s client/python/tests
Server tests are skipped when POSENC_SERVER is unset.
"""

import json
import os
import sys
import tempfile
import unittest

import numpy as np

import posenc
from posenc import RopeScaling, TableSpec, spec_from_hf_config
from posenc.spec import _fnv1a64, fnv1a64_hex
from server_case import ServerCase

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))

PHI3_SHORT = [1.05, 1.05, 1.05, 1.1, 1.1, 1.2, 1.3, 1.5]
PHI3_LONG = [1.08, 1.1, 1.3, 2.5, 6.0, 12.0, 30.0, 64.0]

# Mirrors Llama 3.1 8B's config.json (rope_scaling as published).
LLAMA31 = {
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8,
    "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192,
                     "rope_type": "llama3"},
}
# Mirrors Qwen2.5-7B-Instruct with its documented YaRN rope_scaling.
QWEN25_YARN = {
    "hidden_size": 3584, "num_attention_heads": 28,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768,
                     "type": "yarn"},
}
# Mirrors DeepSeek-V3's config.json: YaRN with mscale; no head_dim, and
# hidden_size / num_attention_heads = 56 is not its rotary size: only
# qk_rope_head_dim = 64 channels of each head are rotated.
DEEPSEEK_V3 = {
    "hidden_size": 7168, "num_attention_heads": 128,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "max_position_embeddings": 163840, "rope_theta": 10000,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
                     "mscale": 1.0, "mscale_all_dim": 1.0,
                     "original_max_position_embeddings": 4096,
                     "type": "yarn"},
}
# Mirrors Phi-3-mini-128k-instruct (partial rotary factor added, lists
# shortened to d_rot/2 = 8 for head_dim 32 * 0.5).
PHI3_128K = {
    "hidden_size": 256, "num_attention_heads": 8,
    "partial_rotary_factor": 0.5,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
    "rope_scaling": {"long_factor": PHI3_LONG, "short_factor": PHI3_SHORT,
                     "type": "longrope"},
}
# microsoft/Phi-3-mini-128k-instruct's config.json in HF's two layouts
# (tests/testdata/hf; its README says where the values come from): M at the
# top level with rope_scaling (as published), or inside rope_parameters
# (transformers v5); neither sets factor, so HF uses 131072 / 4096 = 32.
HF_TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                           "tests", "testdata", "hf")
PHI3_TOP_LEVEL = os.path.join(HF_TESTDATA, "phi3_mini_128k_top_level.json")
PHI3_ROPE_PARAMETERS = os.path.join(HF_TESTDATA,
                                    "phi3_mini_128k_rope_parameters.json")
# HF's LongRoPE attention factor sqrt(1 + ln 32 / ln 4096) = sqrt(17 / 12).
PHI3_ATTENTION_FACTOR = 1.1902380714238083
# Mirrors Llama 2 7B: no rope_scaling, no rope_theta.
LLAMA2 = {"hidden_size": 4096, "num_attention_heads": 32,
          "max_position_embeddings": 4096, "rope_scaling": None}


class RoutingKeyTest(unittest.TestCase):
    def test_fnv1a64(self):
        self.assertEqual(_fnv1a64(b""), 0xcbf29ce484222325)
        self.assertEqual(_fnv1a64(b"a"), 0xaf63dc4c8601ec8c)
        self.assertEqual(_fnv1a64(b"foobar"), 0x85944171f73967e8)
        # [1.0] is the bytes 00 00 00 00 00 00 f0 3f.
        one = bytes(6) + bytes([0xf0, 0x3f])
        self.assertEqual(fnv1a64_hex([1.0]), f"{_fnv1a64(one):016x}")

    def test_proto_example(self):
        spec = TableSpec(d=128, max_len=7, base=500000, dtype="bfloat16",
                         layout="rotate_half", rope=RopeScaling(
                             type="llama3", factor=8,
                             original_max_position_embeddings=8192,
                             low_freq_factor=1, high_freq_factor=4))
        self.assertEqual(
            spec.routing_key(),
            "d=128;base=500000;dtype=bfloat16;layout=rotate_half;freq=paper;"
            "rope=llama3;factor=8;original_max_position_embeddings=8192;"
            "low_freq_factor=1;high_freq_factor=4")

    def test_no_rope_fields_no_suffix(self):
        plain = "d=64;base=10000;dtype=float32;layout=interleaved_pairs;" \
                "freq=paper"
        self.assertEqual(TableSpec(d=64, max_len=1,
                                   layout="interleaved_pairs").routing_key(),
                         plain)
        self.assertEqual(TableSpec(d=64, max_len=1, layout="interleaved_pairs",
                                   rope=RopeScaling()).routing_key(), plain)
        self.assertEqual(
            TableSpec(d=64, max_len=1, layout="interleaved_pairs",
                      rope=RopeScaling(type="default")).routing_key(),
            plain + ";rope=default")
        # Unset type with a field set: the type is written resolved.
        self.assertEqual(
            TableSpec(d=64, max_len=1, rope=RopeScaling(factor=2)
                      ).routing_key(),
            "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;"
            "rope=default;factor=2")

    def test_prf_and_longrope_lists(self):
        spec = spec_from_hf_config(PHI3_128K, max_len=16, seq_len=8192)
        self.assertEqual(
            spec.routing_key(),
            "d=16;base=10000;dtype=float32;layout=rotate_half;freq=paper;"
            "rope=longrope;factor=32;"
            "original_max_position_embeddings=4096;seq_len=8192;"
            f"short_factor={fnv1a64_hex(PHI3_SHORT)};"
            f"long_factor={fnv1a64_hex(PHI3_LONG)}")
        self.assertEqual(fnv1a64_hex(PHI3_SHORT), "732e9efefed7358c")
        self.assertEqual(fnv1a64_hex(PHI3_LONG), "84e1c9d8b811ea04")

    def test_prf_folded_into_d(self):
        # The server resolves partial_rotary_factor into d (int of the
        # double product): (d, factor) and (rotary d, no factor) share a key.
        rope = RopeScaling(type="linear", factor=2)
        for d, prf, rotary in ((64, 0.5, 32), (64, 1.0, 64), (96, 0.25, 24),
                               (100, 0.29, 28)):  # 100*0.29 = 28.99...96
            folded = TableSpec(d=d, max_len=16, layout="rotate_half",
                               partial_rotary_factor=prf, rope=rope)
            plain = TableSpec(d=rotary, max_len=16, layout="rotate_half",
                              rope=rope)
            self.assertEqual(folded.routing_key(), plain.routing_key())
            self.assertTrue(folded.routing_key().startswith(f"d={rotary};"))
        self.assertEqual(
            TableSpec(d=64, max_len=1, partial_rotary_factor=1.5
                      ).routing_key(),
            "d=64;base=10000;dtype=float32;layout=interleaved;freq=paper;"
            "prf=1.5")

    def test_yarn_truncate_and_doubles(self):
        spec = TableSpec(d=64, max_len=1, base=150000, layout="rotate_half",
                         rope=RopeScaling(type="yarn", factor=32,
                                          original_max_position_embeddings=4096,
                                          beta_fast=32, beta_slow=1,
                                          truncate=False))
        self.assertEqual(
            spec.routing_key(),
            "d=64;base=150000;dtype=float32;layout=rotate_half;freq=paper;"
            "rope=yarn;factor=32;original_max_position_embeddings=4096;"
            "beta_fast=32;beta_slow=1;truncate=false")
        spec = TableSpec(d=8, max_len=1, partial_rotary_factor=0.25,
                         rope=RopeScaling(type="linear", factor=1e-7))
        self.assertEqual(
            spec.routing_key(),
            "d=2;base=10000;dtype=float32;layout=interleaved;freq=paper;"
            "rope=linear;factor=1e-7")


class HfConfigTest(unittest.TestCase):
    def test_llama31(self):
        spec = spec_from_hf_config(LLAMA31, max_len=64)
        self.assertEqual(spec, TableSpec(
            d=128, max_len=64, base=500000.0, layout="rotate_half",
            rope=RopeScaling(type="llama3", factor=8.0,
                             original_max_position_embeddings=8192,
                             low_freq_factor=1.0, high_freq_factor=4.0)))
        self.assertEqual(spec.width(), 256)

    def test_yarn(self):
        qwen = spec_from_hf_config(QWEN25_YARN, max_len=8)
        self.assertEqual(qwen.d, 128)
        self.assertEqual(qwen.rope, RopeScaling(
            type="yarn", factor=4.0, original_max_position_embeddings=32768))
        deepseek = spec_from_hf_config(DEEPSEEK_V3, max_len=8,
                                       dtype="bfloat16",
                                       layout="interleaved_pairs")
        self.assertEqual(deepseek.d, 64)
        self.assertEqual(deepseek.rope, RopeScaling(
            type="yarn", factor=40.0, original_max_position_embeddings=4096,
            beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0))

    def test_longrope_and_su(self):
        spec = spec_from_hf_config(PHI3_128K)
        self.assertEqual(spec.max_len, 131072)
        self.assertEqual(spec.partial_rotary_factor, 0.5)
        self.assertEqual(spec.rope.factor, 32.0)
        self.assertEqual(spec.rope.original_max_position_embeddings, 4096)
        self.assertEqual(spec.width(), 32)
        su = dict(PHI3_128K, rope_scaling=dict(PHI3_128K["rope_scaling"],
                                               type="su"))
        self.assertEqual(spec_from_hf_config(su), spec)

    def check_phi3_mini_128k(self, spec):
        self.assertEqual((spec.d, spec.max_len, spec.base),
                         (96, 131072, 10000.0))
        self.assertEqual(spec.rope.type, "longrope")
        self.assertEqual(spec.rope.factor, 32.0)
        self.assertEqual(spec.rope.original_max_position_embeddings, 4096)
        self.assertEqual(spec.rope.attention_factor, 0.0)  # HF's default
        self.assertEqual(len(spec.rope.short_factor), 48)
        self.assertEqual(spec.rope.long_factor[-1], 64.81001281738281)

    def test_phi3_mini_128k_top_level_layout_factor_is_context_ratio(self):
        self.check_phi3_mini_128k(spec_from_hf_config(PHI3_TOP_LEVEL))

    def test_phi3_mini_128k_rope_parameters_layout_factor_is_ratio(self):
        spec = spec_from_hf_config(PHI3_ROPE_PARAMETERS)
        self.check_phi3_mini_128k(spec)
        self.assertEqual(spec, spec_from_hf_config(PHI3_TOP_LEVEL))
        # The same keys under the name rope_scaling.
        with open(PHI3_ROPE_PARAMETERS, encoding="utf-8") as f:
            config = json.load(f)
        config["rope_scaling"] = config.pop("rope_parameters")
        self.assertEqual(spec_from_hf_config(config), spec)

    def test_longrope_explicit_factor_taken_over_ratio(self):
        config = {"head_dim": 8, "max_position_embeddings": 131072,
                  "rope_parameters": {
                      "rope_type": "longrope", "factor": 16.0,
                      "original_max_position_embeddings": 4096,
                      "short_factor": [1] * 4, "long_factor": [2] * 4}}
        rope = spec_from_hf_config(config).rope
        self.assertEqual((rope.factor, rope.original_max_position_embeddings),
                         (16.0, 4096))

    def test_longrope_no_original_anywhere_factor_one(self):
        config = {"head_dim": 8, "max_position_embeddings": 4096,
                  "rope_scaling": {"type": "longrope",
                                   "short_factor": [1] * 4,
                                   "long_factor": [2] * 4}}
        rope = spec_from_hf_config(config).rope
        self.assertEqual((rope.factor, rope.original_max_position_embeddings),
                         (1.0, 4096))

    def test_dynamic_linear_default_and_rope_parameters(self):
        dynamic = spec_from_hf_config(
            dict(LLAMA2, rope_scaling={"type": "dynamic", "factor": 2.0}),
            seq_len=8192)
        self.assertEqual(dynamic.rope, RopeScaling(
            type="dynamic", factor=2.0, original_max_position_embeddings=4096,
            seq_len=8192))
        linear = spec_from_hf_config(
            dict(LLAMA2, rope_scaling={"rope_type": "linear", "factor": 4}))
        self.assertEqual(linear.rope, RopeScaling(type="linear", factor=4.0))
        plain = spec_from_hf_config(LLAMA2)
        self.assertEqual(plain, TableSpec(d=128, max_len=4096, base=10000.0,
                                          layout="rotate_half"))
        v5 = {"head_dim": 128, "max_position_embeddings": 4096,
              "rope_parameters": {"rope_type": "default",
                                  "rope_theta": 10000.0}}
        self.assertEqual(spec_from_hf_config(v5), plain)

    def test_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                json.dump(LLAMA31, f)
            self.assertEqual(spec_from_hf_config(path),
                             spec_from_hf_config(LLAMA31))

    def test_bad_configs(self):
        with self.assertRaisesRegex(ValueError, "unknown rope type 'mrope'"):
            spec_from_hf_config(dict(LLAMA2, rope_scaling={"type": "mrope"}))
        with self.assertRaisesRegex(ValueError, "must be even"):
            spec_from_hf_config(dict(LLAMA2, partial_rotary_factor=1 / 128))
        with self.assertRaisesRegex(ValueError, "must be even"):
            spec_from_hf_config({"head_dim": 6, "partial_rotary_factor": 0.5,
                                 "max_position_embeddings": 8})
        short = dict(PHI3_128K, rope_scaling=dict(
            PHI3_128K["rope_scaling"], short_factor=PHI3_SHORT[:5]))
        with self.assertRaisesRegex(ValueError,
                                    r"short_factor has 5 values.* 8"):
            spec_from_hf_config(short)


    def test_IllTypedSettings_ValueErrorNotTypeError(self):
        # Found by test_hostile_inputs.py: each raised TypeError,
        # ZeroDivisionError or OverflowError instead of the documented
        # ValueError.
        bad = [
            dict(LLAMA2, num_attention_heads="32"),
            dict(LLAMA2, num_attention_heads=0),
            {"head_dim": [128], "max_position_embeddings": 8},
            {"head_dim": float("inf"), "max_position_embeddings": 8},
            dict(LLAMA2, partial_rotary_factor={}),
            dict(LLAMA2, rope_theta=[1]),
            dict(LLAMA2, rope_scaling={"type": {}}),
            dict(LLAMA2, rope_scaling={"type": "linear", "factor": [2]}),
            dict(PHI3_128K, rope_scaling=dict(PHI3_128K["rope_scaling"],
                                              short_factor=1.5)),
            dict(LLAMA2, max_position_embeddings=[4096],
                 rope_scaling={"type": "yarn", "factor": 4.0,
                               "original_max_position_embeddings": 1024}),
        ]
        for config in bad:
            with self.subTest(config=str(config)[:80]):
                with self.assertRaisesRegex(ValueError, "ill-typed"):
                    spec_from_hf_config(config)

@unittest.skipUnless(os.environ.get("POSENC_SERVER"), "POSENC_SERVER unset")
class ServerTest(ServerCase):
    def config_file(self, config):
        path = os.path.join(self.tmp.name, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        return path

    def check_shape(self, spec, width):
        table = self.client.table(spec)
        self.assertEqual(table.shape, (spec.max_len, width))
        self.assertEqual(spec.width(), width)
        rows = self.client.gather(spec, [3, 1])
        self.assertEqual(rows.shape, (2, width))
        np.testing.assert_array_equal(rows[0], table[3])
        for position, row in self.client.rows(spec, start=5, end=6):
            np.testing.assert_array_equal(row, table[5])
        return table

    def test_llama31(self):
        spec = spec_from_hf_config(self.config_file(LLAMA31), max_len=32,
                                   dtype="bfloat16")
        self.check_shape(spec, 256)
        # Interleaved pairs hold the same values, each twice.
        table = self.client.table(spec)
        pairs = self.client.table(
            spec_from_hf_config(LLAMA31, max_len=32, dtype="bfloat16",
                                layout="interleaved_pairs"))
        np.testing.assert_array_equal(pairs[:, 0:128:2], table[:, :64])
        np.testing.assert_array_equal(pairs[:, 128::2], table[:, 128:192])

    def test_yarn(self):
        self.check_shape(spec_from_hf_config(self.config_file(QWEN25_YARN),
                                             max_len=16), 256)
        table = self.check_shape(
            spec_from_hf_config(self.config_file(DEEPSEEK_V3), max_len=16,
                                dtype="float64"), 128)
        # mscale == mscale_all_dim: attention factor 1, so cos(0) = 1.
        self.assertEqual(table[0, 0], 1.0)

    def test_longrope(self):
        path = self.config_file(PHI3_128K)
        short = self.check_shape(spec_from_hf_config(path, max_len=16), 32)
        long = self.check_shape(spec_from_hf_config(path, max_len=16,
                                                    seq_len=8192), 32)
        self.assertFalse(np.array_equal(short, long))

    def test_phi3_mini_128k_both_layouts_row_zero_is_attention_factor(self):
        tables = [self.client.table(spec_from_hf_config(
            path, max_len=8, dtype="float64"))
            for path in (PHI3_TOP_LEVEL, PHI3_ROPE_PARAMETERS)]
        self.assertEqual(tables[0].shape, (8, 192))
        # rotate_half row 0: cos(0) * a, then sin(0) * a.
        self.assertTrue((tables[0][0, :96] == PHI3_ATTENTION_FACTOR).all())
        self.assertTrue((tables[0][0, 96:] == 0.0).all())
        np.testing.assert_array_equal(tables[0], tables[1])

    def test_plain_matches_concat_cos_sin(self):
        spec = spec_from_hf_config(self.config_file(LLAMA2), max_len=64,
                                   dtype="float64")
        self.assertIsNone(spec.rope)
        table = self.check_shape(spec, 256)
        cos_sin = self.client.table(
            spec_from_hf_config(LLAMA2, max_len=64, dtype="float64",
                                layout="concat_cos_sin"))
        self.assertEqual(cos_sin.shape, (64, 128))
        np.testing.assert_array_equal(table[:, :64], cos_sin[:, :64])
        np.testing.assert_array_equal(table[:, 64:128], cos_sin[:, :64])
        np.testing.assert_array_equal(table[:, 128:192], cos_sin[:, 64:])
        np.testing.assert_array_equal(table[:, 192:], cos_sin[:, 64:])

    def test_server_names_bad_field(self):
        spec = TableSpec(d=16, max_len=4, layout="rotate_half",
                         rope=RopeScaling(type="longrope",
                                          original_max_position_embeddings=4,
                                          short_factor=[1.0] * 3,
                                          long_factor=[1.0] * 8))
        with self.assertRaises(posenc.PosencError) as caught:
            self.client.table(spec)
        self.assertEqual(caught.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("spec.rope.short_factor", caught.exception.message)
        odd = TableSpec(d=12, max_len=4, layout="rotate_half",
                        partial_rotary_factor=0.25)
        with self.assertRaises(posenc.PosencError) as caught:
            self.client.table(odd)
        self.assertEqual(caught.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("partial_rotary_factor", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
