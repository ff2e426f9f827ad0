#!/usr/bin/python3
"""Side-by-side proxy comparison: direct vs each proxy config, with CPU cost.

One posenc_server (--threads=2) on 127.0.0.1; one proxy per config given,
all in front of it: a HAProxy config (*.cfg, run with POSENC_PROXY_BIND and
POSENC_1..3 all set to the server) or an nginx config (*.conf, e.g.
deploy/nginx/posenc.conf: posenc-N:50051 and `listen 50051` rewritten to
127.0.0.1 ports in a copy). Each round runs h2load directly, then through
every proxy in turn (cache hits), and prints full responses per second
(by the DATA bytes delivered: h2load counts a response cut short as
succeeded; see h2load_run.py), the ratio to the
round's direct run, and the CPU time per call of the proxy (master and
workers), the server and h2load: the cost per call moves far less than req/s
with a neighbour's load. Bounded: ROUNDS x (1 + proxies) h2load runs of N
calls, each under a 120 s timeout.

A config given as CFG:FLAGS (e.g. deploy/haproxy/haproxy.cfg:--max_concurrent_streams=1)
sits in front of a replica of its own started with those comma-separated
flags; direct runs always use the default replica.

Usage (from the repo root; needs the Python stubs, see bench/affinity.sh):
  bench/proxy_ab.py deploy/haproxy/haproxy.cfg deploy/nginx/posenc.conf \\
      [--method GetTable|GetRows] [--max-len L] [-n N -c C -m M] [--rounds R] \\
      [--h2load-extra "-f 65536"] [--target 0.7]

Each proxy's proxy/direct ratio is the median of the rounds with its 95%
confidence interval (bench/noise.py, the rule of every benchmark); with
--target, the verdict on that interval, and exit status 1 when MISSED.
"""

import argparse
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

