#!/usr/bin/python3
"""bench/client_load and bench/l4_relay.cfg, end to end on 127.0.0.1.

bench/affinity.sh rests on both: the C++ client's view of the proxy and the
L4 relay's floor. This runs them against a real posenc_server and a real
HAProxy, so neither rots between benchmark runs:
  - client_load makes every call succeed, directly and through the relay,
    for GetTable and GetRows, and prints the line the bench parses;
  - with the relay stopped, client_load fails and exits 1 (a failed call is
    never counted as a result);
  - a bad --method exits 2.
Usage: bench_tools_test.py --server BIN --client-load BIN --haproxy BIN
       --relay-cfg bench/l4_relay.cfg --affinity-dir tests/affinity
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile

LINE = re.compile(r"calls (\d+) failed (\d+) seconds [\d.]+ calls_per_second "
                  r"([\d.]+) cpu_us_per_call [\d.]+")


def client_load(binary, target, method, calls=20):
    return subprocess.run(
        [binary, f"--target={target}", f"--method={method}",
         f"--calls={calls}", "--threads=2", "--d=64", "--max_len=128"],
        capture_output=True, text=True, timeout=60)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server", required=True)
    p.add_argument("--client-load", required=True)
    p.add_argument("--haproxy", required=True)
    p.add_argument("--relay-cfg", required=True)
    p.add_argument("--affinity-dir", required=True)
    args = p.parse_args()
    sys.path.insert(0, args.affinity_dir)
    import affinity_test as at  # Process, Replica, free_port

    failures = []

    def check(condition, message):
        print(("ok   " if condition else "FAIL ") + message)
        if not condition:
            failures.append(message)

    with tempfile.TemporaryDirectory(prefix="posenc-bench-tools-") as tmp:
        server = at.Replica(args.server, os.path.join(tmp, "server.log"), [])
        relay = None
        try:
            relay_target = f"127.0.0.1:{at.free_port()}"
            relay = at.Process(
                [args.haproxy, "-db", "-f", args.relay_cfg],
                os.path.join(tmp, "relay.log"),
                env=dict(os.environ, POSENC_PROXY_BIND=relay_target,
                         POSENC_1=server.target))
            at.wait_for_port(relay_target, relay)
            for method in ("GetTable", "GetRows"):
                for label, target in (("direct", server.target),
                                      ("relay", relay_target)):
                    run = client_load(args.client_load, target, method)
                    m = LINE.search(run.stdout)
                    check(run.returncode == 0 and m is not None
                          and m.group(1) == "20" and m.group(2) == "0"
                          and float(m.group(3)) > 0,
                          f"{method} {label}: 20 calls, 0 failed, exit 0 "
                          f"({run.stdout.strip()} {run.stderr.strip()})")
            relay.stop(signal.SIGTERM, timeout=10)
            run = client_load(args.client_load, relay_target, "GetRows")
            check(run.returncode == 1,
                  f"relay stopped: exit 1 (got {run.returncode}: "
                  f"{run.stderr.strip()})")
            run = client_load(args.client_load, server.target, "GetStats")
            check(run.returncode == 2, f"--method=GetStats: exit 2 (got "
                  f"{run.returncode})")
        finally:
            if relay is not None:
                relay.stop(signal.SIGTERM, timeout=10)
            server.stop(signal.SIGKILL, timeout=5)
    print(f"bench tools: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
