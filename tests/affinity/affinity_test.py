#!/usr/bin/python3
"""The affinity tests: 3 real posenc_server processes behind a real HAProxy
(deploy/haproxy/haproxy.cfg, unchanged) on 127.0.0.1, driven by the real
Python client (which sends the x-posenc-table routing key) and by raw stubs
(which send none).

Usage: affinity_test.py --server BIN --python-path P --haproxy-cfg CFG SCENARIO
Each SCENARIO is one ctest (label affinity); see SCENARIOS at the bottom.
Every wait is bounded; every process is stopped on every exit path (and dies
with this one, via PR_SET_PDEATHSIG).
"""

import argparse
import ctypes
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SERVER_START_SECONDS = 20
PROXY_START_SECONDS = 10
# Replicas' cache: large enough to hold every family of these tests.
CACHE_BYTES = 256 << 20


def die_with_parent():
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(target, process, seconds=10):
    """Returns once `target` (host:port) accepts connections; raises if
    `process` dies first or `seconds` pass."""
    host, port = target.rsplit(":", 1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.alive():
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{target} did not open:\n{process.tail()}")


class Process:
    def __init__(self, argv, log_path, env=None):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            argv, stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=env, preexec_fn=die_with_parent)

    def tail(self):
        with open(self.log_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")

    def alive(self):
        return self.process.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.alive():
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if not self.log.closed:
            self.log.close()


class Replica(Process):
    def __init__(self, binary, log_path, flags):
        super().__init__([binary, "--listen=127.0.0.1:0",
                          f"--cache_bytes={CACHE_BYTES}", *flags], log_path)
        deadline = time.monotonic() + SERVER_START_SECONDS
        self.port = None
        while time.monotonic() < deadline and self.alive():
            with open(log_path, "rb") as f:
                match = re.search(rb"listening on \S+ \(port (\d+)\)", f.read())
            if match:
                self.port = int(match.group(1))
                break
            time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("replica did not start:\n" + self.tail())
        self.target = f"127.0.0.1:{self.port}"


class Cluster:
    """3 replicas and HAProxy in front of them."""

    def __init__(self, args, tmp, replica_flags=()):
        self.args = args
        self.replicas = []
        self.proxy = None
        try:
            for i in range(3):
                self.replicas.append(Replica(
                    args.server, os.path.join(tmp, f"replica{i + 1}.log"),
                    replica_flags))
            self.proxy_port = free_port()
            self.target = f"127.0.0.1:{self.proxy_port}"
            env = dict(os.environ, POSENC_PROXY_BIND=self.target)
            for i, r in enumerate(self.replicas):
                env[f"POSENC_{i + 1}"] = r.target
            self.proxy = Process(
                [args.haproxy, "-db", "-f", args.haproxy_cfg],
                os.path.join(tmp, "haproxy.log"), env=env)
            self.wait_for_proxy()
        except Exception:
            self.stop()
            raise

    def wait_for_proxy(self):
        wait_for_port(self.target, self.proxy, PROXY_START_SECONDS)
        # Let the health checks (inter 500ms, rise 2) see everyone.
        time.sleep(1.5)

    def stop(self):
        if self.proxy is not None:
            self.proxy.stop(signal.SIGUSR1, timeout=5)  # soft-stop
        for r in self.replicas:
            r.stop(signal.SIGKILL, timeout=5)

    def logs(self):
        parts = [f"--- haproxy\n{self.proxy.tail()}"] if self.proxy else []
        parts += [f"--- replica{i + 1}\n{r.tail()}"
                  for i, r in enumerate(self.replicas)]
        return "\n".join(parts)


# ---- helpers on the client side ------------------------------------------


def families(count):
    """`count` distinct table families (every spec field but max_len)."""
    out = []
    dtypes = ["float32", "float64", "float16", "bfloat16"]
    layouts = ["interleaved", "concat_sin_cos", "concat_cos_sin"]
    for i in range(count):
        out.append(dict(d=16 * (1 + i % 8), base=10000.0 + 0.5 * i,
                        dtype=dtypes[i % 4], layout=layouts[i % 3],
                        frequency="paper" if i % 2 else "t2t"))
    return out


def stats_of(posenc, target):
    with posenc.Client(target, timeout=10) as c:
        return c.stats()


def table_calls(stats, method="GetTable"):
    """OK calls of `method` a replica has served."""
    for m in stats.methods:
        if m.method.endswith("/" + method):
            return m.ok
    raise AssertionError(f"no {method} in stats")


def owners_of(posenc, cluster, spec, calls=5):
    """Indices of the replicas whose GetTable count rose over `calls` calls."""
    before = [table_calls(stats_of(posenc, r.target)) for r in cluster.replicas]
    with posenc.Client(cluster.target, timeout=20) as c:
        for _ in range(calls):
            c.table(spec)
    after = [table_calls(stats_of(posenc, r.target)) for r in cluster.replicas]
    return [i for i in range(3) if after[i] != before[i]]


class Failures:
    def __init__(self):
        self.items = []

    def check(self, condition, message):
        print(("ok   " if condition else "FAIL ") + message)
        if not condition:
            self.items.append(message)


# ---- scenarios ------------------------------------------------------------


def scenario_families_computed_once(args, tmp, f):
    """ManyFamilies_EachComputedOnceAcrossReplicas."""
    import posenc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=0"])
    try:
        fams = families(48)
        lens = [256, 128, 64, 200]
        # Largest max_len first per family, so every other call is a prefix
        # of a resident table; then all the other calls in random order.
        rng = random.Random(11)
        first = [(fam, 256) for fam in fams]
        rng.shuffle(first)
        rest = [(fam, n) for fam in fams for n in lens[1:] for _ in range(2)]
        rng.shuffle(rest)
        with posenc.Client(cluster.target, timeout=20) as c:
            for fam, n in first + rest:
                t = c.table(posenc.TableSpec(max_len=n, **fam))
                assert t.shape == (n, fam["d"]), t.shape
        stats = [stats_of(posenc, r.target) for r in cluster.replicas]
        computations = [s.cache.computations for s in stats]
        served = [table_calls(s) for s in stats]
        print(f"computations per replica {computations}, GetTable calls "
              f"{served}, families {len(fams)}")
        f.check(sum(computations) == len(fams),
                f"sum of computations {sum(computations)} == distinct "
                f"families {len(fams)}")
        f.check(sum(served) == len(first) + len(rest),
                "every call reached exactly one replica")
        f.check(all(n > 0 for n in served), "every replica served a share")
    finally:
        cluster.stop()


def scenario_fixed_key_same_replica(args, tmp, f):
    """FixedKey_AlwaysReachesSameReplica."""
    import posenc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=0"])
    try:
        for i, fam in enumerate(families(6)):
            # Different max_len, same family: same key, same replica.
            before = [table_calls(stats_of(posenc, r.target))
                      for r in cluster.replicas]
            with posenc.Client(cluster.target, timeout=20) as c:
                for n in range(1, 21):
                    c.table(posenc.TableSpec(max_len=8 * n, **fam))
            after = [table_calls(stats_of(posenc, r.target))
                     for r in cluster.replicas]
            delta = [a - b for a, b in zip(after, before)]
            f.check(sorted(delta) == [0, 0, 20],
                    f"family {i}: 20 calls over 20 max_lens all on one "
                    f"replica, per replica {delta}")
        # GetRows has a backend of its own (no L7-retry copy); the same ring:
        # a family's GetRows reach its GetTable owner.
        for i, fam in enumerate(families(12)):
            spec = posenc.TableSpec(max_len=64, **fam)
            owner = owners_of(posenc, cluster, spec, calls=1)
            before = [table_calls(stats_of(posenc, r.target), "GetRows")
                      for r in cluster.replicas]
            with posenc.Client(cluster.target, timeout=20) as c:
                for p in range(5):
                    c.gather(spec, [p, 63 - p])
            after = [table_calls(stats_of(posenc, r.target), "GetRows")
                     for r in cluster.replicas]
            delta = [a - b for a, b in zip(after, before)]
            f.check(len(owner) == 1 and delta[owner[0]] == 5 and
                    sum(delta) == 5,
                    f"family {i}: 5 GetRows on its GetTable owner {owner}: "
                    f"{delta}")
        # posenc.aio sends the same key: its calls land on the sync owner.
        import asyncio
        spec = posenc.TableSpec(max_len=8, **families(7)[6])
        owner = owners_of(posenc, cluster, spec, calls=3)
        before = [table_calls(stats_of(posenc, r.target))
                  for r in cluster.replicas]

        async def aio_calls():
            async with posenc.aio.Client(cluster.target, timeout=20) as c:
                for n in range(1, 11):
                    await c.table(posenc.TableSpec(
                        max_len=4 * n, **families(7)[6]))
        asyncio.run(aio_calls())
        after = [table_calls(stats_of(posenc, r.target))
                 for r in cluster.replicas]
        delta = [a - b for a, b in zip(after, before)]
        f.check(len(owner) == 1 and delta[owner[0]] == 10 and sum(delta) == 10,
                f"asyncio client: 10 calls on the sync owner {owner}: {delta}")
        # The replica echoes the key it was routed by in initial metadata.
        import grpc
        from posenc.v1 import posenc_pb2, posenc_pb2_grpc
        spec = posenc.TableSpec(max_len=8, **families(1)[0])
        with grpc.insecure_channel(cluster.target) as channel:
            stub = posenc_pb2_grpc.PositionalEncodingStub(channel)
            _, call = stub.GetTable.with_call(
                posenc_pb2.GetTableRequest(spec=spec.to_proto()), timeout=10,
                metadata=(("x-posenc-table", spec.routing_key()),))
            echoed = dict(call.initial_metadata()).get("x-posenc-table")
        f.check(echoed == spec.routing_key(),
                f"the key comes back in initial metadata: {echoed!r}")
    finally:
        cluster.stop()


def scenario_kill_moves_only_its_keys(args, tmp, f):
    """ReplicaKilled_OnlyItsKeysMoveCallsSucceed."""
    import posenc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=0"])
    try:
        fams = families(30)
        owner = {}
        for i, fam in enumerate(fams):
            o = owners_of(posenc, cluster, posenc.TableSpec(max_len=16, **fam),
                          calls=2)
            f.check(len(o) == 1, f"family {i} has one owner: {o}")
            owner[i] = o[0]
        victim = owner[0]
        print(f"owners {[owner[i] for i in range(len(fams))]}; killing "
              f"replica{victim + 1}")
        cluster.replicas[victim].stop(signal.SIGKILL)
        # Calls keep succeeding while the proxy notices (connect failures are
        # retried on the next replica).
        errors = 0
        with posenc.Client(cluster.target, timeout=20) as c:
            for fam in fams:
                try:
                    c.table(posenc.TableSpec(max_len=16, **fam))
                except posenc.PosencError as e:
                    errors += 1
                    print("error right after the kill:", e)
        f.check(errors == 0, f"calls right after the kill succeed "
                f"({errors} errors)")
        time.sleep(1.5)  # health checks mark it down (fall 2 x 500ms)
        moved_elsewhere = 0
        for i, fam in enumerate(fams):
            alive = [r for j, r in enumerate(cluster.replicas) if j != victim]
            before = {id(r): table_calls(stats_of(posenc, r.target))
                      for r in alive}
            with posenc.Client(cluster.target, timeout=20) as c:
                c.table(posenc.TableSpec(max_len=16, **fam))
            now_on = [j for j, r in enumerate(cluster.replicas) if j != victim
                      and table_calls(stats_of(posenc, r.target)) !=
                      before[id(r)]]
            if owner[i] != victim:
                f.check(now_on == [owner[i]],
                        f"family {i} stays on replica{owner[i] + 1}: {now_on}")
            else:
                moved_elsewhere += 1
                f.check(len(now_on) == 1, f"family {i} of the dead replica "
                        f"moved to one survivor: {now_on}")
        f.check(0 < moved_elsewhere < len(fams),
                f"{moved_elsewhere}/{len(fams)} families moved")
    finally:
        cluster.stop()


def read_stream_slowly(posenc, target, spec, result, started, sleep_every):
    """Reads a whole StreamBatches, pausing 20 ms every `sleep_every`
    batches, and after every batch in the last eighth (a slow reader when
    the server has sent its last message: what is still queued for it then
    must not be lost); result gets (rows, bytes, error)."""
    rows = nbytes = 0
    try:
        with posenc.Client(target, timeout=120) as c:
            for k, (_, batch) in enumerate(c.batches(spec)):
                rows += batch.shape[0]
                nbytes += batch.nbytes
                if k == 2:
                    started.set()
                if k % sleep_every == 0 or rows > spec.max_len * 7 // 8:
                    time.sleep(0.02)
        result.append((rows, nbytes, None))
    except Exception as e:  # noqa: BLE001 - reported by the test
        result.append((rows, nbytes, e))
    started.set()


def stream_survives_sigterm(args, tmp, f, through_proxy):
    import posenc
    # A lame duck long enough for the proxy to notice, a grace period long
    # enough for the stream to finish at the reader's pace.
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=1.5",
                                  "--grace_seconds=60"])
    try:
        # 8192 rows x 4096 float32 = 128 MiB, in ~64 KiB batches.
        spec = posenc.TableSpec(d=4096, max_len=8192, dtype="float32")
        target = cluster.target if through_proxy else \
            cluster.replicas[0].target
        if through_proxy:
            victim = owners_of(posenc, cluster,
                               posenc.TableSpec(d=4096, max_len=1), calls=1)
            f.check(len(victim) == 1, f"one owner: {victim}")
            victim = victim[0]
        else:
            victim = 0
        result, started = [], threading.Event()
        reader = threading.Thread(target=read_stream_slowly, args=(
            posenc, target, spec, result, started, 8))
        t0 = time.monotonic()
        reader.start()
        started.wait(60)
        cluster.replicas[victim].process.send_signal(signal.SIGTERM)
        print(f"SIGTERM to replica{victim + 1} after "
              f"{time.monotonic() - t0:.2f}s of streaming")
        reader.join(150)
        f.check(not reader.is_alive(), "the stream ended")
        rows, nbytes, error = result[0] if result else (0, 0, "no result")
        took = time.monotonic() - t0
        print(f"stream: {rows} rows, {nbytes} bytes, error {error!r}, "
              f"{took:.1f}s")
        f.check(error is None, f"the stream ended OK (error {error!r})")
        f.check(rows == 8192 and nbytes == 128 << 20,
                f"every message arrived: {rows} rows, {nbytes} bytes")
        rc = cluster.replicas[victim].process.wait(timeout=90)
        f.check(rc == 0, f"the replica exited 0 (rc {rc})")
        log = cluster.replicas[victim].tail()
        f.check("received SIGTERM" in log, "the replica logged the drain")
        if through_proxy:
            # New calls after the signal still succeed through the proxy.
            with posenc.Client(cluster.target, timeout=20) as c:
                t = c.table(posenc.TableSpec(d=4096, max_len=4))
            f.check(t.shape == (4, 4096), "calls after the drain succeed")
    finally:
        cluster.stop()