from h2load_run import run_h2load  # bench/, beside this file
import noise  # bench/noise.py: median, 95% CI of the median, verdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU of pid and its direct children (nginx workers)."""
    def one(p):
        fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    total = one(pid)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                total += one(int(d))
        except OSError:
            pass
    return total


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("configs", nargs="+")
    p.add_argument("--build", default=os.environ.get("BUILD", f"{ROOT}/build"))
    p.add_argument("--method", choices=["GetTable", "GetRows"], default="GetTable")
    p.add_argument("--max-len", type=int, default=2048,
                   help="max_len of the d=512 float32 table (2048: 4 MiB)")
    p.add_argument("-n", type=int, default=None, help="calls per run "
                   "(default 200 GetTable, 10000 GetRows)")
    p.add_argument("-c", type=int, default=None, help="h2load connections "
                   "(default 2 GetTable, 4 GetRows, as bench/affinity.sh)")
    p.add_argument("-m", type=int, default=None, help="streams per "
                   "connection (default 2 GetTable, 16 GetRows)")
    p.add_argument("--rounds", type=int, default=9,
                   help="rounds (default 9: the fewest whose 95%% interval "
                   "of the median leaves out the best and the worst round)")
    p.add_argument("--target", type=float, default=None,
                   help="proxy/direct target: a verdict per proxy "
                   "(bench/noise.py) and exit status 1 when one is MISSED")
    p.add_argument("--h2load-extra", default="")
    p.add_argument("--pin", action="store_true",
                   help="server and h2load on CPU 0, every proxy on CPU 1: "
                   "the proxy on a core of its own, as on a separate node "
                   "(direct runs then have one core; not the shared-CPU "
                   "verdict of bench/affinity.sh)")
    a = p.parse_args()
    pin0 = ["taskset", "-c", "0"] if a.pin else []
    pin1 = ["taskset", "-c", "1"] if a.pin else []
    small = a.method == "GetRows"
    n = a.n or (10000 if small else 200)
    c = a.c or (4 if small else 2)
    m = a.m or (16 if small else 2)

    sys.path[:0] = [f"{ROOT}/client/python", f"{a.build}/tests/interop/python"]
    import posenc
    from posenc.v1 import posenc_pb2

    spec = posenc.TableSpec(d=512, max_len=a.max_len)
    if small:
        msg = posenc_pb2.GetRowsRequest(spec=spec.to_proto(), positions=[1234])
    else:
        msg = posenc_pb2.GetTableRequest(spec=spec.to_proto())
    data = msg.SerializeToString()
    tmp = tempfile.mkdtemp(prefix="posenc-proxy-ab-")
    body = os.path.join(tmp, "body.bin")
    with open(body, "wb") as f:
        f.write(b"\x00" + len(data).to_bytes(4, "big") + data)

    procs = []
    missed = 0  # proxies whose proxy/direct target was MISSED

    def start(argv, log, env=None):
        proc = subprocess.Popen(argv, env=env, stdout=open(log, "w"),
                                stderr=subprocess.STDOUT)
        procs.append(proc)
        return proc

    def h2load(port):
        argv = [*pin0, "h2load", "-n", str(n), "-c", str(c), "-m", str(m),
                "-H", "content-type: application/grpc", "-H", "te: trailers",
                "-H", f"x-posenc-table: {spec.routing_key()}", "-d", body,
                *a.h2load_extra.split(),
                f"http://127.0.0.1:{port}/posenc.v1.PositionalEncoding/{a.method}"]
        return run_h2load(argv, timeout=120)

    try:
        def start_server(flags, log):
            port = free_port()
            proc = start([*pin0, f"{a.build}/server/posenc_server",
                          f"--listen=127.0.0.1:{port}", "--lame_duck_seconds=0",
                          "--threads=2", *flags], os.path.join(tmp, log))
            return port, proc

        direct_port, server = start_server([], "server.log")
        proxies = []
        for i, arg in enumerate(a.configs):
            # CFG:FLAGS puts this proxy in front of a replica of its own,
            # started with the comma-separated FLAGS.
            cfg, _, flags = arg.partition(":")
            sp, replica = direct_port, server
            if flags:
                sp, replica = start_server(flags.split(","),
                                           f"server-{i}.log")
            pp = free_port()
            name = os.path.basename(cfg) + (f" (replica {flags})"
                                             if flags else "")
            if cfg.endswith(".conf"):  # nginx
                text = open(cfg).read()
                for r in (1, 2, 3):
                    text = text.replace(f"posenc-{r}:50051", f"127.0.0.1:{sp}")
                text = text.replace("listen 50051", f"listen 127.0.0.1:{pp}")
                text = re.sub(r"^pid .*;", f"pid {tmp}/nginx-{i}.pid;", text,
                              flags=re.M)
                run = os.path.join(tmp, f"nginx-{i}.conf")
                with open(run, "w") as f:
                    f.write(text)
                proc = start([*pin1, "nginx", "-c", run, "-g", "daemon off;"],
                             os.path.join(tmp, f"nginx-{i}.log"))
            else:  # HAProxy
                env = dict(os.environ, POSENC_PROXY_BIND=f"127.0.0.1:{pp}")
                for r in (1, 2, 3):
                    env[f"POSENC_{r}"] = f"127.0.0.1:{sp}"
                proc = start([*pin1, "haproxy", "-db", "-f", cfg],
                             os.path.join(tmp, f"haproxy-{i}.log"), env)
            proxies.append((name, pp, proc, replica))
        time.sleep(2.5)  # health checks: rise 2 x 500 ms
        def direct_run():
            run = h2load(direct_port)
            if run.succeeded != n or run.errored:
                raise RuntimeError(f"direct run lost calls: {run}")
            return run

        warm = direct_run()  # the table into the cache
        for _, pp, _, replica in proxies:
            if replica is not server:
                h2load(pp)  # the table into that replica's cache
        per_call = warm.data_bytes / n  # one full response's DATA bytes
        print(f"{a.method}: h2load -n {n} -c {c} -m {m} {a.h2load_extra}"
              f"{'; pinned: server + h2load CPU 0, proxy CPU 1' if a.pin else ''}; "
              f"loadavg {open('/proc/loadavg').read().strip()}; "
              "CPU per call in us")
        ratios = {name: [] for name, _, _, _ in proxies}
        for r in range(a.rounds):
            s0, k0 = cpu_seconds(server.pid), children_cpu()
            direct = direct_run().rate(per_call)
            s1, k1 = cpu_seconds(server.pid), children_cpu()
            print(f"round {r + 1} (load {os.getloadavg()[0]:.2f}): direct "
                  f"{direct:.0f} req/s (server {1e6 * (s1 - s0) / n:.0f}, "
                  f"h2load {1e6 * (k1 - k0) / n:.0f})")
            for name, pp, proc, replica in proxies:
                x0, s0, k0 = (cpu_seconds(proc.pid), cpu_seconds(replica.pid),
                              children_cpu())
                run = h2load(pp)
                x1, s1, k1 = (cpu_seconds(proc.pid), cpu_seconds(replica.pid),
                              children_cpu())
                rps = run.rate(per_call)
                ratios[name].append(rps / direct)
                missing = n - run.complete(per_call)
                print(f"  {name}: {rps:.0f} req/s = {rps / direct:.2f}x "
                      f"(proxy {1e6 * (x1 - x0) / n:.0f}, server "
                      f"{1e6 * (s1 - s0) / n:.0f}, h2load "
                      f"{1e6 * (k1 - k0) / n:.0f})"
                      + (f"; {missing:.1f} responses' bytes missing, "
                         f"{run.errored} streams errored"
                         if missing > 1e-6 or run.errored else ""),
                      flush=True)
        for name, rs in ratios.items():
            if a.target is None:
                print(noise.ci_line(f"{name}: proxy/direct", rs, digits=2)
                      + f"; rounds {min(rs):.2f}..{max(rs):.2f}")
                continue
            v = noise.verdict(rs, a.target)
            print(v.line(f"{name}: proxy/direct", digits=2))
            missed += v.missed
        print(f"loadavg after: {open('/proc/loadavg').read().strip()}")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)  # nginx's master stops its workers
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        subprocess.run(["rm", "-rf", tmp], check=False)
    if missed:
        print(f"proxy_ab: {missed} proxy/direct target(s) MISSED",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
