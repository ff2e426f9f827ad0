# shellcheck shell=bash disable=SC2154
# Shared by docker/test-image.sh, docker/test-compose.sh and
# docker/test-compose-shm.sh (sourced, not run): logging, skip/fail, polling,
# the host-built binaries, a Docker engine, the base image and the posenc
# image (docker/build-image.sh, or from source with docker/Dockerfile).
# The caller sets `repo`, `log_name` and `work` (a scratch directory) first,
# and calls stop_engine from its EXIT trap (the compose tests: compose_cleanup).

readonly SKIP=77
started_dockerd=""
start_time=$SECONDS

log() { printf '[%s %4ds] %s\n' "$log_name" "$((SECONDS - start_time))" "$*"; }
fail() {
  log "FAIL: $*" >&2
  exit 1
}
skip() {
  log "SKIP: $*" >&2
  exit "$SKIP"
}

# Polls COMMAND... every second until it succeeds or SECONDS_LIMIT pass.
wait_for() {
  local limit="$1"
  shift
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# Skips (77) when Docker cannot be used here: not root (dockerd and
# debootstrap need it) or no docker/dockerd (and TOOLS..., e.g.
# docker-compose). Anything that goes wrong after this is a failure.
require_docker() {
  [[ $(id -u) -eq 0 ]] || skip "needs root (to run dockerd and debootstrap)"
  local tool
  for tool in docker dockerd "$@"; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/bootstrap.sh)"
  done
}

# Starts dockerd if no engine answers; stop_engine stops only that one.
ensure_engine() {
  if ! timeout 10 docker info >/dev/null 2>&1; then
    log "no Docker engine answers: starting dockerd"
    dockerd --storage-driver overlay2 >"$work/dockerd.log" 2>&1 &
    started_dockerd=$!
    if ! wait_for 60 timeout 5 docker info; then
      tail -n 20 "$work/dockerd.log" >&2
      fail "dockerd did not answer within 60s"
    fi
  fi
  log "engine: Docker $(docker version -f '{{.Server.Version}}')"
}

stop_engine() {
  if [[ -n "$started_dockerd" ]]; then
    log "stopping the dockerd this script started (pid $started_dockerd)"
    kill -TERM "$started_dockerd" 2>/dev/null || true
    for _ in $(seq 1 60); do
      kill -0 "$started_dockerd" 2>/dev/null || break
      sleep 0.5
    done
  fi
}

# The EXIT trap of the compose tests. Once `compose_up` is set (the test
# ran `up`): on failure the services' last `compose_log_lines` log lines,
# then `compose_before_down` (a function name, if set), then
# `docker-compose -f $compose_file down -v`. Always: the engine stopped if
# this script started it, and $work removed; exits with the test's status.
compose_cleanup() {
  local status=$?
  if [[ -n "${compose_up:-}" ]]; then
    if ((status != 0)); then
      docker-compose -f "$compose_file" logs --no-color \
        --tail "${compose_log_lines:-40}" >&2 2>&1 || true
    fi
    if [[ -n "${compose_before_down:-}" ]]; then
      "$compose_before_down" || true
    fi
    log "docker-compose down -v"
    timeout 120 docker-compose -f "$compose_file" down -v \
      --remove-orphans >/dev/null 2>&1 || true
  fi
  stop_engine
  rm -rf "$work"
  exit "$status"
}

# docker-compose on the test's $compose_file.
compose() { docker-compose -f "$compose_file" "$@"; }

# The compose tests' start: compose_cleanup as the EXIT trap, then Docker
# and docker-compose, the binaries (ARGS as binaries_from_args), the
# engine, the base image and $POSENC_IMAGE built from the binaries.
compose_test_start() {
  trap compose_cleanup EXIT
  require_docker docker-compose
  binaries_from_args "$@"
  ensure_engine
  ensure_base_image
  build_image "$POSENC_IMAGE"
}