def scenario_stream_survives_sigterm_proxy(args, tmp, f):
    """BigStreamThroughProxy_SurvivesSigtermOfItsReplica."""
    stream_survives_sigterm(args, tmp, f, through_proxy=True)


def scenario_stream_survives_sigterm_direct(args, tmp, f):
    """BigStreamDirect_SurvivesSigterm."""
    stream_survives_sigterm(args, tmp, f, through_proxy=False)


def scenario_lame_duck_keeps_serving(args, tmp, f):
    """SigtermThroughProxy_NoCallFailsDuringDrain."""
    import posenc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=2",
                                  "--grace_seconds=5"])
    try:
        fams = families(12)
        victim = owners_of(posenc, cluster,
                           posenc.TableSpec(max_len=8, **fams[0]), calls=1)[0]
        cluster.replicas[victim].process.send_signal(signal.SIGTERM)
        errors, calls = [], 0
        deadline = time.monotonic() + 6
        with posenc.Client(cluster.target, timeout=10) as c:
            while time.monotonic() < deadline and calls < 3000:
                fam = fams[calls % len(fams)]
                try:
                    c.table(posenc.TableSpec(max_len=8, **fam))
                except posenc.PosencError as e:
                    errors.append(e.code_name)
                calls += 1
                time.sleep(0.005)
        f.check(calls > 100, f"{calls} calls made across the drain")
        f.check(not errors, f"no call failed across the drain: {errors[:5]}")
        f.check(cluster.replicas[victim].process.wait(timeout=20) == 0,
                "the drained replica exited 0")
    finally:
        cluster.stop()


