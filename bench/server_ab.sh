#!/usr/bin/env bash
# bench/server_ab.sh: two posenc_server binaries side by side, and the gRPC
# floor as a reference, on the cheapest call: 1-row GetRows (d=512, a cached
# table) from h2load, -c 64 -m 1. Per call: the server's CPU time (user +
# sys, /proc/PID/stat) and its context switches (voluntary + involuntary,
# summed over /proc/PID/task/*/status), and req/s. Rounds alternate
# before / after / floor, so the machine's load moves all three alike.
#
# Usage: bench/server_ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS] [CALLS]
#        (default 3 rounds of 60000 calls; e.g. copy build/server/posenc_server
#        aside before a change, rebuild, and pass both)
# Needs: h2load, protoc, build/bench/floor_server (BUILD=<dir> for another).
# Bounded: 3 x ROUNDS h2load runs, each under a 60 s timeout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[[ $# -ge 2 ]] || { sed -n 2,13p "$0" >&2; exit 2; }
BEFORE=$1 AFTER=$2 ROUNDS=${3:-3} CALLS=${4:-60000}
WORK=$(mktemp -d /tmp/posenc-server-ab.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# A gRPC-framed request body: 5-byte prefix + the message, encoded by protoc.
body() {  # OUT PROTO_DIR PROTO_FILE TYPE TEXT
  printf '%s' "$5" | protoc --proto_path="$2" --encode="$4" "$3" > "$1.msg"
  python3 -c 'import struct,sys; m=open(sys.argv[1],"rb").read(); open(sys.argv[2],"wb").write(b"\0"+struct.pack(">I",len(m))+m)' "$1.msg" "$1"
}
body "$WORK/rows.bin" "$ROOT/proto" posenc/v1/posenc.proto posenc.v1.GetRowsRequest \
  'spec { d: 512 max_len: 65536 } positions: 12345'
body "$WORK/floor.bin" "$ROOT/bench" floor.proto posenc.bench.FloorRequest 'bytes: 2048'

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A PORT PID PATHS
PATHS[before]=/posenc.v1.PositionalEncoding/GetRows
PATHS[after]=/posenc.v1.PositionalEncoding/GetRows
PATHS[floor]=/posenc.bench.Floor/Unary
for name in before after floor; do
  PORT[$name]=$(port)
  case $name in
    before) cmd=("$BEFORE" --listen=127.0.0.1:${PORT[$name]} --lame_duck_seconds=0) ;;
    after) cmd=("$AFTER" --listen=127.0.0.1:${PORT[$name]} --lame_duck_seconds=0) ;;
    floor) cmd=("$BUILD/bench/floor_server" --listen=127.0.0.1:${PORT[$name]}) ;;
  esac
  "${cmd[@]}" > "$WORK/$name.log" 2>&1 &
  PID[$name]=$!
  PIDS+=($!)
done
sleep 1
h2() {  # NAME N
  local b=$WORK/rows.bin
  [[ $1 == floor ]] && b=$WORK/floor.bin
  timeout 60 h2load -H content-type:application/grpc -H te:trailers -d "$b" \
    -n "$2" -c 64 -m 1 "http://127.0.0.1:${PORT[$1]}${PATHS[$1]}"
}
# Warm-up: the table computed and cached (its compute finished), then a
# full-size run each (gRPC's thread pools and malloc arenas grow in the
# first one: a first round costs ~1.5x).
for name in before after; do h2 $name 200 > /dev/null; done
sleep 3
for name in before after floor; do h2 $name "$CALLS" > /dev/null; done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # clock ticks
switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/ctxt_switches/ {s += $2} END {print s}'
}
hz=$(getconf CLK_TCK)
echo "server_ab.sh at $(git -C "$ROOT" rev-parse --short HEAD); loadavg $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of $CALLS 1-row calls, h2load -c 64 -m 1"
echo "before: $BEFORE"
echo "after:  $AFTER"
printf '%-7s %-6s %10s %14s %16s\n' round server req/s "cpu us/call" "switches/call"
for r in $(seq "$ROUNDS"); do
  for name in before after floor; do
    p=${PID[$name]}
    c0=$(cpu "$p") s0=$(switches "$p")
    out=$(h2 "$name" "$CALLS")
    c1=$(cpu "$p") s1=$(switches "$p")
    grep -q "$CALLS succeeded" <<<"$out" || { echo "h2load: not every call succeeded ($name)" >&2; exit 1; }
    rps=$(grep -oE 'finished in [0-9.]+s, [0-9.]+ req/s' <<<"$out" | awk '{print $4}')
    awk -v r="$r" -v n="$name" -v q="$rps" -v c=$((c1 - c0)) -v s=$((s1 - s0)) \
      -v hz="$hz" -v k="$CALLS" \
      'BEGIN {printf "%-7s %-6s %10.0f %14.1f %16.3f\n", r, n, q, c * 1e6 / hz / k, s / k}'
  done
done
