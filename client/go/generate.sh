#!/usr/bin/env bash
# Regenerates posencv1/ (committed: `go build` cannot run protoc) from
# proto/posenc/v1/posenc.proto with Debian's protoc-gen-go and
# protoc-gen-go-grpc. Run after every change to the proto.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
proto_root="$(cd "$here/../../proto" && pwd)"
protoc --proto_path="$proto_root" \
  --go_out="$here" --go_opt=module=posenc/client/go \
  --go-grpc_out="$here" --go-grpc_opt=module=posenc/client/go \
  "$proto_root/posenc/v1/posenc.proto"
