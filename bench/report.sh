#!/usr/bin/env bash
# bench/report.sh: runs every benchmark that has a target and writes
# BENCHMARKS.md whole: the machine, the commit, the load before and after
# each tool, a verdict table generated from the tools' own verdict lines
# (bench/report_verdicts.py), the list of measured decisions
# (bench/decisions.md, the one hand-kept part) and each tool's output.
#
#   1. build/bench/encoding_bench   every dtype, layout and frequency (values/s)
#   2. bench/cold_path              cold vs hot GetTable (fresh memory, and
#                                   steady state against a second server
#                                   whose 48 MiB cache fills) and StreamBatches
#   2b. bench/cold_rows_cpu         server CPU per cold one-row GetRows, per
#                                   call (median, p99, max), every dtype and
#                                   scheme, d 8..4096, max_len up to 2^24
#   2c. bench/scheme_cold_ratio     each RoPE scheme's table cold through
#                                   GetTable (d=128, 32768 rows), as a ratio
#                                   to the plain table's values/s (>= 0.5)
#   2d. bench/encode_bench          Encode of 1024 timesteps at dim 320: core
#                                   and server CPU per call (<= 1 ms), cold
#                                   values/s vs the float32 table (>= 0.5x)
#   2e. bench/multi_axis_cold       multi-axis RoPE Encode cold (FLUX image
#                                   ids, a Qwen2-VL batch) vs the cold plain
#                                   table of the same dtype, every dtype
#                                   (>= 0.5x)
#   2f. bench/shm_read_python.py    a cached 16 MiB table read whole by a
#                                   Python client through shared memory
#                                   (repeated read, and first read of the
#                                   file), vs gRPC bytes (>= 10x), numpy
#                                   computing it (>= 5x) and a numpy copy
#                                   (>= 0.5x); then on a tmpfs of 2 MiB
#                                   pages (--huge-tmpfs)
#   2g. bench/shm_read_cpp          the same table read whole by the C++
#                                   client: a client's first read and its
#                                   reuse of the kept mapping, vs memcpy
#                                   (>= 0.5x) and gRPC bytes (>= 10x)
#   3. bench/noisy_neighbor.sh      cost per call, hot client under a flood, RSS
#   4. bench/load.sh                posenc vs the gRPC floor
#   5. bench/callgrind_hit.sh       instructions per cache hit vs the floor
#   6. bench/attacks/fronts.py      every HTTP/2 attack, 10 s each, against a
#                                   server with default flags, directly and
#                                   through HAProxy and nginx: the victim's
#                                   ratio (>= 0.5), peak RSS (<= cache +
#                                   in-flight + 64 MiB), alive afterwards
#
# Usage: bench/report.sh [--no-write] [--only REGEX]
#        (~35 minutes; needs a Release build:
#        cmake --preset release && cmake --build --preset release)
# --only REGEX runs only the sections whose title matches the (bash) regex
# and writes them as a "## Partial run" block at the top of BENCHMARKS.md,
# in place of any earlier partial block; the whole run below it stays.
# The working tree should be clean: the report names HEAD, and a figure is a
# result only at the commit it names. Exit status: non-zero if a tool failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
WRITE=1
ONLY=""
while (($#)); do
  case $1 in
    --no-write) WRITE=0 ;;
    --only) ONLY=$2; shift ;;
    *) echo "report.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
OUT=$(mktemp /tmp/posenc-report.XXXXXX)
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)
DIRTY=""
[[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no) ]] && DIRTY=" (with uncommitted changes: not a result)"
FAILED=0
load() { cut -d' ' -f1-3 /proc/loadavg; }

# section TITLE COMMAND...: runs one tool, appends its output to the report.
section() {
  local title=$1
  shift
  [[ -z $ONLY || $title =~ $ONLY ]] || return 0
  local before; before=$(load)
  echo "== $title" >&2
  local log; log=$(mktemp)
  "$@" > "$log" 2>&1
  local rc=$?
  cat "$log" >&2
  {
    echo
    echo "### $title"
    echo
    echo "Command: \`${*#"$ROOT/"}\` — load average before $before, after $(load); exit $rc."
    echo
    echo '```'
    cat "$log"
    echo '```'
  } >> "$SECTIONS"
  rm -f "$log"
  [[ $rc == 0 ]] || FAILED=$((FAILED + 1))
}

