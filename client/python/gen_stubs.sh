#!/usr/bin/env bash
# Generates the posenc.v1 protobuf and gRPC modules for the Python client with
# Debian's protoc and grpc_python_plugin (no pip download), for running the
# client from the source tree (the interop test). Installs need not: setup.py
# generates them at build time.
# Usage: client/python/gen_stubs.sh [OUT_DIR]
#   OUT_DIR defaults to client/python, so the package works in place;
#   the build generates into its own directory instead.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto_root="$(cd "$here/../../proto" && pwd)"
out="${1:-$here}"
plugin="${GRPC_PYTHON_PLUGIN:-$(command -v grpc_python_plugin)}"
mkdir -p "$out/posenc/v1"
protoc --proto_path="$proto_root" \
  --python_out="$out" --grpc_python_out="$out" \
  --plugin=protoc-gen-grpc_python="$plugin" \
  "$proto_root/posenc/v1/posenc.proto"
: > "$out/posenc/v1/__init__.py"
