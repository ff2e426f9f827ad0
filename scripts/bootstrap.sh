#!/usr/bin/env bash
# Installs every Debian package posenc needs to build, test, benchmark and package.
# Idempotent: when everything is present it installs nothing and prints nothing.
# Usage: scripts/bootstrap.sh [--runtime-only]   (root or sudo; Debian 12)
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates dpkg-dev
  protobuf-compiler libprotobuf-dev libprotoc-dev
  libc-ares-dev libre2-dev zlib1g-dev
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libhwy-dev libmpfr-dev libgmp-dev libpng-dev
  prometheus-cpp-dev libssl-dev libxxhash-dev
)
# The gRPC posenc links is built from Debian's source by scripts/build-grpc.sh
# (Debian 12's libgrpc 1.51.1 carries four HTTP/2 CVEs); gRPC's own
# dependencies above stay Debian's. protobuf-compiler-grpc is only for the
# Python client's stubs (grpc_python_plugin).
test_pkgs=(
  protobuf-compiler-grpc
  clang libclang-rt-14-dev clang-format
  nghttp2-client openssl prometheus procps python3 python3-grpcio python3-protobuf python3-numpy python3-yaml
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

pkgs=("${build_pkgs[@]}")
[[ "${1:-}" == "--runtime-only" ]] || pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come with nodejs (NodeSource builds) or as Debian's own package.
if [[ "${1:-}" != "--runtime-only" ]] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
