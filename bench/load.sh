#!/usr/bin/env bash
# bench/load.sh: posenc vs the gRPC floor (bench/floor_server), side by side.
#
# Starts posenc_server and floor_server on 127.0.0.1, drives both with h2load
# (gRPC framing over h2c), alternating posenc and floor run by run for
# ROUNDS rounds, checks every run against the servers' own OK counters, and
# prints one table: posenc's number, the floor's, and their ratio (median of
# the per-round ratios, with its 95% confidence interval and the verdict).
# See docs/load-testing.md.
#
# Usage: bench/load.sh [ROUNDS]        (default 9; ~5 minutes)
# Env:   BUILD=/path/to/build (default <repo>/build)
#        POSENC_PORT=50161 FLOOR_PORT=50162   THREADS=2
#        KEEP=1 keeps the work directory (h2load outputs, server logs).
# Needs: h2load (Debian nghttp2-client), protoc, build/server/posenc_server,
#        build/client/posenc, build/bench/floor_server.
# Verdicts: bench/noise.py (the rule of every benchmark) on the per-round
# ratios: 9 rounds by default, the fewest whose 95% interval of the median
# leaves out the best and the worst round (below 6 rounds it is the whole
# range, and covers the median with less than 95%).
# Exit status: 0 when every run succeeded, was confirmed by the server's
# counters, and no target was MISSED; 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
ROUNDS=${1:-${ROUNDS:-9}}
PPORT=${POSENC_PORT:-50161}
FPORT=${FLOOR_PORT:-50162}
THREADS=${THREADS:-2}
POSENC_SERVER=$BUILD/server/posenc_server
POSENC_CLI=$BUILD/client/posenc
FLOOR=$BUILD/bench/floor_server
for f in "$POSENC_SERVER" "$POSENC_CLI" "$FLOOR"; do
  [[ -x $f ]] || { echo "load.sh: missing $f (ninja -C $BUILD posenc_server posenc floor_server)" >&2; exit 2; }
done
command -v h2load >/dev/null || { echo "load.sh: h2load not found (apt-get install nghttp2-client)" >&2; exit 2; }
command -v protoc >/dev/null || { echo "load.sh: protoc not found" >&2; exit 2; }

