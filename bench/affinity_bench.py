#!/usr/bin/python3
"""Benchmark of consistent-hash routing (bench/affinity.sh runs it).

Part 1, hit ratio: 3 posenc replicas, each with --cache_bytes=B, behind
HAProxy (deploy/haproxy/haproxy.cfg), serve a working set of ~2.5 x B of
distinct tables (GetTable, random order, THREADS client threads). Once with
the shipped config (hash of x-posenc-table), once with the same config but
`balance roundrobin` in the table backend. Reports the hit ratio (sum over
the replicas of GetStats cache hits / (hits + misses), after a warm-up pass)
and the calls per second of this Python driver.

Part 2, proxy overhead: h2load against one replica directly and through
HAProxy, alternating, ROUNDS rounds: 1-row GetRows (d=512) and 4 MiB
GetTable (d=512 max_len=2048, float32), cache hits, and the same GetTable
with h2load accepting 64 KiB frames (-f 65536; no target). Rates count full
responses by the DATA bytes delivered (bench/h2load_run.py: h2load counts a
response cut short as succeeded), and the bytes missing through the proxy
are reported. Reports req/s and
the median of the per-round ratios proxy/direct with a 95% confidence
interval of that median (bench/noise.py: the verdict is on the interval,
the rule of every benchmark; exit status 1 when a target is MISSED); every
run is checked against the replica's own OK counter. Each round also runs
the same load through an L4 relay (bench/l4_relay.cfg: HAProxy in TCP mode
splicing bytes to the same replica, no HTTP/2 parsed): the floor for any
proxy on these cores, reported as relay/direct and proxy/relay (no target).
Last, both calls through posenc's own C++ client (bench/client_load, one
channel shared by several threads; no target): h2load does no gRPC work on
a reply, so it is the harshest client for a proxy, and this is the view of
the fastest real one. Calls that fail through the proxy are counted.

Every run is bounded by a count and a timeout. Usage: see bench/affinity.sh.
"""

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "affinity"))
from h2load_run import run_h2load  # noqa: E402 (bench/, beside this file)
import noise  # noqa: E402 (bench/noise.py: median, 95% CI, verdict)

MISSED = []  # names of the targets MISSED (the exit status)


def ratio_line(name, value, target, band):
    """The hit ratio: one count over thousands of calls, not rounds, so its
    interval is a fixed band of +-`band` around it; the verdict is the rule
    of every benchmark (noise.interval_verdict)."""
    verdict = noise.interval_verdict(value - band, value + band, target)
    if verdict == noise.MISSED:
        MISSED.append(name)
    return (f"{name}: {value:.3f} (target >= {target}, band +-{band:.2f}: "
            f"{verdict})")


def ci_line(name, values, target, case):
    """The median of the rounds, its 95% CI and the verdict on it
    (bench/noise.py, the rule of every benchmark)."""
    r = noise.verdict(values, target)
    if r.missed:
        MISSED.append(f"{case}: {name}")
    return r.line(name)


