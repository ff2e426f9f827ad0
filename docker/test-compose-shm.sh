#!/usr/bin/env bash
# Brings docker/compose.shm.yaml up for real (posenc with --shm_dir on a
# shared tmpfs volume, and a caller container of another user with the
# volume read-only) and checks that the caller read its tables through the
# mapping, not the bytes fallback, and that they hold the right values:
#   (1) the caller (docker/shm-caller.sh) exits 0: each `posenc table
#       --shared-memory` printed `shared memory: mapped /shm/...`, a golden
#       table's sha256 is tests/golden/interop.txt's, a 16 MiB table equals
#       the bytes path's;
#   (2) the server's GetStats counts the files (shm_files >= 2) and no
#       fallback; its subdirectory is 0755 and its tables 0444, owned by the
#       server's uid;
#   (3) another user with the volume mounted read-write still cannot
#       create, change, rename or remove a file in the server's subdirectory;
#   (4) a caller without the volume gets `shared memory: not available
#       (...), received the bytes`, with the golden bytes;
#   (5) `docker-compose stop posenc`: the server removes its subdirectory.
# Then `docker-compose down -v`. Starts a Docker engine if none answers (and
# stops it at the end), makes the base image with debootstrap if missing.
# Usage: docker/test-compose-shm.sh [--binaries DIR] [--server FILE]
#   [--cli FILE]   (root; exit 77 = skipped), as docker/test-compose.sh.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d /tmp/posenc-test-compose-shm.XXXXXX)"
log_name=test-compose-shm
# shellcheck source=docker/lib.sh
source "$repo/docker/lib.sh"

export COMPOSE_PROJECT_NAME="posencshm$$"
export POSENC_IMAGE="${POSENC_TEST_IMAGE:-posenc:test}"
POSENC_GOLDEN_SHA256="$(awk '$1 == "GetTable" && $2 == "d512_f64_concat" {
  sub("sha256=", "", $5); print $5 }' "$repo/tests/golden/interop.txt")"
export POSENC_GOLDEN_SHA256
[[ "$POSENC_GOLDEN_SHA256" =~ ^[0-9a-f]{64}$ ]] ||
  fail "no GetTable d512_f64_concat sha256 in tests/golden/interop.txt"
volume="${COMPOSE_PROJECT_NAME}_shm"
compose_file="$repo/docker/compose.shm.yaml"
compose_up=""
remove_holder() { docker rm -f "${COMPOSE_PROJECT_NAME}_holder" >/dev/null 2>&1; }
compose_before_down=remove_holder
compose_test_start "$@"

# ---- up ----------------------------------------------------------------------
log "docker-compose -f docker/compose.shm.yaml up -d (project $COMPOSE_PROJECT_NAME, image $POSENC_IMAGE)"
compose_up_within 300
server="$(compose ps -q posenc)"
caller="$(compose ps -q caller)"
[[ -n "$server" && -n "$caller" ]] || fail "no posenc or caller container"

# (1) The caller's own checks, and its stderr lines from the CLI.
exit_code="$(timeout 180 docker wait "$caller")" || fail "caller still running after 180 s"
docker logs "$caller" >"$work/caller.log" 2>&1
sed 's/^/    | /' "$work/caller.log"
[[ "$exit_code" == 0 ]] || fail "caller exited $exit_code"
grep -q '^caller: PASS$' "$work/caller.log" || fail "caller did not print PASS"
for name in golden big; do
  grep -Eq "^caller: \[$name\] shared memory: mapped /shm/posenc-[0-9a-f]{16}/table-[0-9a-f]{16}-[0-9a-f]{16} " \
    "$work/caller.log" || fail "the caller's $name table was not mapped from the server's subdirectory"
done
if grep -q 'received the bytes' "$work/caller.log"; then
  fail "a --shared-memory call of the caller fell back to the bytes"
fi
log "(1) caller: both tables mapped from /shm, golden sha256 and the bytes path's equal"