{
  if [[ -n $ONLY ]]; then
    echo "## Partial run: the sections matching \`$ONLY\`"
    echo
    echo "\`bench/report.sh --only '$ONLY'\`: only these sections, at a later commit than the whole run below; they supersede its figures for the same tools."
  else
    echo "## Run"
  fi
  echo
  echo "Commit \`$COMMIT\`$DIRTY, $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r); gRPC $(sed -n 's/^version=//p' "$ROOT/scripts/build-grpc.sh") from Debian's source with the $(grep -vc '^#' "$ROOT/third_party/grpc/patches/series") patches of third_party/grpc/patches/series (scripts/build-grpc.sh), Protobuf $(dpkg-query -W -f='${Version}' libprotobuf-dev 2>/dev/null), Abseil $(dpkg-query -W -f='${Version}' libabsl-dev 2>/dev/null); Release build (\`cmake --preset release && cmake --build --preset release\`). Load average at start $(load); each section gives it before and after its tool."
  echo
  echo "Verdicts (one rule, bench/noise.py and bench/median_ci.h): \"met\" only when the whole 95% confidence interval of the median meets the target, \"within noise\" when the target lies inside it, \"MISSED\" otherwise (the tool then exits non-zero); encoding_bench's ratios of two medians take the two intervals in quadrature. An attack is one 10 s run: held (\"met\") or not (\"MISSED\")."
} > "$OUT"
SECTIONS=$(mktemp /tmp/posenc-report-sections.XXXXXX)

section "Encoding kernel, every dtype (encoding_bench)" \
  "$BUILD/bench/encoding_bench" --benchmark_min_time=0.3 \
  --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true \
  --benchmark_color=false
PORT=${PORT:-50181}
STEADY_PORT=${STEADY_PORT:-50182}
SCHEME_PORT=${SCHEME_PORT:-50183}
SERVER_LOG=$(mktemp /tmp/posenc-report-server.XXXXXX)
# serve PORT FLAGS...: starts a posenc_server on 127.0.0.1:PORT (its PID in
# $SERVED) and waits until it listens (at most 10 s), or prints its log, so
# a failed start says why.
serve() {
  local port=$1
  shift
  "$BUILD/server/posenc_server" --listen=127.0.0.1:$port "$@" >> "$SERVER_LOG" 2>&1 &
  SERVED=$!
  for _ in $(seq 200); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0
    sleep 0.05
  done
  echo "report.sh: no server on port $port:" >&2
  cat "$SERVER_LOG" >&2
}
serve $PORT
SPID=$SERVED
# Steady state: a cache of three 16 MiB tables, full after the first calls.
serve $STEADY_PORT --cache_bytes=50331648
STEADY_SPID=$SERVED
section "Cold path end to end (cold_path)" \
  "$BUILD/bench/cold_path" --target=127.0.0.1:$PORT \
  --steady_target=127.0.0.1:$STEADY_PORT --rounds=25
kill $SPID $STEADY_SPID
wait $SPID $STEADY_SPID 2>/dev/null
# The largest RoPE table it asks for, 32768 x 256 float64, is 64 MiB.
serve $SCHEME_PORT --max_message_bytes=134217728
section "RoPE schemes cold through GetTable, ratio to the plain table (scheme_cold_ratio; >= 0.5)" \
  "$BUILD/bench/scheme_cold_ratio" --target=127.0.0.1:$SCHEME_PORT --rounds=15
kill $SERVED
wait $SERVED 2>/dev/null
rm -f "$SERVER_LOG"
section "Server CPU per cold one-row GetRows, every dtype and scheme (cold_rows_cpu)" \
  "$BUILD/bench/cold_rows_cpu" --server="$BUILD/server/posenc_server" --calls=100
section "Encode: CPU per call and cold values/s vs the float32 table (encode_bench)" \
  "$BUILD/bench/encode_bench" --server="$BUILD/server/posenc_server" \
  --floor_server="$BUILD/bench/floor_server"
section "Multi-axis RoPE Encode cold vs the plain cold table, every dtype (multi_axis_cold; >= 0.5)" \
  "$BUILD/bench/multi_axis_cold"
section "Shared-memory table read by a Python client (shm_read_python.py; >= 10x gRPC bytes, >= 5x numpy computing it, >= 0.5x a numpy copy)" \
  /usr/bin/python3 "$ROOT/bench/shm_read_python.py" --build "$BUILD" --rounds 15
