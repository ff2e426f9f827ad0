#!/usr/bin/env bash
# bench/memory_check.sh: posenc_server's memory while it streams a table far
# larger than its cache (StreamBatches d=4096, max_len=1,000,000 float32 =
# 16.4 GB, computed message by message because --cache_bytes is 256 MiB).
#
#  (a) one client (h2load) reads the whole stream: server peak RSS (VmHWM)
#      must stay under cache budget + 100 MiB;
#  (b) twice: a slow client (bench/slow_reader.py) reads a few hundred
#      messages, then cancels: RSS stays bounded while it dawdles and returns
#      near its pre-call level afterwards (no leak).
#
# Usage: bench/memory_check.sh [--quick]   (--quick: max_len 100,000, 1.6 GB)
# Env:   BUILD (default <repo>/build), PORT (default 50181).
# Prints the numbers; exits 1 if a bound is broken or a call did not end as
# expected (GetStats StreamBatches counters are checked).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PORT=${PORT:-50181}
MAX_LEN=1000000
[[ ${1:-} == --quick ]] && MAX_LEN=100000
D=4096
CACHE=$((256 << 20))
BOUND_KB=$(( (CACHE + (100 << 20)) / 1024 ))
WORK=$(mktemp -d /tmp/posenc-mem.XXXXXX)
SPID="" SAMPLER=""
cleanup() {
  [[ -n $SAMPLER ]] && kill "$SAMPLER" 2>/dev/null
  [[ -n $SPID ]] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
FAILED=0
check() { if eval "$1"; then echo "  ok: $2"; else echo "  FAILED: $2"; FAILED=1; fi; }

printf '%s' "spec { d: $D max_len: $MAX_LEN }" |
  protoc --proto_path="$ROOT/proto" --encode=posenc.v1.StreamBatchesRequest posenc/v1/posenc.proto > "$WORK/req.msg"
n=$(stat -c %s "$WORK/req.msg")
printf "\\x00\\x00\\x00\\x00\\x$(printf %02x "$n")" > "$WORK/req.bin"; cat "$WORK/req.msg" >> "$WORK/req.bin"
TABLE_BYTES=$((D * MAX_LEN * 4))

"$BUILD/server/posenc_server" --listen=127.0.0.1:$PORT --cache_bytes=$CACHE --threads=2 > "$WORK/server.log" 2>&1 &
SPID=$!
stats() { "$BUILD/client/posenc" stats --target 127.0.0.1:$PORT --timeout 10; }
for _ in $(seq 50); do stats > /dev/null 2>&1 && break; sleep 0.2; done
# "ok errors" of StreamBatches from GetStats (text format; zero fields omitted).
sb() { stats | awk '/^methods \{/ { inm = 1; name = ""; ok = 0; err = 0; next }
  inm && $1 == "method:" { name = $2 } inm && $1 == "ok:" { ok = $2 } inm && $1 == "errors:" { err = $2 }
  inm && /^\}/ { if (name ~ /StreamBatches/) print ok, err; inm = 0 }'; }
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SPID/status"; }
# Samples VmRSS every 0.2 s into $WORK/rss.<tag>; prints nothing.
sample() { while kill -0 "$SPID" 2>/dev/null; do kb VmRSS >> "$WORK/rss.$1"; sleep 0.2; done; }
maxof() { sort -n "$WORK/rss.$1" | tail -1; }

BASE=$(kb VmRSS)
echo "posenc_server --cache_bytes=$CACHE (256 MiB) --threads=2; table d=$D max_len=$MAX_LEN float32 = $TABLE_BYTES bytes"
echo "baseline RSS: $BASE kB; bound (cache budget + 100 MiB): $BOUND_KB kB"

# (a) read it all.
echo "(a) h2load reads the whole stream"
c0=$(sb)
sample a & SAMPLER=$!
t0=$(date +%s.%N)
h2load -n 1 -c 1 -m 1 -w 30 -W 30 -H 'content-type: application/grpc' -H 'te: trailers' \
  -d "$WORK/req.bin" "http://127.0.0.1:$PORT/posenc.v1.PositionalEncoding/StreamBatches" > "$WORK/h2load.txt" 2>&1 || true
t1=$(date +%s.%N)
kill "$SAMPLER"; SAMPLER=""
c1=$(sb)
data=$(awk '$1 == "traffic:" { for (i = 1; i <= NF; i++) if ($i == "data") { v = $(i - 1); gsub(/[()]/, "", v); print v } }' "$WORK/h2load.txt")
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
HWM_A=$(kb VmHWM); RSS_A=$(kb VmRSS)
echo "  received $data bytes of gRPC data in ${secs}s ($(awk -v b="$data" -v s="$secs" 'BEGIN { printf "%.0f", b / s / 1e6 }') MB/s)"
echo "  RSS sampled peak $(maxof a) kB; VmHWM $HWM_A kB; RSS after $RSS_A kB"
check "[[ ${c1%% *} == $(( ${c0%% *} + 1 )) ]]" "GetStats StreamBatches ok +1 (before '$c0', after '$c1')"
check "(( data >= TABLE_BYTES ))" "client received >= $TABLE_BYTES bytes"
check "(( HWM_A < BOUND_KB ))" "VmHWM $HWM_A kB < $BOUND_KB kB"

# (b) slow reader, then cancel; twice.
for i in 1 2; do
  echo "(b$i) slow reader (one message per 20 ms for 4 s), then cancel"
  before=$(kb VmRSS); c0=$(sb)
  sample b$i & SAMPLER=$!
  /usr/bin/python3 "$ROOT/bench/slow_reader.py" --target 127.0.0.1:$PORT --request "$WORK/req.msg" \
    --interval 0.02 --seconds 4 | sed 's/^/  /'
  sleep 2
  kill "$SAMPLER"; SAMPLER=""
  after=$(kb VmRSS); c1=$(sb)
  echo "  RSS before $before kB, sampled peak $(maxof b$i) kB, 2 s after cancel $after kB"
  check "[[ ${c1#* } == $(( ${c0#* } + 1 )) ]]" "GetStats StreamBatches errors +1 (the cancelled call ended; before '$c0', after '$c1')"
  check "(( $(maxof b$i) < BOUND_KB ))" "peak RSS during the slow read < $BOUND_KB kB"
  check "(( after < before + 20480 ))" "RSS after the cancel within 20 MiB of before"
done
HWM=$(kb VmHWM)
echo "final VmHWM $HWM kB (bound $BOUND_KB kB); final RSS $(kb VmRSS) kB; baseline $BASE kB"
check "(( HWM < BOUND_KB ))" "lifetime VmHWM under the bound"
exit $FAILED