def scenario_errors_unchanged(args, tmp, f):
    """ErrorsThroughProxy_ArriveUnchanged."""
    import posenc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=0"])
    try:
        cases = [
            ("odd d", lambda c: c.table(posenc.TableSpec(d=5, max_len=8)),
             "INVALID_ARGUMENT"),
            ("past max_len", lambda c: c.gather(
                posenc.TableSpec(d=4, max_len=16), [3, 16]), "OUT_OF_RANGE"),
            ("bad base", lambda c: c.table(
                posenc.TableSpec(d=4, max_len=4, base=0.5)),
             "INVALID_ARGUMENT"),
            ("stream past end", lambda c: list(c.rows(
                posenc.TableSpec(d=4, max_len=4), start=2, end=9)),
             "OUT_OF_RANGE"),
        ]
        for name, call, want in cases:
            got = {}
            for label, target in (("direct", cluster.replicas[0].target),
                                  ("proxy", cluster.target)):
                with posenc.Client(target, timeout=10) as c:
                    try:
                        call(c)
                        got[label] = ("OK", "")
                    except posenc.PosencError as e:
                        got[label] = (e.code_name, e.message)
            f.check(got["proxy"] == got["direct"] and got["proxy"][0] == want,
                    f"{name}: proxy {got['proxy']} == direct {got['direct']}"
                    f", code {want}")
    finally:
        cluster.stop()