section "The same on a tmpfs with 2 MiB pages (shm_read_python.py --huge-tmpfs: huge=within_size, root)" \
  /usr/bin/python3 "$ROOT/bench/shm_read_python.py" --build "$BUILD" --rounds 15 --huge-tmpfs
section "Shared-memory table read by the C++ client (shm_read_cpp; >= 0.5x memcpy, >= 10x gRPC bytes)" \
  "$BUILD/bench/shm_read_cpp" --server="$BUILD/server/posenc_server" --rounds=15
section "Cost per call and noisy neighbours (noisy_neighbor.sh)" \
  "$ROOT/bench/noisy_neighbor.sh" 8
section "posenc vs the gRPC floor (load.sh)" "$ROOT/bench/load.sh" 9
section "Instructions per cache hit vs the floor (callgrind_hit.sh; repeatable under load)" \
  "$ROOT/bench/callgrind_hit.sh" 20
# Every attack on the port users expose (posenc itself), then through each
# shipped front reduced to one replica (defence in depth: docs/security.md
# says which front cannot hold what).
section "HTTP/2 attacks on posenc's own port (fronts.py --target direct; victim ratio >= 0.5, RSS bound, alive)" \
  /usr/bin/python3 "$ROOT/bench/attacks/fronts.py" --target direct \
  --build "$BUILD" --seconds 10 --check --json "$BUILD/attacks-direct.json"
section "HTTP/2 attacks through HAProxy and nginx (fronts.py; defence in depth)" \
  /usr/bin/python3 "$ROOT/bench/attacks/fronts.py" --target haproxy \
  --target nginx --build "$BUILD" --seconds 10 --check \
  --json "$BUILD/attacks-fronts.json"
{
  echo
  echo "## Verdicts"
  echo
  echo "Generated from the tools' own verdict lines below (bench/report_verdicts.py)."
  echo
  /usr/bin/python3 "$ROOT/bench/report_verdicts.py" "$SECTIONS"
  echo
  if [[ -z $ONLY ]]; then
    cat "$ROOT/bench/decisions.md"
    echo
    echo "## Each tool's output"
  fi
  cat "$SECTIONS"
} >> "$OUT"
rm -f "$SECTIONS"

if [[ -n $ONLY ]]; then
  # The partial block goes above the whole run ("## Run"), replacing any
  # earlier partial block; the rest of BENCHMARKS.md stays as it was.
  if [[ $WRITE == 1 ]]; then
    /usr/bin/python3 - "$ROOT/BENCHMARKS.md" "$OUT" <<'PY'
import sys
path, block = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
head, run = text.split("\n## Run\n", 1)
partial = head.find("\n## Partial")
if partial >= 0:
    head = head[:partial + 1]
open(path, "w").write(head.rstrip("\n") + "\n\n" + block.rstrip("\n") +
                      "\n\n## Run\n" + run)
PY
    echo "report.sh: partial block written to BENCHMARKS.md (commit $COMMIT)" >&2
  else
    cat "$OUT"
  fi
  rm -f "$OUT"
  exit $((FAILED > 0))
fi

# BENCHMARKS.md is this report, whole: the title block says how it was made,
# and earlier runs stay in git history (git log -p BENCHMARKS.md).
{
  echo "# posenc benchmarks"
  echo
  echo "<!-- Written whole by bench/report.sh: do not edit by hand. Edit the tools, or bench/decisions.md for the list of measured decisions. -->"
  echo
  echo "The latest run of every benchmark that has a target, all at one commit"
  echo "on one machine: \`bench/report.sh\` (a Release build in \`build/\`; about"
  echo "35 minutes; give it the machine to itself). What each tool measures and how"
  echo "to read it: [docs/load-testing.md](docs/load-testing.md). Earlier runs,"
  echo "on other machines and commits, are in git history"
  echo "(\`git log -p BENCHMARKS.md\`)."
  echo
  cat "$OUT"
} > "$OUT.md"
mv "$OUT.md" "$OUT"
if [[ $WRITE == 1 ]]; then
  cp "$OUT" "$ROOT/BENCHMARKS.md"
  echo "report.sh: BENCHMARKS.md rewritten (commit $COMMIT)" >&2
else
  cat "$OUT"
fi
rm -f "$OUT"
[[ $FAILED == 0 ]]
