#!/usr/bin/python3
"""Runs the interop script (SCRIPT.md) with the Python client.

Usage: /usr/bin/python3 interop_py.py HOST:PORT [--shared-memory]
(posenc and its generated posenc.v1 must be importable, see PYTHONPATH).
--shared-memory fetches only the script's GetTable tables, through shared
memory (SCRIPT.md, "Shared memory"; the server runs with --shm_dir).
"""

import hashlib
import mmap
import sys

import numpy as np

import posenc

DTYPE_NAMES = {np.dtype("<f4"): "float32", np.dtype("<f8"): "float64",
               np.dtype("<f2"): "float16", np.dtype("<u2"): "bfloat16"}


def line(rpc, name, array):
    rows, d = array.shape
    digest = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
    print(f"{rpc} {name} {DTYPE_NAMES[array.dtype]} {rows}x{d} "
          f"sha256={digest}")


def error_line(rpc, name, call):
    try:
        call()
        print(f"{rpc} {name} OK")
    except posenc.PosencError as error:
        print(f"{rpc} {name} {error.code_name}")


def tables():
    """The script's successful GetTable tables, by line name, in order."""
    T, R, G = posenc.TableSpec, posenc.RopeScaling, posenc.GridAxis
    return {
        "d4_f32": T(d=4, max_len=16),
        "d512_f64_concat": T(d=512, base=500.5, max_len=40, dtype="float64",
                             layout="concat_sin_cos"),
        "d1024_f16_t2t": T(d=1024, base=1e6, max_len=24, dtype="float16",
                           frequency="t2t"),
        "d64_bf16_cossin": T(d=64, max_len=100, dtype="bfloat16",
                             layout="concat_cos_sin"),
        "rope_llama3_bf16": T(
            d=128, base=500000, max_len=32, dtype="bfloat16",
            layout="rotate_half",
            rope=R(type="llama3", factor=8,
                   original_max_position_embeddings=8192, low_freq_factor=1,
                   high_freq_factor=4)),
        "rope_yarn_pairs_f32": T(
            d=64, base=150000, max_len=16, dtype="float32",
            layout="interleaved_pairs",
            rope=R(type="yarn", factor=32,
                   original_max_position_embeddings=4096, beta_fast=32,
                   beta_slow=1, truncate=False)),
        "rope_longrope_f64": T(
            d=16, max_len=16, dtype="float64", layout="concat_cos_sin",
            rope=R(type="longrope", factor=32,
                   original_max_position_embeddings=4096, seq_len=8192,
                   short_factor=LONGROPE_SHORT, long_factor=LONGROPE_LONG)),
        "grid_crop_f16": T(
            d=32, dtype="float16", layout="concat_sin_cos",
            grid=posenc.GridSpec(
                axes=(G(3, 16, first_index=10, numerator=1, denominator=3),
                      G(5, 16, first_index=9, numerator=1, denominator=3)),
                channel_order=(1, 0), extra_zero_rows=1)),
    }


LONGROPE_SHORT = [1, 1.05, 1.1, 1.25, 1.5, 2, 3, 4.5]
LONGROPE_LONG = [1, 1.5, 2.5, 4, 7, 12, 20, 32.5]


def mapped(array) -> bool:
    """Whether the array's memory is a mapped file (its base chain holds an
    mmap), not received bytes."""
    while array is not None:
        if isinstance(array, mmap.mmap):
            return True
        array = getattr(array, "base", getattr(array, "obj", None))
    return False


def shared_memory(target):
    named = tables()
    with posenc.Client(target, timeout=20, shared_memory=True) as client:
        count = 0
        for name, spec in named.items():
            table = client.table(spec)
            line("GetTable", name, table)
            count += mapped(table)
    print(f"SharedMemory mapped {count} of {len(named)}")