# `up -d ARGS...` of $compose_file within SECONDS, its output in
# $work/up.log (the last 40 lines on failure); sets compose_up first, so
# that compose_cleanup takes down whatever came up.
compose_up_within() {
  local seconds="$1"
  shift
  compose_up=1
  if ! timeout "$seconds" docker-compose -f "$compose_file" up -d "$@" \
    >"$work/up.log" 2>&1; then
    tail -n 40 "$work/up.log" >&2
    fail "docker-compose up failed"
  fi
}

# debian:bookworm-slim, made with debootstrap when no registry has it.
ensure_base_image() {
  local base="debian:bookworm-slim"
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    command -v debootstrap >/dev/null ||
      skip "$base is missing and debootstrap is not installed"
    log "building $base with debootstrap"
    timeout 600 "$repo/docker/make-base-image.sh" "$base" ||
      fail "could not build $base"
  fi
}

# Prints the first of FILE... that exists (nothing if none does).
first_file() {
  local path
  for path in "$@"; do
    if [[ -f "$path" ]]; then
      echo "$path"
      return 0
    fi
  done
}

# Sets `server` and `cli` (the host-built posenc_server and posenc CLI) from
# the caller's arguments, [--binaries DIR] [--server FILE] [--cli FILE], read
# as docker/build-image.sh reads them: DIR is a build tree (server/ and
# client/ inside; default build/) or a directory holding both binaries.
binaries_from_args() {
  local dir="$repo/build"
  server=""
  cli=""
  while (($# > 0)); do
    case "$1" in
      --binaries) dir="${2:?--binaries needs a directory}"; shift 2 ;;
      --server) server="${2:?--server needs a file}"; shift 2 ;;
      --cli) cli="${2:?--cli needs a file}"; shift 2 ;;
      *) fail "unknown argument '$1' (usage: [--binaries DIR] [--server FILE] [--cli FILE])" ;;
    esac
  done
  [[ -n "$server" ]] || server="$(first_file "$dir/server/posenc_server" "$dir/posenc_server")"
  [[ -n "$cli" ]] || cli="$(first_file "$dir/client/posenc" "$dir/posenc")"
  [[ -n "$server" && -x "$server" ]] ||
    fail "no posenc_server in $dir (build it: ninja posenc_server; or --server FILE)"
  [[ -n "$cli" && -x "$cli" ]] ||
    fail "no posenc CLI in $dir (build it: ninja posenc; or --cli FILE)"
  server="$(readlink -f "$server")"
  cli="$(readlink -f "$cli")"
}

# Builds the posenc image TAG from `server` and `cli` with
# docker/build-image.sh (log in $work/build-image.log), as a user would.
build_image() {
  local tag="$1"
  log "docker/build-image.sh --server $server --cli $cli -t $tag (log: $work/build-image.log)"
  if ! timeout 1200 "$repo/docker/build-image.sh" --server "$server" \
    --cli "$cli" -t "$tag" >"$work/build-image.log" 2>&1; then
    tail -n 40 "$work/build-image.log" >&2
    fail "docker/build-image.sh failed"
  fi
  grep -m1 '^runtime packages:' "$work/build-image.log" | sed 's/^/    /' || true
}

# Builds the posenc image TAG from source as a user would, `docker build -f
# docker/Dockerfile .` at the repo root (log in $work/build-image.log), with
# --no-cache when POSENC_DOCKER_NO_CACHE=1; logs its time and how many steps
# came from the build cache.
build_source_image() {
  local tag="$1" start=$SECONDS no_cache=()
  [[ "${POSENC_DOCKER_NO_CACHE:-0}" == 1 ]] && no_cache=(--no-cache)
  log "docker build ${no_cache[*]} -f docker/Dockerfile -t $tag $repo (log: $work/build-image.log)"
  if ! timeout 7200 docker build "${no_cache[@]}" -f "$repo/docker/Dockerfile" \
    -t "$tag" "$repo" >"$work/build-image.log" 2>&1; then
    tail -n 40 "$work/build-image.log" >&2
    fail "docker build -f docker/Dockerfile failed"
  fi
  log "    built from source in $((SECONDS - start)) s ($(grep -c 'Using cache' "$work/build-image.log") of $(grep -c '^Step ' "$work/build-image.log") steps cached)"
}
