#!/usr/bin/env bash
# Runs the go tool on this module offline, against Debian's Go packages
# (golang-google-grpc-dev, golang-google-protobuf-dev, ... in
# /usr/share/gocode). No module proxy is needed: GOPATH mode, with this
# directory linked into a private GOPATH as its import path posenc/client/go.
#
# Usage: client/go/go.sh build|test|vet|run ... [packages]
#   e.g. client/go/go.sh test ./...
#        client/go/go.sh build -o /tmp/x ./cmd/posenc-interop
# Packages are relative to this directory (./...) or full import paths
# (posenc/client/go/cmd/posenc-interop); not posenc/client/go/..., which
# matches nothing: Go does not follow the link for a pattern.
# POSENC_GOPATH (default client/go/.gopath) holds the link.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gopath="${POSENC_GOPATH:-$here/.gopath}"
mkdir -p "$gopath/src/posenc/client"
ln -sfn "$here" "$gopath/src/posenc/client/go"
export GO111MODULE=off GOFLAGS= GOPROXY=off
export GOPATH="$gopath:/usr/share/gocode"
cd "$gopath/src/posenc/client/go"
exec go "$@"