def main():
    if sys.argv[2:] == ["--shared-memory"]:
        shared_memory(sys.argv[1])
        return
    named = tables()
    with posenc.Client(sys.argv[1], timeout=20) as client:
        T = posenc.TableSpec
        for name in ("d4_f32", "d512_f64_concat", "d1024_f16_t2t",
                     "d64_bf16_cossin"):
            line("GetTable", name, client.table(named[name]))

        spec = T(d=512, max_len=64)
        line("StreamRows", "d512_f32_5_37", np.stack(
            [row for _, row in client.rows(spec, start=5, end=37)]))
        spec = T(d=256, max_len=128, dtype="bfloat16", frequency="t2t")
        line("StreamBatches", "d256_bf16_t2t_3_100_by7", np.concatenate(
            [b for _, b in client.batches(spec, start=3, end=100,
                                          rows_per_batch=7)]))
        spec = T(d=128, base=1234.5, max_len=64, dtype="float16",
                 layout="concat_sin_cos")
        line("GetRows", "d128_f16_concat",
             client.gather(spec, [9, 0, 9, 63, 1, 2, 2, 40]))

        error_line("GetTable", "odd_d", lambda: client.table(T(d=5, max_len=8)))
        error_line("GetRows", "past_max_len",
                   lambda: client.gather(T(d=4, max_len=16), [3, 16]))
        error_line("GetTable", "over_max_message",
                   lambda: client.table(T(d=1024, max_len=512)))

        limit = client.stats().server.max_message_bytes
        print(f"GetStats max_message_bytes {limit}")

        R = posenc.RopeScaling  # RoPE
        llama3 = named["rope_llama3_bf16"]
        yarn = named["rope_yarn_pairs_f32"]
        longrope = named["rope_longrope_f64"]
        short, long = LONGROPE_SHORT, LONGROPE_LONG
        dynamic = T(d=32, max_len=40, dtype="float16", layout="rotate_half",
                    rope=R(type="dynamic", factor=2,
                           original_max_position_embeddings=16, seq_len=40))
        bad_list = T(d=16, max_len=16, dtype="float64",
                     layout="concat_cos_sin",
                     rope=R(type="longrope", factor=32,
                            original_max_position_embeddings=4096,
                            seq_len=8192, short_factor=short[:7],
                            long_factor=long))
        yarn_prf = T(d=64, max_len=1, dtype="bfloat16", layout="rotate_half",
                     partial_rotary_factor=0.5,
                     rope=R(type="yarn", factor=40,
                            original_max_position_embeddings=4096,
                            beta_fast=32, beta_slow=1, mscale=1,
                            mscale_all_dim=0.707))
        line("GetTable", "rope_llama3_bf16", client.table(llama3))
        line("GetTable", "rope_yarn_pairs_f32", client.table(yarn))
        line("GetTable", "rope_longrope_f64", client.table(longrope))
        line("StreamBatches", "rope_dynamic_f16_by5", np.concatenate(
            [b for _, b in client.batches(dynamic, start=0, end=40,
                                          rows_per_batch=5)]))
        error_line("GetTable", "rope_bad_list",
                   lambda: client.table(bad_list))

        E = posenc.EncodingSpec  # Encode
        flux = E(dim=256, layout="concat_cos_sin", scale=1000)
        line("Encode", "flux_t_f32",
             client.encode(flux, [0, 0.25, 0.5, 0.999, 1.0 / 3]))
        line("Encode", "sd_pad_f16", client.encode(
            E(dim=321, pad_odd_dim=True, layout="concat_cos_sin",
              dtype="float16"), [999.5, 0, 1, 500.25, -3.75]))
        line("Encode", "diffusers_shift1_f64", client.encode(
            E(dim=64, layout="concat_sin_cos", shift=1, dtype="float64"),
            [0.001, 999, 123.456]))
        line("Encode", "nerf_bf16", client.encode(
            E(frequency="octaves", layout="concat_sin_cos",
              num_frequencies=10, min_freq_exp=0, max_freq_exp=8,
              coordinates=3, include_input=True, dtype="bfloat16"),
            [[0.5, -0.25, 0.1], [0.3, 1, -0.75]]))
        line("Encode", "flux_rope_pairs_f32", client.encode(
            E(axes_dim=(4, 6, 6), layout="interleaved_pairs"),
            [[0, 0, 0], [0, 1, 2], [0, 31, 17]]))
        line("Encode", "qwen2_mrope_bf16", client.encode(
            E(dim=16, max_period=1e6, mrope_section=(2, 3, 3),
              layout="rotate_half", dtype="bfloat16"),
            [[7, 7, 7], [10, 11, 12], [10, 11, 13]]))
        error_line("Encode", "odd_dim", lambda: client.encode(E(dim=5), [1]))
        error_line("Encode", "past_limit",
                   lambda: client.encode(flux, [17000]))

        crop = named["grid_crop_f16"]  # a grid table, max_len unset
        line("GetTable", "grid_crop_f16", client.table(crop))

        T = posenc.TableSpec  # keys of the specs above and tricky bases
        print("Key d4_f32 " + T(d=4, max_len=1).routing_key())
        print("Key d512_f64_concat " + T(d=512, max_len=1, base=500.5, dtype="float64", layout="concat_sin_cos").routing_key())
        print("Key d1024_f16_t2t " + T(d=1024, max_len=1, base=1e6, dtype="float16", frequency="t2t").routing_key())
        print("Key d64_bf16_cossin " + T(d=64, max_len=1, dtype="bfloat16", layout="concat_cos_sin").routing_key())
        print("Key d256_bf16_t2t " + T(d=256, max_len=1, dtype="bfloat16", frequency="t2t").routing_key())
        print("Key d128_f16_concat " + T(d=128, max_len=1, base=1234.5, dtype="float16", layout="concat_sin_cos").routing_key())
        print("Key base_1e21 " + T(d=8, max_len=1, base=1e21).routing_key())
        print("Key base_5e-324 " + T(d=8, max_len=1, base=5e-324).routing_key())
        print("Key base_0.1 " + T(d=8, max_len=1, base=0.1).routing_key())
        print("Key base_123456789012345680000 " + T(d=8, max_len=1, base=123456789012345680000).routing_key())
        print("Key base_1e-7 " + T(d=8, max_len=1, base=1e-7).routing_key())
        print("Key base_1.7976931348623157e308 " + T(d=8, max_len=1, base=1.7976931348623157e308).routing_key())
        print("Key base_0.30000000000000004 " + T(d=8, max_len=1, base=0.30000000000000004).routing_key())
        print("Key base_1e16 " + T(d=8, max_len=1, base=1e16).routing_key())
        print("Key rope_llama3_bf16 " + llama3.routing_key())
        print("Key rope_yarn_pairs_f32 " + yarn.routing_key())
        print("Key rope_longrope_f64 " + longrope.routing_key())
        print("Key rope_dynamic_f16 " + dynamic.routing_key())
        print("Key rope_bad_list " + bad_list.routing_key())
        print("Key rope_yarn_prf " + yarn_prf.routing_key())
        print("Key grid_crop_f16 " + crop.routing_key())
        row = client.gather(T(d=4, max_len=16), [2])[0]
        print("Example d4_pos2 " + " ".join(f"{v:.4f}" for v in row))


if __name__ == "__main__":
    main()
