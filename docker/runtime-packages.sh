#!/usr/bin/env bash
# Prints, one per line, the Debian packages that provide the shared libraries
# the given binaries load (per ldd), so the runtime image installs exactly
# those. Fails if a library belongs to no package.
# Usage: docker/runtime-packages.sh BINARY...
set -euo pipefail

# dpkg knows a file under the path its package ships it at; with merged /usr
# that may be /lib/... or /usr/lib/..., so try both spellings.
owner() {
  local path="$1" real candidate
  real="$(readlink -f "$path")"
  for candidate in "$path" "$real" "/usr${path#/usr}" "${path#/usr}" \
    "/usr${real#/usr}" "${real#/usr}"; do
    if dpkg-query -S "$candidate" >/dev/null 2>&1; then
      dpkg-query -S "$candidate" | head -n 1 | cut -d: -f1
      return 0
    fi
  done
  echo "runtime-packages: no package owns $path" >&2
  return 1
}

declare -A packages=()
for binary in "$@"; do
  while read -r library; do
    packages["$(owner "$library")"]=1
  done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
done
printf '%s\n' "${!packages[@]}" | sort
