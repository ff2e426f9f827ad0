#!/usr/bin/env bash
# Installs what is missing (Debian packages, then posenc's patched gRPC built
# from Debian's source: scripts/build-grpc.sh), builds the server and CLI in
# Release (build-server/) and starts the server in the foreground on
# 127.0.0.1:50051. Extra arguments are passed to posenc_server, e.g.
#   scripts/serve.sh --listen=0.0.0.0:50051
# Stop it with Ctrl-C (SIGINT) or SIGTERM: it drains and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh --runtime-only
scripts/build-grpc.sh
cmake --preset server >/dev/null
cmake --build --preset server
exec build-server/server/posenc_server "$@"
