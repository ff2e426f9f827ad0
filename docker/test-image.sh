#!/usr/bin/env bash
# Builds the posenc image and tests it for real: its size and non-root user,
# health through the published port (with the same CLI, run on the host),
# the worked example (d=4, pos=2), the HEALTHCHECK, a non-root PID-1 server,
# and a graceful `docker stop` (exit 0 and the drain log lines). The image
# comes from the host-built binaries with docker/build-image.sh (the fast
# path), or with --from-source from `docker build -f docker/Dockerfile .` at
# the repo root (gRPC and posenc compiled in Docker; the host's binaries then
# give only the CLI of the checks), both as a user builds it.
# Starts a Docker engine if none answers (and stops it at the end) and builds
# the debian:bookworm-slim base with debootstrap if it is missing (no registry
# needed).
# Usage: docker/test-image.sh [--from-source] [--binaries DIR] [--server FILE]
#                             [--cli FILE]
#   (root; exit 77 = skipped). DIR: a build tree (server/posenc_server,
#   client/posenc; default build/) or a directory holding both; FILE: one
#   binary by path. POSENC_TEST_IMAGE (posenc:test, posenc:test-source with
#   --from-source): the tag it builds; POSENC_MAX_IMAGE_MB (120): the size
#   limit. With --from-source, the engine's build cache is used (the first
#   build on an engine compiles everything) unless POSENC_DOCKER_NO_CACHE=1.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
from_source=""
if [[ "${1:-}" == --from-source ]]; then
  from_source=1
  shift
fi
image="${POSENC_TEST_IMAGE:-posenc:test${from_source:+-source}}"
max_image_mb="${POSENC_MAX_IMAGE_MB:-120}"
container="posenc-test-$$"
work="$(mktemp -d /tmp/posenc-test-image.XXXXXX)"
log_name=test-image
# shellcheck source=docker/lib.sh
source "$repo/docker/lib.sh"

cleanup() {
  local status=$?
  docker rm -f "$container" >/dev/null 2>&1 || true
  stop_engine
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

require_docker docker  # (no extra tools)
binaries_from_args "$@"

ensure_engine
ensure_base_image

# ---- image -----------------------------------------------------------------
if [[ -n "$from_source" ]]; then
  build_source_image "$image"
else
  build_image "$image"
fi
size_bytes="$(docker image inspect -f '{{.Size}}' "$image")"
size_mb=$((size_bytes / 1000000))
log "image $image: $size_mb MB ($size_bytes bytes)"
((size_mb <= max_image_mb)) || fail "image is $size_mb MB, over $max_image_mb MB"
user="$(docker image inspect -f '{{.Config.User}}' "$image")"
[[ -n "$user" && "${user%%:*}" != "0" && "${user%%:*}" != "root" ]] ||
  fail "image runs as root (User='$user')"

# ---- run ---------------------------------------------------------------------
docker run -d --name "$container" -p 127.0.0.1::50051 "$image" \
  --cache_bytes=67108864 >/dev/null
port="$(docker port "$container" 50051/tcp | head -n 1)"
port="${port##*:}"
[[ "$port" =~ ^[0-9]+$ ]] || fail "no published port for 50051 ($port)"
target="127.0.0.1:$port"
log "container $container publishes 50051 on $target"

# (1) Health through the published port, with the C++ CLI.
if ! wait_for 60 "$cli" health --target "$target" --timeout 2; then
  docker logs "$container" >&2 || true
  fail "not SERVING on $target within 60s"
fi
log "(1) $("$cli" health --target "$target" --timeout 5) on $target"

pid1="$(docker exec "$container" cat /proc/1/comm)"
[[ "$pid1" == "posenc_server" ]] || fail "PID 1 is '$pid1', not posenc_server"
uid="$(docker exec "$container" id -u)"
[[ "$uid" != "0" ]] || fail "server runs as root"
log "    PID 1 is $pid1, uid $uid"

# (2) The worked example: d=4, pos=2 -> 0.9093 -0.4161 0.0200 0.9998.
row="$("$cli" gather --target "$target" --timeout 10 --d 4 --max-len 8 \
  --positions 2)"
log "(2) gather d=4 max_len=8 positions=2 -> $row"
awk -F, -v want="0.9093,-0.4161,0.0200,0.9998" '
  BEGIN { n = split(want, w, ",") }
  NR == 1 {
    if (NF != n) exit 1
    for (i = 1; i <= n; i++) {
      diff = $i - w[i]
      if (diff < -0.00005 || diff > 0.00005) exit 1
    }
    ok = 1
  }
  END { exit ok ? 0 : 1 }' <<<"$row" || fail "worked example: got '$row'"

# The image's own HEALTHCHECK (the in-image CLI) reports healthy.
health_status() {
  [[ "$(docker inspect -f '{{.State.Health.Status}}' "$container")" == healthy ]]
}
wait_for 60 health_status ||
  fail "HEALTHCHECK not healthy within 60s: $(docker inspect -f '{{json .State.Health}}' "$container")"
log "    HEALTHCHECK: healthy"

# (3) docker stop sends SIGTERM to PID 1: health NOT_SERVING, drain, exit 0.
log "(3) docker stop -t 30"
timeout 60 docker stop -t 30 "$container" >/dev/null || fail "docker stop failed"
exit_code="$(docker inspect -f '{{.State.ExitCode}}' "$container")"
docker logs "$container" >"$work/server.log" 2>&1
sed 's/^/    | /' "$work/server.log"
[[ "$exit_code" == 0 ]] || fail "server exited $exit_code, not 0"
grep -q 'received SIGTERM: draining' "$work/server.log" || fail "no drain line in the logs"
grep -q 'posenc_server stopped after' "$work/server.log" || fail "no stop line in the logs"

log "PASS: image $image ($size_mb MB) serves, answers the worked example and stops cleanly"
