#!/usr/bin/python3
"""bench/shm_read_python.py: a cached 16 MiB table read whole by a Python
client, through shared memory and the alternatives, side by side (issue 25
item 5).

One posenc_server with --shm_dir=<a fresh directory under /dev/shm>; the
table d=512, max_len=8192, float32 (16 MiB) is computed and cached once
before timing. Each round times every way below REPS times, in an order
that rotates from round to round, and keeps each way's fastest call (on a
busy machine a call that another process preempts takes a scheduler slice,
about 4 ms here, longer: that is not its own time); each ratio is taken
within the round. Each timed call includes dropping its result
(munmap or free), as a caller's loop would.

  shm       posenc.Client(shared_memory=True).table() of a table the client
            has read before: the RPC, open, fstat (same inode, owner,
            mode, size, ctime, mtime as when its XXH64 was checked) and a
            view of the mapping it kept (docs/shared_memory.md, step 6)
  shm_first the same call for a file the client has not mapped yet (its
            kept mappings dropped before each call): the RPC, open,
            fstat, mmap, XXH64 over all 16 MiB and the array
  grpc      posenc.Client().table(): today's bytes path
  numpy     numpy computing the same table locally, the fastest version
            found: float32 positions x frequencies, sin and cos written
            straight into the interleaved output (inexact: its largest
            error against posenc's exact table is printed)
  copy      np.copy of the 16 MiB table, a new array each time as each
            read gives one (the verdict's copy); glibc hands back the block
            the previous copy freed, so it takes no page faults
  copyto    np.copyto into one preallocated array: the bandwidth alone
  fresh     a copy into pages never touched before (an anonymous mmap per
            call): the copy with the page faults a mapping takes
  and the parts of the shm way: its RPC alone (rpc: GetTable answering
  where the file is), steps 1-4 of docs/shared_memory.md without it (map:
  open, fstat, mmap, XXH64 over the mapping, munmap: the floor of any
  shared-memory read that checks the digest), and XXH64 of the same 16 MiB
  in ordinary memory (xxh64: map - xxh64 is what mapping costs).

Prints each way's time and each ratio as the median of the rounds with its
95% confidence interval (bench/noise.py), with verdicts against issue 25's
targets: grpc/shm >= 10, numpy/shm >= 5, copy/shm >= 0.5, for the
repeated read (shm) and the first read (shm_first) alike. Exit status 1
when a target is MISSED, 2 when the server gives no shared memory.

The directory is under /dev/shm (4 KiB pages: mapping 16 MiB sets 4096
page-table entries, and unmapping clears them). --huge-tmpfs puts it on a
private tmpfs mounted with huge=within_size instead (2 MiB pages; needs
root: the tool re-runs itself under unshare --mount).

Usage: bench/shm_read_python.py [--build BUILD] [--rounds 15] [--reps 5]
       [--seconds 300] [--huge-tmpfs]   (a Release build of posenc_server
       and the Python stubs: cmake --build build --target posenc_server
       posenc_python_stubs)
"""

import argparse
import gc
import math
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import noise  # noqa: E402 (bench/noise.py: median, 95% CI, verdict)
from server_process import ServerProcess  # noqa: E402

D, MAX_LEN = 512, 8192
TARGETS = (("grpc", 10.0), ("numpy", 5.0), ("copy", 0.5))


