"""Shared-memory tables (docs/shared_memory.md) against a real posenc_server
with --shm_dir=<a fresh directory under /dev/shm>: the same bits as the
bytes path, the array is the server's file mapped (not a copy), the
fallbacks of step 1, DATA_LOSS for a file that is not the server's, and a
mapping that outlives eviction. Each test starts its own server (ShmServer),
since several change the server's files the way an attacker would."""

import asyncio
import mmap
import os
import shutil
import unittest

import grpc
import numpy as np

import posenc
import posenc.aio
from server_case import ShmServer, private_mount_available

DTYPES = ("float32", "float64", "float16", "bfloat16")


def mapped_file(address: int):
    """The file mapped at `address` in this process (/proc/self/maps; a
    name ends with " (deleted)" once unlinked), or None for memory that is
    no file's (the heap, an anonymous mapping)."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                name = fields[5].strip() if len(fields) == 6 else ""
                return name if name.startswith("/") else None
    return None


async def aio_table(target: str, spec: posenc.TableSpec) -> np.ndarray:
    async with posenc.aio.Client(target, timeout=30,
                                 shared_memory=True) as client:
        return await client.table(spec)


def base_chain(array: np.ndarray) -> list:
    """The objects that keep `array`'s memory: its bases, and a memoryview's
    object (np.frombuffer's base is a memoryview of the buffer)."""
    chain = []
    while array is not None:
        chain.append(array)
        array = getattr(array, "base", getattr(array, "obj", None))
    return chain


class SharedMemoryTest(unittest.TestCase):
    def setUp(self):
        self.server = ShmServer()
        self.shm = posenc.Client(self.server.target, timeout=30,
                                 shared_memory=True)

    def tearDown(self):
        self.shm.close()
        self.server.stop()

    def table_file(self, array: np.ndarray) -> str:
        """The server's file that `array` maps; fails if it maps none."""
        path = mapped_file(array.ctypes.data)
        self.assertIsNotNone(path, "the array is not a mapped file")
        return path

    def test_EveryDtype_SameBitsAsBytesAndMapsTheServersFile(self):
        directory = self.server.directory()
        self.assertTrue(directory.startswith(self.server.shm_dir + "/"),
                        directory)
        for dtype in DTYPES:
            with self.subTest(dtype=dtype):
                spec = posenc.TableSpec(d=64, max_len=300, dtype=dtype)
                mapped = self.shm.table(spec)
                received = self.server.client.table(spec)
                self.assertEqual(mapped.dtype, received.dtype)
                self.assertEqual(mapped.shape, (300, 64))
                self.assertEqual(mapped.tobytes(), received.tobytes())
                path = self.table_file(mapped)
                self.assertEqual(os.path.dirname(path), directory)
                self.assertTrue(os.path.basename(path).startswith("table-"))
                self.assertIsNone(mapped_file(received.ctypes.data))

    def test_Array_IsAReadOnlyViewOfTheMapping(self):
        spec = posenc.TableSpec(d=128, max_len=512)
        table = self.shm.table(spec)
        mappings = [b for b in base_chain(table) if isinstance(b, mmap.mmap)]
        self.assertEqual(len(mappings), 1)
        self.assertTrue(np.shares_memory(
            table, np.frombuffer(mappings[0], dtype=np.uint8)))
        self.assertFalse(table.flags.writeable)
        with self.assertRaises(ValueError):
            table[0, 0] = 1
        # The array holds the mapping: it cannot be closed under it.
        with self.assertRaises(BufferError):
            mappings[0].close()

    def test_FileRemovedBehindTheServer_BytesAndKeepsAsking(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        os.unlink(path)
        calls = self.server.get_table_calls()
        table = self.shm.table(spec)
        # Asked twice: the file is gone (ENOENT), then the bytes.
        self.assertEqual(self.server.get_table_calls(), calls + 2)
        self.assertIsNone(mapped_file(table.ctypes.data))
        self.assertEqual(table.tobytes(),
                         self.server.client.table(spec).tobytes())
        # Its directory is reachable: the next table is mapped again.
        self.table_file(self.shm.table(posenc.TableSpec(d=32, max_len=64)))

    def test_SymlinkInPlaceOfTheFile_NotFollowedBytesInstead(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        os.rename(path, path + ".real")
        os.symlink(path + ".real", path)
        table = self.shm.table(spec)
        self.assertIsNone(mapped_file(table.ctypes.data))
        self.assertEqual(table.tobytes(),
                         self.server.client.table(spec).tobytes())

    def assertDataLoss(self, spec, naming: str):
        with self.assertRaises(posenc.PosencError) as raised:
            self.shm.table(spec)
        self.assertEqual(raised.exception.code, grpc.StatusCode.DATA_LOSS)
        self.assertIn(naming, raised.exception.message)

    def test_SecondCall_ReusesTheCheckedMappingNoNewMap(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        first = self.shm.table(spec)
        second = self.shm.table(spec)
        # The same mapping, not a second one: step 6 skipped mmap and XXH64.
        self.assertEqual(first.ctypes.data, second.ctypes.data)
        self.assertEqual(second.tobytes(),
                         self.server.client.table(spec).tobytes())
        # A new client maps anew.
        with posenc.Client(self.server.target, shared_memory=True) as other:
            third = other.table(spec)
        self.assertNotEqual(third.ctypes.data, first.ctypes.data)
        self.assertEqual(self.table_file(third), self.table_file(first))

    def test_FileMadeWritable_DataLossNamingTheMode(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        os.chmod(path, 0o644)
        self.assertDataLoss(spec, "writable (mode 644)")

    @unittest.skipUnless(os.geteuid() == 0, "chown needs root")
    def test_FileOfAnotherOwner_DataLossNamingTheOwner(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        os.chown(path, 54321, -1)
        self.assertDataLoss(spec, "owner uid 54321")

    def test_FifoInPlaceOfTheFile_DataLossWithoutBlocking(self):
        # Found by fuzz_shared_mapping (C++; the same open here): without
        # O_NONBLOCK, opening a FIFO waits for a writer, so the call hung
        # (ctest's timeout fails this test if it comes back).
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        os.unlink(path)
        os.mkfifo(path, 0o444)
        self.assertDataLoss(spec, "not a regular file")

    def test_BytesChangedInPlace_DataLossNamingTheDigest(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        path = self.table_file(self.shm.table(spec))
        # What the server's user (or root) could do: make it writable, flip
        # one byte, make it read-only again. Inode, owner, size and mode are
        # the server's again; only the bytes differ.
        os.chmod(path, 0o644)
        with open(path, "r+b") as f:
            f.seek(1000)
            byte = f.read(1)[0]
            f.seek(1000)
            f.write(bytes([byte ^ 1]))
        os.chmod(path, 0o444)
        self.assertDataLoss(spec, "XXH64")

    def test_DirectoryReplacedByAPlantedCopy_DataLossServerUnaffected(self):
        spec = posenc.TableSpec(d=64, max_len=256)
        expected = self.shm.table(spec).copy()
        directory = self.server.directory()
        # Another user of a world-writable --shm_dir renames the server's
        # subdirectory and plants its own at the same name, with copies of
        # the files (same names, bytes, mode; as root, the same owner).
        os.rename(directory, directory + ".moved")
        os.mkdir(directory, 0o755)
        for name in os.listdir(directory + ".moved"):
            if name.startswith("table-"):
                shutil.copy(os.path.join(directory + ".moved", name),
                            os.path.join(directory, name))
                os.chmod(os.path.join(directory, name), 0o444)
        self.assertDataLoss(spec, "inode")
        # The server works through its directory's descriptor: it still
        # serves the bytes, and writes a new table into its own directory,
        # which the client then cannot find at the path (bytes, no error).
        self.assertEqual(self.server.client.table(spec).tobytes(),
                         expected.tobytes())
        other = posenc.TableSpec(d=32, max_len=64)
        table = self.shm.table(other)
        self.assertIsNone(mapped_file(table.ctypes.data))
        self.assertEqual(table.tobytes(),
                         self.server.client.table(other).tobytes())
        extra = (set(os.listdir(directory + ".moved")) -
                 set(os.listdir(directory)))
        self.assertIn(".lock", extra)
        self.assertEqual(len([n for n in extra if n.startswith("table-")]), 1,
                         extra)

    def test_Aio_SameBitsMapped(self):
        spec = posenc.TableSpec(d=64, max_len=300, dtype="float16")
        mapped = asyncio.run(aio_table(self.server.target, spec))
        self.table_file(mapped)
        self.assertEqual(mapped.tobytes(),
                         self.server.client.table(spec).tobytes())


@unittest.skipUnless(private_mount_available(),
                     "needs unshare --mount and a tmpfs mount (root)")
class OtherMountNamespaceTest(unittest.TestCase):
    """The server's files are in a tmpfs the client cannot see (another
    host, another container without the volume)."""

    def test_DirectoryUnreachable_BytesThenStopsAsking(self):
        with ShmServer(private_mount=True) as server, posenc.Client(
                server.target, timeout=30, shared_memory=True) as client:
            self.assertFalse(os.path.exists(server.directory()))
            spec = posenc.TableSpec(d=64, max_len=256, dtype="bfloat16")
            calls = server.get_table_calls()
            table = client.table(spec)
            self.assertEqual(server.get_table_calls(), calls + 2)
            self.assertEqual(table.tobytes(),
                             server.client.table(spec).tobytes())
            # It no longer asks: one call per table.
            calls = server.get_table_calls()
            client.table(posenc.TableSpec(d=32, max_len=64))
            self.assertEqual(server.get_table_calls(), calls + 1)
            # The same with asyncio.
            other = posenc.TableSpec(d=16, max_len=64, dtype="float16")
            calls = server.get_table_calls()
            table = asyncio.run(aio_table(server.target, other))
            self.assertEqual(server.get_table_calls(), calls + 2)
            self.assertEqual(table.tobytes(),
                             server.client.table(other).tobytes())


# Two 2 MiB tables of different families in a 3 MiB cache: the second
# evicts the first once admitted (asked for more often than the first).
FIRST = posenc.TableSpec(d=512, max_len=1024)
SECOND = posenc.TableSpec(d=256, max_len=2048)


def evict_first(server: ShmServer, test: unittest.TestCase) -> None:
    evictions = server.client.stats().cache.evictions
    for _ in range(5):
        server.client.table(SECOND)
        if server.client.stats().cache.evictions > evictions:
            return
    test.fail("the second table never evicted the first")


class EvictionTest(unittest.TestCase):
    def setUp(self):
        self.server = ShmServer(("--cache_bytes=3145728",))

    def tearDown(self):
        self.server.stop()

    def test_Evicted_ClientKeepsNoDescriptorOfTheUnlinkedFile(self):
        with posenc.Client(self.server.target, shared_memory=True) as client:
            path = mapped_file(client.table(FIRST).ctypes.data)
            evict_first(self.server, self)
            client.table(SECOND)  # drops the entry of the unlinked file
            fds = [os.readlink(f"/proc/self/fd/{fd}")
                   for fd in os.listdir("/proc/self/fd")
                   if os.path.exists(f"/proc/self/fd/{fd}")]
            self.assertNotIn(path + " (deleted)", fds)
            self.assertNotIn(path, fds)

    def test_EvictedWhileMapped_ArrayKeepsValuesFileUnlinked(self):
        with posenc.Client(self.server.target, shared_memory=True) as client:
            table = client.table(FIRST)
        expected = table.copy()
        path = mapped_file(table.ctypes.data)
        self.assertTrue(os.path.exists(path), path)
        evict_first(self.server, self)
        self.assertFalse(os.path.exists(path))
        self.assertEqual(mapped_file(table.ctypes.data), path + " (deleted)")
        np.testing.assert_array_equal(table, expected)
        np.testing.assert_array_equal(
            table, self.server.client.table(FIRST))  # computed again


if __name__ == "__main__":
    unittest.main()