def scenario_body_hash_affinity(args, tmp, f):
    """NoHeaderClient_BodyHashGivesAffinity."""
    import grpc
    import posenc
    from posenc.v1 import posenc_pb2, posenc_pb2_grpc
    cluster = Cluster(args, tmp, ["--lame_duck_seconds=0"])
    try:
        channel = grpc.insecure_channel(cluster.target)
        stub = posenc_pb2_grpc.PositionalEncodingStub(channel)
        for i, fam in enumerate(families(6)):
            spec = posenc.TableSpec(max_len=32, **fam).to_proto()
            before = [table_calls(stats_of(posenc, r.target))
                      for r in cluster.replicas]
            for _ in range(15):
                stub.GetTable(posenc_pb2.GetTableRequest(spec=spec),
                              timeout=10)  # no metadata: no routing key
            after = [table_calls(stats_of(posenc, r.target))
                     for r in cluster.replicas]
            delta = [a - b for a, b in zip(after, before)]
            f.check(sorted(delta) == [0, 0, 15],
                    f"spec {i} without header: 15 calls on one replica "
                    f"{delta}")
        # Health (not a table call: not body-buffered) still passes.
        check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                    request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        f.check(check(b"", timeout=5) == b"\x08\x01",
                "health Check through the proxy: SERVING")
        channel.close()
    finally:
        cluster.stop()


