"""The Python client's parsers of hostile input, driven as fuzz/'s libFuzzer
targets drive the C++ ones (Debian 12 has no atheris): seeded random
mutations in a loop bounded in count and time.

- The shared-memory reader (posenc.shared_memory.map_tensor) against the
  mutations of fuzz/shared_mapping_fuzzer.cc: a table file truncated,
  grown, overwritten in place, replaced by a symlink, a directory or a
  FIFO, made writable, given to another owner, replaced by a new inode, and
  answers that lie about offset, size, file_bytes, digest or path. The
  result must be the answer's exact bytes when nothing changed, else
  Unreachable, PosencError DATA_LOSS or ValueError (map_tensor's
  documented errors): never other bytes, another exception or a hang.
- The config.json reader (posenc.spec_from_hf_config) on real configs with
  values replaced by hostile ones (strings, lists, objects, null, bool,
  NaN, huge and negative numbers) and keys removed: a TableSpec or
  ValueError, as documented, never another exception.
"""

import json
import math
import os
import random
import shutil
import stat
import tempfile
import time
import unittest

import grpc
import xxhash

import posenc
from posenc import shared_memory
from posenc.v1 import posenc_pb2

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests",
                        "testdata")
# Each loop stops at whichever comes first.
ROUNDS = 600
SECONDS = 20.0


def same_file(path: str, st: os.stat_result, body: bytes) -> bool:
    """True when `path` is still the regular, read-only file `st` of
    `body`'s bytes (the inode, owner and size the answer pins)."""
    try:
        now = os.lstat(path)
    except OSError:
        return False
    if (not stat.S_ISREG(now.st_mode) or now.st_ino != st.st_ino or
            now.st_uid != st.st_uid or now.st_mode & 0o222 or
            now.st_size != len(body)):
        return False
    with open(path, "rb") as f:
        return f.read() == body


class SharedMemoryReaderTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="posenc-hostile-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def one_round(self, rng: random.Random) -> None:
        path = os.path.join(self.dir, "table")
        for name in ("table", "real", "other"):
            p = os.path.join(self.dir, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.unlink(p)
        count = rng.randrange(1, 1024)
        body = bytes(rng.randrange(256) for _ in range(4 * count))
        with open(path, "wb") as f:
            f.write(body)
        os.chmod(path, 0o444)
        st = os.stat(path)
        first = rng.randrange(count)
        rows = rng.randrange(1, count - first + 1)
        answer = posenc_pb2.SharedMemoryTensor(
            path=path, offset=4 * first, dtype=posenc_pb2.DTYPE_FLOAT32,
            shape=[rows], size_bytes=4 * rows, file_bytes=len(body),
            file_xxh64=xxhash.xxh64_intdigest(body), owner_uid=st.st_uid,
            inode=st.st_ino)
        want = body[4 * first:4 * (first + rows)]
        changes = rng.randrange(256) if rng.random() < 0.9 else 0
        param = rng.randrange(65536)
        if changes & 0x01:  # truncate
            os.chmod(path, 0o644)
            os.truncate(path, param % len(body))
            os.chmod(path, 0o444)
        if changes & 0x02:  # grow
            os.chmod(path, 0o644)
            os.truncate(path, len(body) + 1 + param)
            os.chmod(path, 0o444)
        if changes & 0x04:  # overwrite one byte in place
            os.chmod(path, 0o644)
            with open(path, "r+b") as f:
                at = (param >> 8) % len(body)
                f.seek(at)
                old = f.read(1)
                if old and old[0] != (~param & 0xff):
                    f.seek(at)
                    f.write(bytes([~param & 0xff]))
            os.chmod(path, 0o444)
        if changes & 0x08:  # a symlink to the same bytes
            real = os.path.join(self.dir, "real")
            os.rename(path, real)
            os.symlink(real, path)
        if changes & 0x10:  # a directory or a FIFO in its place
            os.unlink(path)
            if param & 1:
                os.mkdir(path)
            else:
                os.mkfifo(path, 0o444)
        if changes & 0x20 and not os.path.islink(path):  # a write bit
            os.chmod(path, 0o444 | (0o222 & (param | 2)))
        if changes & 0x40 and os.geteuid() == 0:  # another owner
            os.lchown(path, 4242 + (param & 7), -1)
        if changes & 0x80:  # replaced by a new inode
            other = os.path.join(self.dir, "other")
            with open(other, "wb") as f:
                f.write(body)
            os.chmod(other, 0o444)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            os.replace(other, path)
        # Whether the file still is the one the answer describes is read
        # back, as fuzz/shared_mapping_fuzzer.cc does: a change may undo
        # another, and a replacement made after the file was unlinked may
        # get its inode number back (same bytes, mode and owner: the same
        # file to any reader; seen once in an ASan ctest run while a fuzz
        # campaign created and deleted files on the same file system).
        changed = not same_file(path, st, body)
        lie = rng.randrange(8)
        if lie == 1:
            answer.offset += 1 + param
        elif lie == 2:
            answer.size_bytes += 1 + param
        elif lie == 3:
            answer.file_bytes = param << rng.randrange(32)
        elif lie == 4:
            answer.file_xxh64 ^= param | 1
        elif lie == 5:
            answer.offset = 2**64 - 1 - param
        elif lie == 6:
            answer.path = os.path.join(self.dir, "missing", "table")
        changed = changed or (lie not in (0, 3, 7) or
                              answer.file_bytes != len(body))
        what = f"changes {changes:#04x} lie {lie} param {param}"
        try:
            array = shared_memory.map_tensor(answer)
        except shared_memory.Unreachable:
            self.assertTrue(changed, f"unchanged file unreachable: {what}")
            return
        except posenc.PosencError as error:
            self.assertEqual(error.code, grpc.StatusCode.DATA_LOSS, what)
            self.assertTrue(changed, f"unchanged file refused: {what}")
            return
        except ValueError:
            self.assertTrue(changed, f"unchanged answer refused: {what}")
            return
        self.assertEqual(array.tobytes(), want, f"other bytes: {what}")
        self.assertFalse(changed, f"a changed file accepted: {what}")

    def test_MutatedFilesAndAnswers_TheBytesOrADocumentedError(self):
        rng = random.Random(36)
        start = time.monotonic()
        rounds = 0
        while rounds < ROUNDS and time.monotonic() - start < SECONDS:
            self.one_round(rng)
            rounds += 1
        self.assertGreater(rounds, 50)


HOSTILE = ["16", "", [], [1, 2], {}, {"type": "yarn"}, None, True, False,
           0, -1, 1, 3, 2**31, 2**64, 1e308, -1e308, 0.5, 1e-320,
           math.nan, math.inf, -math.inf, "yarn", "longrope", "su"]


def mutate(rng: random.Random, value):
    """`value` (a config or a part of it) with one key or item changed."""
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        if rng.random() < 0.2:
            del value[key]
        elif isinstance(value[key], (dict, list)) and rng.random() < 0.5:
            mutate(rng, value[key])
        else:
            value[key] = rng.choice(HOSTILE)
    elif isinstance(value, list) and value:
        k = rng.randrange(len(value))
        value[k] = rng.choice(HOSTILE)


class HfConfigReaderTest(unittest.TestCase):
    def configs(self):
        out = []
        for sub in ("hf", "models"):
            d = os.path.join(TESTDATA, sub)
            for name in sorted(os.listdir(d)):
                if name.endswith(".json"):
                    with open(os.path.join(d, name), encoding="utf-8") as f:
                        out.append(json.load(f))
        out.append({"hidden_size": 4096, "num_attention_heads": 32,
                    "max_position_embeddings": 131072,
                    "rope_theta": 500000.0,
                    "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                     "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0,
                                     "original_max_position_embeddings":
                                     8192}})
        out.append({"qk_rope_head_dim": 64, "max_position_embeddings": 163840,
                    "rope_scaling": {"type": "yarn", "factor": 40,
                                     "original_max_position_embeddings": 4096,
                                     "beta_fast": 32, "beta_slow": 1,
                                     "mscale": 1.0, "mscale_all_dim": 1.0}})
        out.append({"head_dim": 128, "max_position_embeddings": 4096,
                    "partial_rotary_factor": 0.5,
                    "rope_scaling": {"type": "dynamic", "factor": 2.0}})
        return out

    def test_MutatedConfigs_ATableSpecOrValueError(self):
        rng = random.Random(36)
        configs = self.configs()
        start = time.monotonic()
        rounds = 0
        while rounds < ROUNDS * 5 and time.monotonic() - start < SECONDS:
            config = json.loads(json.dumps(rng.choice(configs)))
            for _ in range(rng.randrange(1, 4)):
                mutate(rng, config)
            try:
                spec = posenc.spec_from_hf_config(config)
            except ValueError:
                pass
            except Exception as error:  # pylint: disable=broad-except
                self.fail(f"{type(error).__name__}: {error} for "
                          f"{json.dumps(config)[:400]}")
            else:
                self.assertIsInstance(spec, posenc.TableSpec)
            rounds += 1
        self.assertGreater(rounds, 50)


if __name__ == "__main__":
    unittest.main()