WORK=$(mktemp -d /tmp/posenc-load.XXXXXX)
PPID_SERVER="" FPID_SERVER=""
cleanup() {
  [[ -n $PPID_SERVER ]] && kill "$PPID_SERVER" 2>/dev/null && wait "$PPID_SERVER" 2>/dev/null
  [[ -n $FPID_SERVER ]] && kill "$FPID_SERVER" 2>/dev/null && wait "$FPID_SERVER" 2>/dev/null
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
FAILURES=0
fail() { echo "CHECK FAILED: $*" >&2; FAILURES=$((FAILURES + 1)); }

# ---- request bodies: 5-byte gRPC prefix + the message, encoded by protoc ----
# mkbody OUT PROTO_DIR PROTO_FILE TYPE TEXT_FORMAT
mkbody() {
  local out=$1
  printf '%s' "$5" | protoc --proto_path="$2" --encode="$4" "$3" > "$out.msg"
  local n; n=$(stat -c %s "$out.msg")
  printf "\\x00\\x$(printf %02x $(((n >> 24) & 255)))\\x$(printf %02x $(((n >> 16) & 255)))\\x$(printf %02x $(((n >> 8) & 255)))\\x$(printf %02x $((n & 255)))" > "$out"
  cat "$out.msg" >> "$out"
  rm -f "$out.msg"
}
pbody() { mkbody "$WORK/$1" "$ROOT/proto" posenc/v1/posenc.proto "posenc.v1.$2" "$3"; }
fbody() { mkbody "$WORK/$1" "$ROOT/bench" floor.proto posenc.bench.FloorRequest "$2"; }

# The cases. Cases 1-4 hit posenc's cache (warmed below); case 5 misses.
pbody rows.bin GetRowsRequest 'spec { d: 512 max_len: 65536 } positions: 12345'
fbody rows_floor.bin 'bytes: 2048'
pbody table.bin GetTableRequest 'spec { d: 512 max_len: 2048 }'
fbody table_floor.bin 'bytes: 4194304'
pbody batches.bin StreamBatchesRequest 'spec { d: 512 max_len: 65536 }'
# Streams: the floor sends as many *different* prebuilt messages (windows of
# one 128 MiB buffer, read from memory as posenc reads its cached table), and,
# for reference, one hot prebuilt message over and over ("hot" rows).
fbody batches_floor.bin 'bytes: 65536 messages: 2048 distinct: true'
fbody batches_hot_floor.bin 'bytes: 65536 messages: 2048'
pbody srows.bin StreamRowsRequest 'spec { d: 512 max_len: 65536 }'
fbody srows_floor.bin 'bytes: 2048 messages: 65536 distinct: true'
fbody srows_hot_floor.bin 'bytes: 2048 messages: 65536'
COLD_MAX_LEN=16384                                 # d=512 float32: 32 MiB
COLD_BYTES=$((COLD_MAX_LEN * 512 * 4))
COLD_K=12                                          # distinct specs per round
fbody cold_floor.bin "bytes: $COLD_BYTES"

PURL=http://127.0.0.1:$PPORT/posenc.v1.PositionalEncoding
FURL=http://127.0.0.1:$FPORT/posenc.bench.Floor
H2=(h2load -H 'content-type: application/grpc' -H 'te: trailers' -w 30 -W 30)

# ---- servers ----
"$POSENC_SERVER" --listen=127.0.0.1:$PPORT --threads="$THREADS" > "$WORK/posenc.log" 2>&1 &
PPID_SERVER=$!
"$FLOOR" --listen=127.0.0.1:$FPORT > "$WORK/floor.log" 2>&1 &
FPID_SERVER=$!

# Counters. posenc: "ok errors" of one method from GetStats (text format; a
# zero field is omitted), or a cache field. floor: its Stats RPC.
pstats() { "$POSENC_CLI" stats --target 127.0.0.1:$PPORT --timeout 10 > "$WORK/pstats.txt"; }
p_method() {
  awk -v m="$1" '
    /^methods \{/ { inm = 1; name = ""; ok = 0; err = 0; next }
    inm && $1 == "method:" { name = $2; gsub(/"/, "", name) }
    inm && $1 == "ok:" { ok = $2 }
    inm && $1 == "errors:" { err = $2 }
    inm && /^\}/ { if (name ~ ("/" m "$")) print ok, err; inm = 0 }' "$WORK/pstats.txt"
}
p_cache() { awk -v f="$1:" '$1 == f { v = $2 } END { print v + 0 }' "$WORK/pstats.txt"; }
f_stat() { "$FLOOR" --stats_of=127.0.0.1:$FPORT | awk -v f="$1" '{ for (i = 1; i < NF; i += 2) if ($i == f) print $(i + 1) }'; }

for _ in $(seq 50); do
  pstats 2>/dev/null && f_stat unary_ok >/dev/null 2>&1 && break
  sleep 0.2
done
pstats || { echo "posenc_server did not start:" >&2; cat "$WORK/posenc.log" >&2; exit 1; }

# Warm-up, not measured: posenc computes and caches d=512 max_len=65536
# (128 MiB, within the default 512 MiB budget; every hit case is a prefix of
# it); the floor builds each reply once.
"${H2[@]}" -n 1 -d "$WORK/batches.bin" "$PURL/StreamBatches" > "$WORK/warm.txt" 2>&1
for b in rows table batches batches_hot srows srows_hot cold; do
  m=Unary; [[ $b == batches* || $b == srows* ]] && m=Stream
  "${H2[@]}" -n 1 -d "$WORK/${b}_floor.bin" "$FURL/$m" >> "$WORK/warm.txt" 2>&1
done

# ---- one h2load run ----
# h2 OUT ARGS...: runs h2load; sets DONE (succeeded), SECS (duration).
h2() {
  local out=$1; shift
  timeout 300 "${H2[@]}" "$@" > "$out" 2>&1 || { fail "h2load $* (see $out)"; }
  DONE=$(awk '$1 == "requests:" { print $8 }' "$out")
  local total; total=$(awk '$1 == "requests:" { print $2 }' "$out")
  SECS=$(awk '$1 == "finished" { v = $3; sub(/,$/, "", v);
                if (v ~ /ms$/) { sub(/ms$/, "", v); v /= 1000 }
                else if (v ~ /us$/) { sub(/us$/, "", v); v /= 1e6 }
                else sub(/s$/, "", v);
                print v }' "$out")
  [[ -n $DONE && $DONE == "$total" ]] || fail "h2load: $DONE of $total succeeded ($out)"
}
# Percentile (0-100) of column 3 (us) of an h2load --log-file, in ms.
pct() { sort -n -k3,3 "$1" | awk -v p="$2" '{ a[NR] = $3 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; printf "%.2f", a[i] / 1000 }'; }

# CPU time (user + system, clock ticks) the server process has used so far.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
CPU_TICKS=0  # ticks the server used during the last run_posenc / run_floor

RESULTS=$WORK/results.txt  # round case server value p50 p99 cpu_ticks
: > "$RESULTS"

# run_posenc CASE METHOD BODY H2ARGS...: verifies GetStats ok delta = DONE
# and that the tables computed whole (admitted into the cache, or refused a
# place by the admission rule and computed for the call) = EXPECT_COMPUTATIONS.
run_posenc() {
  local case=$1 method=$2 body=$3; shift 3
  pstats; local before; before=$(p_method "$method"); local c0; c0=$(( $(p_cache computations) + $(p_cache rejections) ))
  local t0; t0=$(ticks "$PPID_SERVER")
  h2 "$WORK/r$R.$case.posenc.txt" -d "$WORK/$body" "$@" "$PURL/$method"
  CPU_TICKS=$(( $(ticks "$PPID_SERVER") - t0 ))
  pstats; local after; after=$(p_method "$method"); local c1; c1=$(( $(p_cache computations) + $(p_cache rejections) ))
  local dok=$(( ${after% *} - ${before% *} )) derr=$(( ${after#* } - ${before#* } ))
  [[ $dok == "$DONE" && $derr == 0 ]] || fail "posenc $case round $R: h2load says $DONE succeeded, GetStats $method ok +$dok errors +$derr"
  [[ $(( c1 - c0 )) == "${EXPECT_COMPUTATIONS:-0}" ]] || fail "posenc $case round $R: cache computations +$((c1 - c0)), expected ${EXPECT_COMPUTATIONS:-0}"
}
run_floor() {
  local case=$1 method=$2 body=$3; shift 3
  local key=unary_ok; [[ $method == Stream ]] && key=stream_ok
  local before; before=$(f_stat $key)
  local t0; t0=$(ticks "$FPID_SERVER")
  h2 "$WORK/r$R.$case.floor.txt" -d "$WORK/$body" "$@" "$FURL/$method"
  CPU_TICKS=$(( $(ticks "$FPID_SERVER") - t0 ))
  local after; after=$(f_stat $key)
  [[ $(( after - before )) == "$DONE" ]] || fail "floor $case round $R: h2load says $DONE succeeded, floor $key +$((after - before))"
}
record() { echo "$R $1 $2 $3 ${4:--} ${5:--} $CPU_TICKS" >> "$RESULTS"; }
# value EXPR: the awk expression EXPR (a printf) of the last run: n = DONE,
# t = SECS, ticks = CPU_TICKS, hz = HZ.
value() {
  awk -v n="$DONE" -v t="$SECS" -v ticks="$CPU_TICKS" -v hz="$HZ" "BEGIN { $1 }"
}
# run_both CASE METHOD FLOOR_METHOD BODY EXPR ARGS...: CASE on posenc
# (METHOD, BODY.bin) then on the floor (FLOOR_METHOD, BODY_floor.bin), the
# same h2load ARGS; records each server's value EXPR.
run_both() {
  local name=$1 method=$2 floor_method=$3 body=$4 expr=$5
  shift 5
  run_posenc "$name" "$method" "$body.bin" "$@"
  record "$name" posenc "$(value "$expr")"
  run_floor "$name" "$floor_method" "${body}_floor.bin" "$@"
  record "$name" floor "$(value "$expr")"
}

N1=${N1:-60000}   # case 1 requests
N1R=${N1R:-32000} # case 1r requests (2 s at 16,000/s)
HZ=$(getconf CLK_TCK)
N2=${N2:-600}     # case 2 requests (4 MiB each)
N3=${N3:-16}      # case 3 streams (128 MiB each)
N4=${N4:-8}       # case 4 streams (65536 messages each)
echo "load.sh: $ROUNDS rounds; load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
START=$(date +%s)
for R in $(seq "$ROUNDS"); do
  # 1. GetRows 1 row (2 KiB), concurrency 64 = 4 connections x 16 streams.
  for s in posenc floor; do
    if [[ $s == posenc ]]; then run_posenc rows GetRows rows.bin -n "$N1" -c 4 -m 16 --log-file="$WORK/r$R.rows.$s.log"
    else run_floor rows Unary rows_floor.bin -n "$N1" -c 4 -m 16 --log-file="$WORK/r$R.rows.$s.log"; fi
    record rows $s "$(awk -v n="$DONE" -v t="$SECS" 'BEGIN { printf "%.0f", n / t }')" \
      "$(pct "$WORK/r$R.rows.$s.log" 50)" "$(pct "$WORK/r$R.rows.$s.log" 99)"
  done
  # 1r. The same calls at a fixed offered rate (4 x --rps 4000 = 16,000/s,
  # below both servers' maximum): server CPU microseconds per call. Both
  # servers then do the same work at the same batching, so this isolates
  # posenc's own per-call cost from the noise of other load.
  run_both rows_rps GetRows Unary rows 'printf "%.2f", ticks / hz * 1e6 / n' \
    -n "$N1R" -c 4 -m 16 --rps 4000
  # 2. GetTable d=512 max_len=2048 (4 MiB), 1 connection x 4 streams.
  run_both table GetTable Unary table 'printf "%.0f", n * 4194304 / t / 1e6' \
    -n "$N2" -c 1 -m 4
  # 3. StreamBatches d=512 max_len=65536 (128 MiB, 2048 x 64 KiB), 1 x 4.
  run_both batches StreamBatches Stream batches \
    'printf "%.0f", n * 134217728 / t / 1e6' -n "$N3" -c 1 -m 4
  run_floor batches_hot Stream batches_hot_floor.bin -n "$N3" -c 1 -m 4
  record batches_hot floor "$(value 'printf "%.0f", n * 134217728 / t / 1e6')"
  # 4. StreamRows d=512 max_len=65536 (65536 x 2 KiB messages), 1 x 4.
  run_both srows StreamRows Stream srows 'printf "%.0f", n * 65536 / t' \
    -n "$N4" -c 1 -m 4
  run_floor srows_hot Stream srows_hot_floor.bin -n "$N4" -c 1 -m 4
  record srows_hot floor "$(value 'printf "%.0f", n * 65536 / t')"
  # 5. Cold misses: GetTable d=512 max_len=16384 (32 MiB), a new base each
  # request (COLD_K per round, one h2load run each), vs floor unary 32 MiB.
  for s in posenc floor; do
    total=0 cold_ticks=0
    for k in $(seq "$COLD_K"); do
      if [[ $s == posenc ]]; then
        base=$((20000 + 100 * R + k))
        pbody cold.bin GetTableRequest "spec { d: 512 max_len: $COLD_MAX_LEN base: $base }"
        EXPECT_COMPUTATIONS=1 run_posenc cold GetTable cold.bin -n 1 -c 1 -m 1
      else
        run_floor cold Unary cold_floor.bin -n 1 -c 1 -m 1
      fi
      total=$(awk -v a="$total" -v b="$SECS" 'BEGIN { print a + b }')
      cold_ticks=$((cold_ticks + CPU_TICKS))
    done
    CPU_TICKS=$cold_ticks
    record cold $s "$(awk -v n="$COLD_K" -v t="$total" -v b="$COLD_BYTES" 'BEGIN { printf "%.0f", n * b / t / 1e6 }')"
  done
done
ELAPSED=$(( $(date +%s) - START ))

# ---- the verdicts: bench/noise.py, the rule of every benchmark ----
# Each case's per-round ratios posenc / floor (floor / posenc for CPU per
# call, where less is better): their median, the 95% confidence interval of
# that median, and against a target "met" (the whole interval meets it),
# "within noise" (the target lies inside it) or "MISSED".
NOISE=(python3 "$ROOT/bench/noise.py")
CASES="rows rows_rps table batches srows cold batches_hot srows_hot"
declare -A TARGET=([rows]=0.85 [table]=0.85 [batches]=0.90 [srows]=0.80)
declare -A SHORT=([rows]="1 GetRows 1 row" [table]="2 GetTable 4 MiB hit"
  [batches]="3 StreamBatches 128 MiB hit" [srows]="4 StreamRows hit")
# ratios CASE: the per-round ratios, one line.
ratios() {
  awk -v k="$1" -v rounds="$ROUNDS" '
    { v[$2, $3, $1] = $4 }
    END {
      # The "hot" rows compare the same posenc runs with a floor that
      # resends one cached message.
      pk = (k == "batches_hot") ? "batches" : (k == "srows_hot") ? "srows" : k
      for (r = 1; r <= rounds; r++) {
        p = v[pk, "posenc", r]; f = v[k, "floor", r]
        if (k == "rows_rps") { a = f; f = p; p = a }
        printf "%s%s", (r > 1 ? " " : ""), (f > 0) ? sprintf("%.6g", p / f) : "nan"
      }
      print ""
    }' "$RESULTS"
}
MISSED=0
VERDICTS=""
ROUND_RATIOS=""
: > "$WORK/ci.txt"  # case median lo hi verdict (one word)
for k in $CASES; do
  rs=$(ratios "$k")
  ROUND_RATIOS+="  $k: $rs"$'\n'
  # shellcheck disable=SC2086  # $rs: one sample per word
  ci=$("${NOISE[@]}" ci $rs) || { fail "case $k: no ratio in some round ($rs)"; continue; }
  word="(info)"
  if [[ -n ${TARGET[$k]:-} ]]; then
    rc=0
    # shellcheck disable=SC2086
    line=$("${NOISE[@]}" verdict --target "${TARGET[$k]}" --higher-is-better \
      --name "case ${SHORT[$k]}, posenc / floor" $rs) || rc=$?
    case $rc in
      0) ;;
      1) MISSED=$((MISSED + 1)) ;;
      *) fail "noise.py verdict for case $k ($rs)"; continue ;;
    esac
    VERDICTS+="  $line"$'\n'
    word=">=${TARGET[$k]} $(sed -E 's/.*: ([^:]*)\)$/\1/; s/ /-/g' <<<"$line")"
  fi
  echo "$k $ci $word" >> "$WORK/ci.txt"
done

# ---- the table ----
awk -v rounds="$ROUNDS" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v secs="$ELAPSED" '
  function median(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
  }
  FNR == NR { mr[$1] = $2; lo[$1] = $3; hi[$1] = $4; t[$1] = $5 " " $6; next }  # ci.txt
  { v[$2, $3, $1] = $4; p50[$2, $3, $1] = $5; p99[$2, $3, $1] = $6; cpu[$2, $3, $1] = $7 }
  END {
    n = split("rows rows_rps table batches srows cold batches_hot srows_hot", cases, " ")
    same["batches_hot"] = "batches"; same["srows_hot"] = "srows"
    name["rows"] = "1 GetRows 1 row d=512 (2 KiB), c=64"; unit["rows"] = "req/s"
    name["rows_rps"] = "1r case 1 at fixed 16k/s: CPU per call"; unit["rows_rps"] = "cpu-us"
    name["table"] = "2 GetTable d=512 len=2048 (4 MiB) hit"; unit["table"] = "MB/s"
    name["batches"] = "3 StreamBatches len=65536 (128 MiB) hit"; unit["batches"] = "MB/s"
    name["srows"] = "4 StreamRows len=65536 (2 KiB msgs) hit"; unit["srows"] = "msg/s"
    name["cold"] = "5 GetTable 32 MiB cold miss (new base)"; unit["cold"] = "MB/s"
    name["batches_hot"] = "3h case 3 vs floor resending 1 hot msg"; unit["batches_hot"] = "MB/s"
    name["srows_hot"] = "4h case 4 vs floor resending 1 hot msg"; unit["srows_hot"] = "msg/s"
    printf "\n%-42s %-6s %10s %10s %7s %-13s %-19s %6s %s\n", "case (median of " rounds " rounds)", "unit", "posenc", "floor", "ratio", "95% CI", "target", "best", "cpu ratio"
    for (c = 1; c <= n; c++) {
      k = cases[c]; pk = (k in same) ? same[k] : k
      if (!(k in mr)) continue
      for (r = 1; r <= rounds; r++) {
        pp[r] = v[pk, "posenc", r]; ff[r] = v[k, "floor", r]
        cr[r] = cpu[pk, "posenc", r] > 0 ? cpu[k, "floor", r] / cpu[pk, "posenc", r] : 0
      }
      bp = pp[1]; bf = ff[1]
      for (r = 2; r <= rounds; r++) {
        if (k == "rows_rps") { if (pp[r] < bp) bp = pp[r]; if (ff[r] < bf) bf = ff[r] }
        else { if (pp[r] > bp) bp = pp[r]; if (ff[r] > bf) bf = ff[r] }
      }
      best = (k == "rows_rps") ? bf / bp : bp / bf
      mp = median(pp, rounds); mf = median(ff, rounds); mc = median(cr, rounds)
      printf "%-42s %-6s %10.*f %10.*f %7.3f %-13s %-19s %6.3f %.3f\n", name[k], unit[k], (k == "rows_rps") ? 1 : 0, mp, (k == "rows_rps") ? 1 : 0, mf, mr[k], sprintf("%.3f..%.3f", lo[k], hi[k]), t[k], best, mc
    }
    for (s = 1; s <= 2; s++) {
      srv = (s == 1) ? "posenc" : "floor"
      for (r = 1; r <= rounds; r++) { a[r] = p50["rows", srv, r]; b[r] = p99["rows", srv, r] }
      printf "case 1 latency %-6s p50 %s ms  p99 %s ms (median of rounds)\n", srv, median(a, rounds), median(b, rounds)
    }
    printf "ratio = median of the per-round ratios; 95%% CI = its distribution-free confidence interval (bench/noise.py)\n"
    printf "best = best posenc round / best floor round (other load only slows a run down)\n"
    printf "cpu ratio = floor server CPU time / posenc server CPU time for the same work (user+sys, /proc/PID/stat; median of rounds); less sensitive to other load than wall-clock ratios\n"
    printf "load average after: %s; measuring took %ss\n", load, secs
  }' "$WORK/ci.txt" "$RESULTS"
echo
echo "verdicts (bench/noise.py: met = the whole 95% CI of the median meets the target, within noise = the target lies inside it):"
printf '%s' "$VERDICTS"
echo "per-round ratios:"
printf '%s' "$ROUND_RATIOS"
STATUS=0
if (( FAILURES > 0 )); then
  echo "load.sh: $FAILURES check(s) FAILED (see above)" >&2
  STATUS=1
else
  echo "every run: h2load succeeded == server OK counter delta; hits computed nothing, each cold miss computed once"
fi
if (( MISSED > 0 )); then
  echo "load.sh: $MISSED target(s) MISSED" >&2
  STATUS=1
fi
exit $STATUS