SCENARIOS = {
    "ManyFamilies_EachComputedOnceAcrossReplicas":
        scenario_families_computed_once,
    "FixedKey_AlwaysReachesSameReplica": scenario_fixed_key_same_replica,
    "ReplicaKilled_OnlyItsKeysMoveCallsSucceed":
        scenario_kill_moves_only_its_keys,
    "BigStreamThroughProxy_SurvivesSigtermOfItsReplica":
        scenario_stream_survives_sigterm_proxy,
    "BigStreamDirect_SurvivesSigterm": scenario_stream_survives_sigterm_direct,
    "SigtermThroughProxy_NoCallFailsDuringDrain":
        scenario_lame_duck_keeps_serving,
    "ErrorsThroughProxy_ArriveUnchanged": scenario_errors_unchanged,
    "NoHeaderClient_BodyHashGivesAffinity": scenario_body_hash_affinity,
}


def print_logs(tmp):
    """The last 3000 bytes of every process's log, to stderr."""
    for name in sorted(os.listdir(tmp)):
        with open(os.path.join(tmp, name), "rb") as log:
            print(f"--- {name}\n" + log.read()[-3000:].decode(
                errors="replace"), file=sys.stderr)


def add_cluster_args(parser):
    """The arguments a Cluster reads: --server, --python-path (posenc and its
    stubs), --haproxy-cfg and --haproxy."""
    parser.add_argument("--server", required=True)
    parser.add_argument("--python-path", required=True)
    parser.add_argument("--haproxy-cfg", required=True)
    parser.add_argument("--haproxy", default="/usr/sbin/haproxy")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    add_cluster_args(parser)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    sys.path[:0] = args.python_path.split(":")
    f = Failures()
    with tempfile.TemporaryDirectory(prefix="posenc-affinity-") as tmp:
        try:
            SCENARIOS[args.scenario](args, tmp, f)
        except Exception:
            print_logs(tmp)
            raise
        if f.items:
            # A failed check: the proxy's and the replicas' logs say why (a
            # replica marked DOWN, a restart).
            print_logs(tmp)
    print(f"{args.scenario}: {len(f.items)} failed")
    return 1 if f.items else 0


if __name__ == "__main__":
    sys.exit(main())
