#!/usr/bin/env bash
# Installs every Debian package posenc needs to build, test, benchmark and package.
# Idempotent: when everything is present it installs nothing and prints nothing.
# Usage: scripts/bootstrap.sh [--runtime-only | --python]   (root or sudo; Debian 12)
#   --runtime-only: what building and running the server and CLI needs
#     (scripts/serve.sh);
#   --python: only what installing the Python client needs
#     (`pip install --no-build-isolation client/python` in a venv on
#     /usr/bin/python3 with --system-site-packages; the README's line).
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates dpkg-dev
  protobuf-compiler libprotobuf-dev libprotoc-dev
  libc-ares-dev libre2-dev zlib1g-dev
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libhwy-dev libmpfr-dev libgmp-dev libpng-dev
  prometheus-cpp-dev libssl-dev libxxhash-dev
  python3
)
# The gRPC posenc links is built from Debian's source by scripts/build-grpc.sh
# (Debian 12's libgrpc 1.51.1 carries four HTTP/2 CVEs); gRPC's own
# dependencies above stay Debian's. python3: build-grpc.sh edits gRPC's
# CMakeLists.txt with it (a fresh Debian 12, e.g. the Docker image's builder
# stage, has none). protobuf-compiler-grpc is only for the Python client's
# stubs (grpc_python_plugin).
test_pkgs=(
  protobuf-compiler-grpc
  clang libclang-rt-14-dev clang-format
  nghttp2-client openssl prometheus procps python3-grpcio python3-protobuf python3-numpy python3-yaml
  python3-xxhash python3-torch
  python3-h2 python3-hpack python3-hyperframe
  python3-venv python3-pip python3-setuptools python3-wheel python3-build
  libcpp-httplib-dev
  golang-go golang-google-grpc-dev golang-google-protobuf-dev protoc-gen-go protoc-gen-go-grpc
  golang-github-golang-protobuf-1-5-dev golang-github-cespare-xxhash-dev
  nodejs
  docker.io debootstrap docker-compose
  haproxy nginx-light
)

# The Python client's build (protoc with Debian's grpc_python_plugin) and
# runtime, from Debian (no PyPI).
python_pkgs=(
  protobuf-compiler protobuf-compiler-grpc
  python3 python3-grpcio python3-protobuf python3-numpy python3-xxhash
  python3-venv python3-pip python3-setuptools python3-wheel
)

case "${1:-}" in
  --runtime-only) pkgs=("${build_pkgs[@]}") ;;
  --python) pkgs=("${python_pkgs[@]}") ;;
  "") pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  *)
    echo "usage: scripts/bootstrap.sh [--runtime-only | --python]" >&2
    exit 2
    ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come with nodejs (NodeSource builds) or as Debian's own package.
if [[ -z "${1:-}" ]] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
