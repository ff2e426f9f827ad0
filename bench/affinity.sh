#!/usr/bin/env bash
# bench/affinity.sh: consistent-hash routing through HAProxy, measured.
#
# (1) Hit ratio: 3 posenc replicas with --cache_bytes=B each behind HAProxy
#     (deploy/haproxy/haproxy.cfg), a working set of ~2.5 x B distinct
#     tables requested with GetTable in random order: hash routing
#     (x-posenc-table) against round robin (the same config, balance
#     roundrobin). Target: hash >= 0.9; round robin cannot pass ~0.4.
# (2) Proxy overhead: h2load directly against a replica and through HAProxy,
#     alternating: 1-row GetRows (target >= 0.7x) and 4 MiB GetTable
#     (target >= 0.6x), and that GetTable with h2load -f 65536 (client frames
#     up to 64 KiB; no target); then both calls through posenc's own C++
#     client (bench/client_load; no target). Each case also runs through an
#     L4 splice relay (bench/l4_relay.cfg), the floor for any proxy on the
#     same cores.
# Prints the commit and /proc/loadavg first: the machine may be shared.
#
# Usage: bench/affinity.sh [--part hits|overhead] [driver options]
#   (see bench/affinity_bench.py --help; e.g. --rounds 5 --calls 4800)
# Env:   BUILD=/path/to/build (default <repo>/build)
# Needs: haproxy, h2load (scripts/bootstrap.sh), build/server/posenc_server
#        and the Python stubs (cmake --build --preset release --target
#        posenc_server client_load posenc_python_stubs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
for f in "$BUILD/server/posenc_server" "$BUILD/bench/client_load" \
         "$BUILD/tests/interop/python/posenc/v1/posenc_pb2.py"; do
  [[ -e $f ]] || { echo "affinity.sh: missing $f" >&2; exit 2; }
done
command -v h2load >/dev/null || { echo "affinity.sh: h2load not found" >&2; exit 2; }
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[[ -x $HAPROXY ]] || { echo "affinity.sh: haproxy not found" >&2; exit 2; }
echo "commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo -dirty)"
echo "loadavg before: $(cat /proc/loadavg)  ($(nproc) cores)"
timeout 1200 /usr/bin/python3 "$ROOT/bench/affinity_bench.py" \
  --server "$BUILD/server/posenc_server" \
  --python-path "$ROOT/client/python:$BUILD/tests/interop/python" \
  --haproxy "$HAPROXY" \
  --haproxy-cfg "$ROOT/deploy/haproxy/haproxy.cfg" \
  --client-load "$BUILD/bench/client_load" "$@"
echo "loadavg after: $(cat /proc/loadavg)"
