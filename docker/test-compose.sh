#!/usr/bin/env bash
# Brings docker/compose.yaml up for real, with the README's commands: the
# posenc image from the host-built binaries (docker/build-image.sh), then
# `docker-compose up -d --build` (3 replicas of it behind the HAProxy image,
# built by compose), and tests it through the proxy's published port on
# 127.0.0.1 with the C++ CLI:
#   (1) health (grpc.health.v1 through HAProxy);
#   (2) the worked example, and GetTable + GetRows for several table
#       families: each family's calls all land on one replica (the replicas'
#       own GetStats, read with the CLI inside each container);
#   (2b) metrics on: each replica's /metrics (scraped inside its container)
#       has posenc's own counters, counting the calls of (2);
#   (3) `docker-compose stop` of one replica (a graceful drain) and `kill` of
#       another: every family still answers through the proxy.
# Then `docker-compose down`. Starts a Docker engine if none answers (and
# stops it at the end), makes the base image with debootstrap if missing.
# Usage: docker/test-compose.sh [--binaries DIR] [--server FILE] [--cli FILE]
#   (root; exit 77 = skipped). DIR: a build tree (server/posenc_server,
#   client/posenc; default build/) or a directory holding both; FILE: one
#   binary by path. The replicas run POSENC_TEST_IMAGE (posenc:test), built
#   here, so a posenc:latest of the user's stays as it is.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d /tmp/posenc-test-compose.XXXXXX)"
log_name=test-compose
# shellcheck source=docker/lib.sh
source "$repo/docker/lib.sh"

# Its own project (containers, network) and a free host port, so it neither
# meets a compose run of someone else nor a server on 50051.
export COMPOSE_PROJECT_NAME="posenctest$$"
export POSENC_PORT
export POSENC_IMAGE="${POSENC_TEST_IMAGE:-posenc:test}"
declare -A container=()  # replica number -> container id
compose_file="$repo/docker/compose.yaml"
compose_up=""
compose_log_lines=30
compose_test_start "$@"

POSENC_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
target="127.0.0.1:$POSENC_PORT"

# ---- up ----------------------------------------------------------------------
log "docker-compose up -d --build (project $COMPOSE_PROJECT_NAME, replicas $POSENC_IMAGE, proxy on $target; log: $work/up.log)"
compose_up_within 1200 --build
compose ps
for r in 1 2 3; do
  container[$r]="$(compose ps -q "posenc-$r")"
  [[ -n "${container[$r]}" ]] || fail "no container for posenc-$r"
done

# (1) Health through the proxy (its tcp-check needs rise 2 x 500 ms first).
wait_for 60 "$cli" health --target "$target" --timeout 2 ||
  fail "proxy not SERVING on $target within 60s"
log "(1) health through the proxy: $("$cli" health --target "$target" --timeout 5)"

# (2) The worked example, then per-family affinity.
row="$("$cli" gather --target "$target" --timeout 10 --d 4 --max-len 8 --positions 2)"
log "(2) gather d=4 max_len=8 positions=2 -> $row"
[[ "$row" == 0.9092974,-0.41614684,0.019998666,0.9998* ]] || fail "worked example: got '$row'"

families=("--d 64" "--d 128 --dtype float16" "--d 256 --layout concat_sin_cos"
  "--d 32 --frequency t2t" "--d 512 --base 500" "--d 96 --dtype bfloat16")

# OK GetTable + GetRows calls of replica N, from its own GetStats (the CLI
# inside its container; plain `docker exec`, as docker-compose takes ~1 s to
# start).
table_calls() {
  docker exec "${container[$1]}" posenc stats --timeout 5 |
    awk '$1 == "method:" { cur = ($2 ~ /\/(GetTable|GetRows)"$/) }
         cur && $1 == "ok:" { n += $2 }
         END { print n + 0 }'
}
# Replica counts as "N:calls N:calls ...".
snapshot() {
  local r
  for r in "$@"; do
    printf '%s:%s ' "$r" "$(table_calls "$r")"
  done
}
# Calls FAMILY 2 x (GetTable + GetRows) at two max_len through the proxy.
call_family() {
  local ml
  # shellcheck disable=SC2086
  for ml in 64 256; do
    "$cli" table --target "$target" --timeout 10 $1 --max-len "$ml" \
      -o "$work/table.npy" >/dev/null || return 1
    "$cli" gather --target "$target" --timeout 10 $1 --max-len "$ml" \
      --positions 0,7,63 >/dev/null || return 1
  done
}
# The one replica (of REPLICAS...) that served all 4 calls of FAMILY.
owner_of() {
  local family="$1"
  shift
  local before after r b a owner="" grew=0
  before="$(snapshot "$@")"
  call_family "$family" || fail "calls of family '$family' failed"
  after="$(snapshot "$@")"
  for r in "$@"; do
    b="$(tr ' ' '\n' <<<"$before" | awk -F: -v r="$r" '$1 == r {print $2}')"
    a="$(tr ' ' '\n' <<<"$after" | awk -F: -v r="$r" '$1 == r {print $2}')"
    if ((a != b)); then
      grew=$((grew + 1))
      owner="$r"
      ((a - b == 4)) || fail "family '$family': replica $r served $((a - b)) of 4 calls"
    fi
  done
  ((grew == 1)) || fail "family '$family' reached $grew replicas ($before -> $after)"
  echo "$owner"
}