# (2) The server's counters and the files' owner and modes.
docker exec "$server" posenc stats --timeout 5 >"$work/stats.txt"
shm_files="$(awk '$1 == "shm_files:" { print $2 }' "$work/stats.txt")"
fallbacks="$(awk '$1 == "shm_fallbacks:" { print $2 }' "$work/stats.txt")"
((${shm_files:-0} >= 2)) || fail "GetStats shm_files is '${shm_files:-0}', want >= 2"
((${fallbacks:-0} == 0)) || fail "GetStats shm_fallbacks is $fallbacks"
docker exec "$server" sh -c 'stat -c "%a %u %F %n" /shm/posenc-* /shm/posenc-*/table-*' \
  >"$work/modes.txt"
sed 's/^/    | /' "$work/modes.txt"
awk '$3 == "directory" && !($1 == 755 && $2 == 10001) { bad = 1 }
     $3 == "regular" && !($1 == 444 && $2 == 10001) { bad = 1 }
     $3 == "regular" { files++ }
     END { exit (bad || files < 2) }' "$work/modes.txt" ||
  fail "the server's subdirectory is not 0755 or its tables not 0444, uid 10001"
log "(2) GetStats: shm_files $shm_files, no fallback; subdirectory 0755, tables 0444, uid 10001"

# (3) Another user, the volume read-write: the file modes alone protect the
# tables (an emptyDir or a tmpfs volume is writable by everyone).
docker run --rm -u 10002:10002 --read-only -v "$volume:/shm" \
  --entrypoint /bin/sh "$POSENC_IMAGE" -c '
    dir=$(ls -d /shm/posenc-*); file=$(ls "$dir"/table-* | head -n 1)
    [ -f "$file" ] || { echo "no table file"; exit 1; }
    for attempt in "touch $dir/planted" ": >>$file" "rm -f $file" \
        "mv $file $dir/moved" "chmod 644 $file" "ln -s /etc/passwd $dir/link"; do
      if sh -c "$attempt" 2>/dev/null; then echo "uid 10002 could: $attempt"; exit 1; fi
      echo "refused: $attempt"
    done' >"$work/others.txt" 2>&1 || {
  cat "$work/others.txt" >&2
  fail "another user changed the server's subdirectory"
}
sed 's/^/    | /' "$work/others.txt"
log "(3) uid 10002 with the volume read-write: every change refused"

# (4) No volume: the bytes, and the same bits.
docker run --rm -u 10002:10002 --read-only --tmpfs /tmp \
  --network "container:$server" --entrypoint /bin/sh "$POSENC_IMAGE" -c '
    posenc table --shared-memory --d 512 --max-len 40 --base 500.5 \
      --dtype float64 --layout concat_sin_cos -o /tmp/t.bin &&
    sha256sum /tmp/t.bin' >"$work/fallback.txt" 2>&1 || {
  cat "$work/fallback.txt" >&2
  fail "the call without the volume failed"
}
sed 's/^/    | /' "$work/fallback.txt"
grep -q '^shared memory: not available (.*), received the bytes$' "$work/fallback.txt" ||
  fail "the caller without the volume did not report the bytes fallback"
grep -q "^$POSENC_GOLDEN_SHA256 " "$work/fallback.txt" ||
  fail "the bytes without the volume are not the golden table"
log "(4) without the volume: the bytes fallback, golden sha256"

# (5) A stopped server leaves nothing in the tmpfs. A Compose tmpfs volume
# lives while a container mounts it, so a holder keeps it mounted (and
# first sees the server's subdirectory: the same tmpfs).
docker run -d --name "${COMPOSE_PROJECT_NAME}_holder" --read-only \
  -v "$volume:/shm:ro" --entrypoint /bin/sh "$POSENC_IMAGE" -c 'sleep 600' \
  >/dev/null
holder_ls() { docker exec "${COMPOSE_PROJECT_NAME}_holder" ls -A /shm; }
before="$(holder_ls)"
[[ "$before" =~ ^posenc-[0-9a-f]{16}$ ]] || fail "the holder sees '$before' in /shm, not the server's subdirectory"
compose stop posenc >/dev/null 2>&1
left="$(holder_ls)"
docker rm -f "${COMPOSE_PROJECT_NAME}_holder" >/dev/null
[[ -z "$left" ]] || fail "after stop, /shm holds: $left"
log "(5) docker-compose stop posenc: $before removed, /shm is empty"

log "PASS: compose.shm.yaml: the caller (uid 10002, read-only volume) mapped its tables from the server's tmpfs with the right bits"
