#!/usr/bin/env bash
# Installs this package's dependencies exactly as package-lock.json pins them
# (npm ci), unless node_modules already matches the lock: then it does
# nothing and needs no network.
# Usage: client/node/install_deps.sh
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.posenc-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2
echo "$want" > "$stamp"