def numpy_table() -> np.ndarray:
    """posenc's default table (interleaved sin, cos; base 10000) computed by
    numpy as fast as found here: float32 angles, sin and cos written into
    the strided halves of the output (float64 angles: about 2x slower;
    sin and cos into arrays then interleaved: 1.5x)."""
    positions = np.arange(MAX_LEN, dtype=np.float32)[:, None]
    frequencies = np.exp(np.arange(0, D, 2, dtype=np.float32) *
                         np.float32(-math.log(10000.0) / D))
    angles = positions * frequencies
    out = np.empty((MAX_LEN, D // 2, 2), dtype=np.float32)
    np.sin(angles, out=out[..., 0])
    np.cos(angles, out=out[..., 1])
    return out.reshape(MAX_LEN, D)


def map_file(path: str, size: int) -> int:
    """Steps 1-4 of docs/shared_memory.md (as posenc.shared_memory): the
    file's XXH64; the mapping is dropped on return."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fstat(fd)
        mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED,
                            prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    with mapping:
        return xxhash.xxh64_intdigest(memoryview(mapping))


def in_huge_tmpfs() -> int:
    """Runs this tool again, without --huge-tmpfs, in a mount namespace of
    its own where a fresh directory has a tmpfs mounted huge=within_size."""
    argv = [a for a in sys.argv[1:] if a != "--huge-tmpfs"]
    mount_point = tempfile.mkdtemp(prefix="posenc-bench-huge-")
    try:
        return subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount -t tmpfs -o size=256m,huge=within_size posenc-bench "$1"'
             ' && shift && exec "$@"', "huge-tmpfs", mount_point,
             sys.executable, os.path.abspath(__file__), *argv,
             f"--shm-parent={mount_point}"], timeout=1800).returncode
    finally:
        os.rmdir(mount_point)


def mount_of(path: str) -> str:
    """The mount holding `path` and its options (/proc/self/mounts)."""
    best = ("", "?")
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            _, point, kind, options = line.split()[:4]
            if (path + "/").startswith(point.rstrip("/") + "/") and \
                    len(point) >= len(best[0]):
                best = (point, f"{point} {kind} ({options})")
    return best[1]


def fresh_copy(table: np.ndarray) -> mmap.mmap:
    pages = mmap.mmap(-1, table.nbytes)
    np.copyto(np.frombuffer(pages, dtype=table.dtype).reshape(table.shape),
              table)
    return pages


def timed(call) -> float:
    start = time.perf_counter()
    result = call()
    del result
    return time.perf_counter() - start


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seconds", type=float, default=300,
                   help="stop after the round that passes this")
    p.add_argument("--huge-tmpfs", action="store_true",
                   help="the directory on a private tmpfs, huge=within_size")
    p.add_argument("--shm-parent", default="/dev/shm", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not 1 <= args.rounds <= 100 or not 1 <= args.reps <= 50:
        p.error("--rounds 1..100, --reps 1..50")
    if args.huge_tmpfs:
        if os.geteuid() != 0:
            print("shm_read_python: --huge-tmpfs skipped: mounting a tmpfs "
                  "needs root")
            return 0
        return in_huge_tmpfs()
    sys.path[:0] = [os.path.join(ROOT, "client", "python"),
                    os.path.join(args.build, "tests", "interop", "python")]
    import posenc
    from posenc.v1 import posenc_pb2, posenc_pb2_grpc

    shm_dir = tempfile.mkdtemp(prefix="posenc-bench-", dir=args.shm_parent)
    print(f"Shared-memory directory on: {mount_of(shm_dir)}")
    log_dir = tempfile.TemporaryDirectory()
    server = ServerProcess(os.path.join(args.build, "server", "posenc_server"),
                           os.path.join(log_dir.name, "server.log"),
                           (f"--shm_dir={shm_dir}",))
    try:
        target = f"127.0.0.1:{server.wait_for_port()}"
        spec = posenc.TableSpec(d=D, max_len=MAX_LEN)
        with posenc.Client(target, shared_memory=True) as shm, \
                posenc.Client(target) as plain:
            return run(args, posenc, posenc_pb2, posenc_pb2_grpc, shm, plain,
                       spec)
    finally:
        server.stop()
        shutil.rmtree(shm_dir, ignore_errors=True)
        log_dir.cleanup()


def run(args, posenc, posenc_pb2, posenc_pb2_grpc, shm, plain, spec) -> int:
    table = plain.table(spec).copy()  # computed and cached; warm copy source
    stub = posenc_pb2_grpc.PositionalEncodingStub(plain._channel)
    request = posenc_pb2.GetTableRequest(spec=spec.to_proto(),
                                         accept_shared_memory=True)
    answer = stub.GetTable(request, timeout=30)
    if not answer.HasField("shared_memory"):
        print("shm_read_python: the server answered with bytes, not shared "
              "memory (was it started with --shm_dir?)", file=sys.stderr)
        return 2
    mapped = shm.table(spec)
    if not any(isinstance(b, mmap.mmap) for b in _bases(mapped)) or \
            mapped.tobytes() != table.tobytes():
        print("shm_read_python: the shared-memory read is not the mapped "
              "table", file=sys.stderr)
        return 2
    del mapped
    error = float(np.max(np.abs(numpy_table() - table)))
    path, size = answer.shared_memory.path, answer.shared_memory.file_bytes
    dst = np.empty_like(table)
    def first_read():
        shm._shm.close()  # forget the checked mappings: map and hash anew
        return shm.table(spec)

    ways = {
        "shm": lambda: shm.table(spec),
        "shm_first": first_read,
        "grpc": lambda: plain.table(spec),
        "numpy": numpy_table,
        "copy": lambda: np.copy(table),
        "copyto": lambda: np.copyto(dst, table),
        "fresh": lambda: fresh_copy(table),
        "rpc": lambda: stub.GetTable(request, timeout=30),
        "map": lambda: map_file(path, size),
        "xxh64": lambda: xxhash.xxh64_intdigest(table),
    }
    names = list(ways)
    times = {n: [] for n in names}
    start = time.monotonic()
    gc.disable()
    try:
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                times[n].append(min(
                    timed(ways[n]) for _ in range(args.reps)) * 1e3)
            if time.monotonic() - start > args.seconds:
                break
    finally:
        gc.enable()
    rounds = len(times["shm"])
    print(f"Table d={D} max_len={MAX_LEN} float32 ({table.nbytes >> 20} MiB),"
          f" cached; {rounds} rounds of {args.reps} calls per way, each "
          "way's fastest per round; numpy's largest error against the exact "
          f"table {error:.3g}.")
    for n in names:
        print(noise.ci_line(f"{n} ms", times[n]))
    ratios = {n: [o / s for o, s in zip(times[n], times["shm"])]
              for n in names}
    missed = False
    for n, goal in TARGETS:
        r = noise.verdict(ratios[n], goal)
        missed |= r.missed
        print(r.line(f"{n} / shm (time ratio: shm is this many times "
                     "faster)"))
    for n, goal in TARGETS:
        r = noise.verdict([o / s for o, s in zip(times[n],
                                                 times["shm_first"])], goal)
        missed |= r.missed
        print(r.line(f"{n} / shm_first (time ratio, first read of the "
                     "file by this client)"))
    print(noise.ci_line("copyto / shm (time ratio; copy into a preallocated "
                        "array)", ratios["copyto"]))
    print(noise.ci_line("fresh / shm (time ratio; copy into new pages)",
                        ratios["fresh"]))
    for n, _ in TARGETS:
        print(noise.ci_line(f"{n} / map (the best {n} / shm_first possible "
                            "with a free RPC)",
                            [t / f for t, f in zip(times[n], times["map"])]))
    return 1 if missed else 0


def _bases(array):
    while array is not None:
        yield array
        array = getattr(array, "base", getattr(array, "obj", None))


if __name__ == "__main__":
    sys.exit(main())