def hit_ratio_run(args, tmp, balance, posenc, at):
    """One cluster; returns (hit ratio, calls/s, per-replica cache stats)."""
    cfg = os.path.join(tmp, f"haproxy-{balance}.cfg")
    with open(args.haproxy_cfg) as f:
        text = f.read()
    if balance == "roundrobin":
        text = text.replace("balance hash req.fhdr(x-posenc-table)",
                            "balance roundrobin")
    with open(cfg, "w") as f:
        f.write(text)
    args.haproxy_cfg_run = cfg

    class A:  # the Cluster's arguments
        server = args.server
        haproxy = args.haproxy
        haproxy_cfg = cfg
    cluster = at.Cluster(A, tmp, [f"--cache_bytes={args.cache_bytes}",
                                  "--lame_duck_seconds=0", "--threads=1"])
    try:
        table_bytes = args.d * args.max_len * 4
        count = int(2.5 * args.cache_bytes / table_bytes)
        specs = [posenc.TableSpec(d=args.d, max_len=args.max_len,
                                  base=10000.0 + i) for i in range(count)]
        rng = random.Random(7)

        def run(n):
            order = [rng.randrange(count) for _ in range(n)]
            chunks = [order[i::args.threads] for i in range(args.threads)]
            errors = []

            def worker(chunk):
                try:
                    with posenc.Client(cluster.target, timeout=60) as c:
                        for k in chunk:
                            c.table(specs[k])
                except Exception as e:  # noqa: BLE001
                    errors.append(e)
            threads = [threading.Thread(target=worker, args=(c,))
                       for c in chunks]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join(600)
            if errors:
                raise errors[0]
            return time.monotonic() - t0

        def totals():
            hits = misses = 0
            per = []
            for r in cluster.replicas:
                s = at.stats_of(posenc, r.target).cache
                hits += s.hits
                misses += s.misses
                per.append((s.hits, s.misses, s.entries, s.computations))
            return hits, misses, per

        run(args.warmup)
        h0, m0, _ = totals()
        took = run(args.calls)
        h1, m1, per = totals()
        hits, misses = h1 - h0, m1 - m0
        return (hits / max(1, hits + misses), args.calls / took, count, per)
    finally:
        cluster.stop()


def grpc_body(message):
    data = message.SerializeToString()
    return b"\x00" + len(data).to_bytes(4, "big") + data


def h2load(url, body_path, n, c, m, key, extra=()):
    """One h2load run (see h2load_run.py: judged by the DATA bytes)."""
    argv = ["h2load", "-n", str(n), "-c", str(c), "-m", str(m), *extra,
            "-H", "content-type: application/grpc", "-H", "te: trailers",
            "-H", f"x-posenc-table: {key}", "-d", body_path, url]
    return run_h2load(argv, timeout=300)


def client_load(binary, target, method, calls, threads):
    """One bench/client_load run (posenc's C++ client): (calls/s, failed
    calls, the first failure's status or "")."""
    out = subprocess.run([binary, f"--target={target}", f"--method={method}",
                          f"--calls={calls}", f"--threads={threads}"],
                         capture_output=True, text=True, timeout=300)
    m = re.search(r"calls \d+ failed (\d+) seconds [\d.]+ calls_per_second "
                  r"([\d.]+) cpu_us_per_call ([\d.]+)", out.stdout)
    if not m:
        raise RuntimeError(f"client_load failed:\n{out.stdout}\n{out.stderr}")
    error = re.search(r"first error: (.*)", out.stderr)
    return float(m.group(2)), int(m.group(1)), error.group(1) if error else ""


def method_ok(posenc, target, method):
    for m in posenc.Client(target, timeout=10).stats().methods:
        if m.method.endswith("/" + method):
            return m.ok
    return 0


