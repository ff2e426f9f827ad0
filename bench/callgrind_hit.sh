#!/usr/bin/env bash
# bench/callgrind_hit.sh: instructions per call of a cache-hit GetTable vs the
# floor's unary reply of the same size, counted by valgrind --tool=callgrind
# (user-space instructions of every server thread; the kernel's socket copy,
# the same for both, is not counted). If posenc did work proportional to the
# table on a hit (recompute, copy), its surplus over the floor would grow 4x
# from 4 MiB to 16 MiB; the script prints the surplus at both sizes.
#
# Also: GetRows of one 2 KiB row vs the floor's 2 KiB unary (case 1), and
# StreamRows vs the floor's stream, per 2 KiB message (case 4).
#
# Usage: bench/callgrind_hit.sh [CALLS]   (default 20 calls per size; ~1 min)
# Env:   BUILD (default <repo>/build), PORT (default 50171).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
CALLS=${1:-20}
PORT=${PORT:-50171}
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
  { echo "callgrind_hit.sh: needs valgrind" >&2; exit 2; }
WORK=$(mktemp -d /tmp/posenc-callgrind.XXXXXX)
VPID=""
cleanup() {
  [[ -n $VPID ]] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

mkbody() {  # OUT PROTO_DIR PROTO_FILE TYPE TEXT: 5-byte gRPC prefix + message
  printf '%s' "$5" | protoc --proto_path="$2" --encode="$4" "$3" > "$1.msg"
  local n; n=$(stat -c %s "$1.msg")
  printf "\\x00\\x$(printf %02x $(((n >> 24) & 255)))\\x$(printf %02x $(((n >> 16) & 255)))\\x$(printf %02x $(((n >> 8) & 255)))\\x$(printf %02x $((n & 255)))" > "$1"
  cat "$1.msg" >> "$1"; rm -f "$1.msg"
}
mkbody "$WORK/prows.bin" "$ROOT/proto" posenc/v1/posenc.proto posenc.v1.GetRowsRequest "spec { d: 512 max_len: 2048 } positions: 1234"
mkbody "$WORK/frows.bin" "$ROOT/bench" floor.proto posenc.bench.FloorRequest "bytes: 2048"
mkbody "$WORK/psr.bin" "$ROOT/proto" posenc/v1/posenc.proto posenc.v1.StreamRowsRequest "spec { d: 512 max_len: 2048 }"
mkbody "$WORK/fsr.bin" "$ROOT/bench" floor.proto posenc.bench.FloorRequest "bytes: 2048 messages: 2048 distinct: true"
for len in 2048 8192; do
  mkbody "$WORK/p$len.bin" "$ROOT/proto" posenc/v1/posenc.proto posenc.v1.GetTableRequest "spec { d: 512 max_len: $len }"
  mkbody "$WORK/f$len.bin" "$ROOT/bench" floor.proto posenc.bench.FloorRequest "bytes: $((len * 2048))"
done
H2=(h2load -H 'content-type: application/grpc' -H 'te: trailers' -w 30 -W 30 -c 1 -m 1)

# measure NAME URL BODY: zero the counters, make CALLS calls, dump, print Ir/call.
measure() {
  callgrind_control -z "$VPID" > /dev/null 2>&1
  "${H2[@]}" -n "$CALLS" -d "$3" "$2" > "$WORK/$1.h2" 2>&1
  grep -q "$CALLS succeeded" "$WORK/$1.h2" || { echo "h2load failed: $(cat "$WORK/$1.h2")" >&2; exit 1; }
  callgrind_control -d "$1" "$VPID" > /dev/null 2>&1
  sleep 1
  local f; f=$(ls -t "$WORK"/callgrind.out.* | head -1)
  callgrind_annotate --inclusive=yes --threshold=100 "$f" > "$WORK/$1.incl" 2>/dev/null
  callgrind_annotate --threshold=100 "$f" > "$WORK/$1.self" 2>/dev/null
  # total, handler (inclusive), memcpy/memmove (self, every thread),
  # table computation (inclusive): instructions per call.
  local total handler copy compute
  total=$(awk '$1 == "totals:" || $1 == "summary:" { t = $2 } END { print t + 0 }' "$f")
  handler=$(awk '/PositionalEncodingService::Get(Table|Rows)\(|FloorService::Unary\(/ { gsub(/,/, "", $1); print $1; exit }' "$WORK/$1.incl")
  copy=$(awk '/memcpy|memmove/ { gsub(/,/, "", $1); s += $1 } END { print s + 0 }' "$WORK/$1.self")
  compute=$(awk '/ComputeRows|ComputeTable|ComputePositions|RowKernel/ { gsub(/,/, "", $1); if ($1 > m) m = $1 } END { print m + 0 }' "$WORK/$1.incl")
  awk -v n="$CALLS" -v a="$total" -v b="${handler:-0}" -v c="$copy" -v d="$compute" 'BEGIN { printf "%.0f %.0f %.0f %.0f\n", a / n, b / n, c / n, d / n }'
}

run_server() {  # SERVER_NAME ARGS...
  local name=$1; shift
  (cd "$WORK" && exec valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out.$name" "$@" > "$WORK/$name.log" 2>&1) &
  VPID=$!
  sleep 2
  for _ in $(seq 120); do
    "${H2[@]}" -n 1 -d "$WORK/$WARM" "$WARM_URL" 2>/dev/null | grep -q '1 succeeded' && return 0
    sleep 1
  done
  echo "server $name did not answer" >&2; exit 1
}
stop_server() { kill "$VPID"; wait "$VPID" 2>/dev/null || true; VPID=""; }
# warm_measure KEY URL N: N warming calls (0: none) of $WORK/KEY.bin to
# URL, then IR[KEY], the measured instructions of that call.
warm_measure() {
  local key=$1 url=$2 calls=$3
  if ((calls > 0)); then
    "${H2[@]}" -n "$calls" -d "$WORK/$key.bin" "$url" > /dev/null 2>&1
  fi
  IR[$key]=$(measure "$key" "$url" "$WORK/$key.bin")
}

P=http://127.0.0.1:$PORT/posenc.v1.PositionalEncoding/GetTable
F=http://127.0.0.1:$PORT/posenc.bench.Floor/Unary
declare -A IR
WARM=p8192.bin WARM_URL=$P run_server posenc "$BUILD/server/posenc_server" --listen=127.0.0.1:$PORT --threads=2
warm_measure p2048 "$P" 2
warm_measure p8192 "$P" 0
warm_measure prows "${P%/GetTable}/GetRows" 2
warm_measure psr "${P%/GetTable}/StreamRows" 1
stop_server
WARM=f8192.bin WARM_URL=$F run_server floor "$BUILD/bench/floor_server" --listen=127.0.0.1:$PORT
warm_measure f2048 "$F" 2
warm_measure f8192 "$F" 0
warm_measure frows "$F" 2
warm_measure fsr "${F%/Unary}/Stream" 1
stop_server

echo "user-space instructions per call (all server threads), $CALLS calls each:"
printf '%-34s %12s %12s %12s %12s\n' "server, reply size" "total" "handler" "memcpy" "compute"
for len in 2048 8192; do
  for s in p f; do
    name="posenc GetTable"; [[ $s == f ]] && name="floor Unary"
    read -r t h c k <<< "${IR[$s$len]}"
    printf '%-34s %12s %12s %12s %12s\n' "$name $((len * 2048 / 1048576)) MiB" "$t" "$h" "$c" "$k"
  done
done
for s in p f; do
  name="posenc GetRows 1 row"; [[ $s == f ]] && name="floor Unary"
  read -r t h c k <<< "${IR[${s}rows]}"
  printf '%-34s %12s %12s %12s %12s\n' "$name 2 KiB" "$t" "$h" "$c" "$k"
done
read -r pt1 ph1 _ _ <<< "${IR[p2048]}"; read -r ft1 fh1 _ _ <<< "${IR[f2048]}"
read -r pt4 ph4 _ _ <<< "${IR[p8192]}"; read -r ft4 fh4 _ _ <<< "${IR[f8192]}"
echo "handler surplus posenc - floor: $((ph1 - fh1)) (4 MiB), $((ph4 - fh4)) (16 MiB) instructions per call"
echo "total surplus posenc - floor:   $((pt1 - ft1)) (4 MiB), $((pt4 - ft4)) (16 MiB) instructions per call"
read -r prt prh _ _ <<< "${IR[prows]}"; read -r frt frh _ _ <<< "${IR[frows]}"
echo "2 KiB GetRows vs floor: handler surplus $((prh - frh)), total surplus $((prt - frt)) instructions per call ($(awk -v a="$prt" -v b="$frt" 'BEGIN { printf "%.1f", 100 * (a - b) / b }')%)"
read -r pst _ _ _ <<< "${IR[psr]}"; read -r fst _ _ _ <<< "${IR[fsr]}"
echo "StreamRows d=512 (2048 messages of 2 KiB) vs floor stream of 2048 different 2 KiB messages, per message: posenc $((pst / 2048)), floor $((fst / 2048)) instructions"
echo "(copying 16 MiB would take >= 262144 instructions even at 64 bytes per instruction)"