declare -A owner=()
for f in "${families[@]}"; do
  owner[$f]="$(owner_of "$f" 1 2 3)"
  # A second round reaches the same replica.
  [[ "$(owner_of "$f" 1 2 3)" == "${owner[$f]}" ]] || fail "family '$f' moved between rounds"
  log "    family '$f' -> posenc-${owner[$f]} (GetTable and GetRows, 2 rounds)"
done
used="$(printf '%s\n' "${owner[@]}" | sort -u | wc -l)"
log "    ${#families[@]} families on $used replicas"
((used >= 2)) || fail "all families on one replica: no hashing?"

# (2b) Metrics are on (the image's --metrics_listen=0.0.0.0:9090): scrape each
# replica's /metrics from inside its container (bash's /dev/tcp: the image has
# no curl) and find posenc's own counters, with the table calls of (2) in
# them.
scrape() {
  docker exec "${container[$1]}" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9090 &&
    printf "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 &&
    timeout 5 cat <&3'
}
served=0
for r in 1 2 3; do
  page="$(scrape "$r")" || fail "posenc-$r: no answer on 127.0.0.1:9090/metrics"
  grep -q '^HTTP/1\.[01] 200' <<<"$page" || fail "posenc-$r /metrics: $(head -n 1 <<<"$page")"
  for series in posenc_requests_total posenc_cache_hits_total posenc_build_info; do
    grep -q "^$series" <<<"$page" || fail "posenc-$r /metrics has no $series"
  done
  n="$(awk '/^posenc_requests_total\{/ && /method="(GetTable|GetRows)"/ && /code="OK"/ { n += $NF } END { print n + 0 }' <<<"$page")"
  log "    posenc-$r /metrics: posenc_requests_total (GetTable+GetRows, OK) = $n"
  served=$((served + n))
done
expected=$((${#families[@]} * 8))
((served >= expected)) ||
  fail "/metrics counts $served OK GetTable+GetRows calls, (2) made $expected"
log "(2b) /metrics scraped in all 3 replicas: posenc's counters hold the $served table calls"

# (3) Take replicas away: every family must still answer through the proxy.
all_families_answer() {
  local f
  for f in "${families[@]}"; do
    call_family "$f" || return 1
  done
}
victim="${owner[${families[0]}]}"
log "(3) docker-compose stop posenc-$victim (graceful drain)"
compose stop "posenc-$victim" >/dev/null 2>&1
all_families_answer || fail "calls failed after stopping posenc-$victim"
"$cli" health --target "$target" --timeout 5 >/dev/null || fail "proxy not SERVING"
survivors=()
for r in 1 2 3; do [[ $r == "$victim" ]] || survivors+=("$r"); done
log "    every family answers on posenc-${survivors[0]} and posenc-${survivors[1]}"
# Families that did not live on the stopped replica stay where they were.
for f in "${families[@]}"; do
  [[ "${owner[$f]}" == "$victim" ]] && continue
  [[ "$(owner_of "$f" "${survivors[@]}")" == "${owner[$f]}" ]] ||
    fail "family '$f' moved although its replica posenc-${owner[$f]} is up"
done
log "    families of the other replicas did not move"

log "    docker-compose kill posenc-${survivors[0]} (no drain)"
compose kill "posenc-${survivors[0]}" >/dev/null 2>&1
all_families_answer || fail "calls failed with only posenc-${survivors[1]} left"
log "    every family answers on posenc-${survivors[1]} alone"

log "PASS: compose (3 replicas + HAProxy) serves through $target with per-family affinity and survives losing 2 replicas"
