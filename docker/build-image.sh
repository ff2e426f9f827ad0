#!/usr/bin/env bash
# The fast path to the posenc image: builds docker/Dockerfile's runtime stage
# from posenc_server and the posenc CLI as built on this host (Debian 12) by
# the project's own build, instead of building them in Docker (`docker build
# -f docker/Dockerfile .` at the repo root compiles gRPC and posenc from
# source: docs/deploy.md). Stages a small build context in a temporary
# directory (the two binaries, stripped; runtime-packages.txt, the Debian
# packages owning every library they load, from docker/runtime-packages.sh,
# i.e. ldd on this host; and a Dockerfile: docker/Dockerfile's runtime stage
# verbatim, its builder stage replaced by one holding those three files),
# runs `docker build` on it (classic builder is enough) and removes it.
# Prints the runtime packages and the image's size.
# Usage: docker/build-image.sh [--binaries DIR] [--server FILE] [--cli FILE]
#                              [-t TAG]
#   DIR   a build tree holding server/posenc_server and client/posenc:
#         build (preset release, scripts/test.sh; the default) or
#         build-server (preset server, scripts/serve.sh); or a directory
#         holding posenc_server and posenc themselves
#   FILE  one binary by path (overrides what DIR gives)
#   TAG   default posenc:latest
# Needs a Docker engine and debian:bookworm-slim (pulled, or made without a
# registry by docker/make-base-image.sh). Build the binaries first, e.g.
# `cmake --preset release && cmake --build --preset release`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binaries="$repo/build"
server=""
cli=""
tag="posenc:latest"

usage() {
  sed -n '/^# Usage:/,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "build-image: $*" >&2
  exit 1
}

while (($# > 0)); do
  case "$1" in
    --binaries) binaries="${2:?--binaries needs a directory}"; shift 2 ;;
    --binaries=*) binaries="${1#*=}"; shift ;;
    --server) server="${2:?--server needs a file}"; shift 2 ;;
    --server=*) server="${1#*=}"; shift ;;
    --cli) cli="${2:?--cli needs a file}"; shift 2 ;;
    --cli=*) cli="${1#*=}"; shift ;;
    -t | --tag) tag="${2:?-t needs a tag}"; shift 2 ;;
    --tag=*) tag="${1#*=}"; shift ;;
    -h | --help) usage ;;
    *) echo "build-image: unknown argument '$1'" >&2; usage ;;
  esac
done

# DIR/SUBDIR/NAME (a build tree) or DIR/NAME (a directory of binaries).
find_binary() {
  local subdir="$1" name="$2" path
  for path in "$binaries/$subdir/$name" "$binaries/$name"; do
    if [[ -f "$path" ]]; then
      echo "$path"
      return 0
    fi
  done
  die "no $name in $binaries (build it first, or name the tree with --binaries build-server / --$3)"
}
[[ -n "$server" ]] || server="$(find_binary server posenc_server server)"
[[ -n "$cli" ]] || cli="$(find_binary client posenc cli)"
for binary in "$server" "$cli"; do
  [[ -f "$binary" && -x "$binary" ]] || die "$binary is not an executable file"
done

# The image installs Debian 12 packages for the libraries these binaries
# were linked against here: they must come from the same release.
# shellcheck disable=SC1091
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[[ "$codename" == bookworm ]] ||
  die "this host is '${codename:-unknown}', not Debian 12 (bookworm): its binaries would not match the image's libraries"

context="$(mktemp -d /tmp/posenc-image-context.XXXXXX)"
trap 'rm -rf "$context"' EXIT

install -m 0755 -s "$server" "$context/posenc_server"
install -m 0755 -s "$cli" "$context/posenc"
"$repo/docker/runtime-packages.sh" "$context/posenc_server" "$context/posenc" \
  >"$context/runtime-packages.txt"
# docker/Dockerfile's runtime stage takes /out/{posenc_server,posenc,
# runtime-packages.txt} from the stage named builder: here, a scratch stage
# holding this context's three files.
runtime_stage="$(sed -n '/^FROM debian:bookworm-slim AS runtime$/,$p' \
  "$repo/docker/Dockerfile")"
[[ -n "$runtime_stage" ]] ||
  die "docker/Dockerfile has no 'FROM debian:bookworm-slim AS runtime' stage"
{
  echo "# docker/build-image.sh: the host-built binaries, then docker/Dockerfile's runtime stage."
  echo "FROM scratch AS builder"
  echo "COPY posenc_server posenc runtime-packages.txt /out/"
  echo
  echo "$runtime_stage"
} >"$context/Dockerfile"

echo "build-image: posenc_server from $server"
echo "build-image: posenc from $cli"
echo "runtime packages: $(paste -sd ' ' "$context/runtime-packages.txt")"
echo "build-image: docker build -t $tag (context: $(du -sh "$context" | cut -f1))"
if ! docker build -t "$tag" "$context"; then
  docker image inspect debian:bookworm-slim >/dev/null 2>&1 ||
    echo "build-image: no debian:bookworm-slim here: without a registry, make it with docker/make-base-image.sh" >&2
  die "docker build failed"
fi
size_bytes="$(docker image inspect -f '{{.Size}}' "$tag")"
echo "build-image: image $tag: $((size_bytes / 1000000)) MB ($size_bytes bytes)"