def overhead(args, tmp, posenc, at):
    from posenc.v1 import posenc_pb2

    class A:
        server = args.server
        haproxy = args.haproxy
        haproxy_cfg = args.haproxy_cfg
    cluster = at.Cluster(A, tmp, ["--lame_duck_seconds=0", "--threads=2"])
    relay = None
    try:
        spec = posenc.TableSpec(d=512, max_len=2048)
        key = spec.routing_key()
        rows = os.path.join(tmp, "rows.bin")
        table = os.path.join(tmp, "table.bin")
        with open(rows, "wb") as f:
            f.write(grpc_body(posenc_pb2.GetRowsRequest(
                spec=spec.to_proto(), positions=[1234])))
        with open(table, "wb") as f:
            f.write(grpc_body(posenc_pb2.GetTableRequest(spec=spec.to_proto())))
        # Warm every replica's cache (direct) and find the key's owner.
        for r in cluster.replicas:
            with posenc.Client(r.target, timeout=30) as c:
                c.table(spec)
        owner = at.owners_of(posenc, cluster, spec, calls=1)[0]
        direct = cluster.replicas[owner].target
        # The floor for any proxy (bench/l4_relay.cfg): bytes spliced to the
        # same replica over a second TCP connection, no HTTP/2 parsed.
        relay_target = f"127.0.0.1:{at.free_port()}"
        relay = at.Process(
            [args.haproxy, "-db", "-f", args.relay_cfg],
            os.path.join(tmp, "relay.log"),
            env=dict(os.environ, POSENC_PROXY_BIND=relay_target,
                     POSENC_1=direct))
        at.wait_for_port(relay_target, relay)
        # h2load advertises 16 KiB frames, as gRPC clients do by default; the
        # third case (no target) shows what a client that accepts 64 KiB
        # frames (grpc.http2.max_frame_size) gets.
        cases = [("GetRows 1 row d=512 (2 KiB)", "GetRows", rows,
                  args.rows_n, 4, 16, 0.7, ()),
                 ("GetTable d=512 max_len=2048 (4 MiB)", "GetTable", table,
                  args.table_n, 2, 2, 0.6, ()),
                 ("GetTable 4 MiB, client frames up to 64 KiB (h2load -f "
                  "65536)", "GetTable", table, args.table_n, 2, 2, None,
                  ("-f", "65536")),
                 # The fastest real client (no target): bench/client_load.
                 ("GetRows 1 row, posenc C++ client (8 threads)", "GetRows",
                  None, args.rows_n // 2, 8, 0, None, ()),
                 ("GetTable 4 MiB, posenc C++ client (4 threads)", "GetTable",
                  None, args.table_n, 4, 0, None, ())]
        results = []
        for name, method, body, n, c, m, target, extra in cases:
            if body is None:  # posenc's C++ client: c threads, n calls
                results.append(client_case(args, name, method, n, c, direct,
                                           cluster.target, relay_target))
                continue
            ratios, relay_ratios, d_rps, p_rps, r_rps = [], [], [], [], []
            cut = errored = 0.0
            for _ in range(args.rounds):
                for label, tgt in (("direct", direct), ("proxy", cluster.target),
                                   ("relay", relay_target)):
                    before = method_ok(posenc, direct, method)
                    run = h2load(f"http://{tgt}/posenc.v1.PositionalEncoding/"
                                 f"{method}", body, n, c, m, key, extra)
                    got = method_ok(posenc, direct, method) - before
                    if got != n:
                        raise RuntimeError(f"{label} {method}: replica counted "
                                           f"{got} OK calls, want {n}")
                    if label == "direct":
                        if run.succeeded != n or run.errored:
                            raise RuntimeError(f"direct {method}: {run}")
                        per_call = run.data_bytes / n
                        d_rps.append(run.rate(per_call))
                    elif label == "relay":
                        if run.succeeded != n or run.errored:
                            raise RuntimeError(f"relay {method}: {run}")
                        r_rps.append(run.rate(per_call))
                    else:
                        # Full responses per second: a response cut short
                        # by the proxy counts for the bytes it delivered.
                        p_rps.append(run.rate(per_call))
                        cut += n - run.complete(per_call)
                        errored += run.errored
                ratios.append(p_rps[-1] / d_rps[-1])
                relay_ratios.append(r_rps[-1] / d_rps[-1])
            results.append((name, statistics.median(d_rps),
                            statistics.median(p_rps), statistics.median(r_rps),
                            ratios, relay_ratios, target, cut, errored,
                            n * args.rounds))
        return results
    finally:
        if relay is not None:
            relay.stop()
        cluster.stop()


def client_case(args, name, method, n, threads, direct, proxy, relay):
    """Rounds of bench/client_load directly, through the proxy and through
    the relay; the same tuple as the h2load cases ("cut" = failed calls)."""
    ratios, relay_ratios, d_rps, p_rps, r_rps = [], [], [], [], []
    failed, first_error = 0, ""
    for _ in range(args.rounds):
        rates = {}
        for label, tgt in (("direct", direct), ("proxy", proxy),
                           ("relay", relay)):
            rate, bad, error = client_load(args.client_load, tgt, method, n,
                                           threads)
            if bad and label != "proxy":
                raise RuntimeError(f"{label} {method}: {bad} calls failed: "
                                   f"{error}")
            failed += bad
            first_error = first_error or error
            rates[label] = rate
        d_rps.append(rates["direct"])
        p_rps.append(rates["proxy"])
        r_rps.append(rates["relay"])
        ratios.append(rates["proxy"] / rates["direct"])
        relay_ratios.append(rates["relay"] / rates["direct"])
    return (name, statistics.median(d_rps), statistics.median(p_rps),
            statistics.median(r_rps), ratios, relay_ratios, None,
            (failed, first_error), None, n * args.rounds)


def main():
    import affinity_test as at  # tests/affinity: the Cluster and its arguments
    p = argparse.ArgumentParser(description=__doc__)
    at.add_cluster_args(p)
    p.add_argument("--relay-cfg", default=os.path.join(HERE, "l4_relay.cfg"))
    p.add_argument("--client-load", required=True,
                   help="bench/client_load binary (posenc's C++ client)")
    p.add_argument("--cache-bytes", type=int, default=32 << 20)
    p.add_argument("--d", type=int, default=256)
    p.add_argument("--max-len", type=int, default=1024)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--warmup", type=int, default=800)
    p.add_argument("--calls", type=int, default=2400)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--rows-n", type=int, default=20000)
    p.add_argument("--table-n", type=int, default=300)
    p.add_argument("--part", choices=["all", "hits", "overhead"],
                   default="all")
    args = p.parse_args()
    sys.path[:0] = args.python_path.split(":")
    import posenc

    with tempfile.TemporaryDirectory(prefix="posenc-affinity-bench-") as tmp:
        if args.part in ("all", "hits"):
            print(f"== hit ratio: 3 replicas x --cache_bytes={args.cache_bytes}"
                  f", tables d={args.d} max_len={args.max_len} float32 "
                  f"({args.d * args.max_len * 4} bytes), {args.threads} "
                  f"threads, {args.warmup} warm-up + {args.calls} measured "
                  "GetTable calls in random order")
            for balance in ("hash", "roundrobin"):
                ratio, cps, count, per = hit_ratio_run(args, tmp, balance,
                                                       posenc, at)
                print(f"{balance:10} working set {count} tables "
                      f"(~2.5 x budget): hit ratio {ratio:.3f}, "
                      f"{cps:.0f} calls/s; per replica (hits, misses, "
                      f"entries, computations) {per}")
                if balance == "hash":
                    print("  " + ratio_line("hash hit ratio", ratio, 0.9, 0.02))
                else:
                    print(f"  round robin hit ratio {ratio:.3f} (expected "
                          f"<= ~0.4)")
        if args.part in ("all", "overhead"):
            print(f"== proxy overhead (h2load, {args.rounds} rounds, "
                  "alternating direct/proxy, cache hits)")
            for (name, d, pr, rl, ratios, relay_ratios, target, cut, errored,
                 calls) in overhead(args, tmp, posenc, at):
                print(f"{name}: direct {d:.0f} req/s, proxy {pr:.0f} req/s, "
                      f"ratio median {statistics.median(ratios):.3f} (rounds "
                      f"{min(ratios):.3f}..{max(ratios):.3f}); through the "
                      + (f"proxy {cut[0]} of {calls} calls failed"
                         + (f" (first: {cut[1]})" if cut[1] else "")
                         if errored is None else
                         f"proxy {cut:.1f} of {calls} responses' bytes "
                         f"missing, {errored:.0f} streams errored"))
                if target is not None:
                    print("  " + ci_line("proxy/direct", ratios, target,
                                         name))
                else:
                    print("  " + noise.ci_line("proxy/direct", ratios))
                print("  " + noise.ci_line(
                    "floor for any proxy, L4 splice relay/direct",
                    relay_ratios) + f", relay {rl:.0f} req/s; proxy/relay "
                      f"{statistics.median(p / r for p, r in zip(ratios, relay_ratios)):.3f}")
    if MISSED:
        print(f"affinity_bench: target(s) MISSED: {'; '.join(MISSED)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
