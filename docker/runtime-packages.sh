#!/usr/bin/env bash
# Prints, one per line, the Debian packages that provide the shared libraries
# the given binaries load (per ldd on this host), so the runtime image
# installs exactly those. Fails if ldd fails, if a library is not found, or if
# a library belongs to no package (e.g. one under /opt or /usr/local, which
# the image would not have). Asks dpkg once for all libraries (each
# dpkg-query -S reads the whole package database: seconds on a busy machine).
# Usage: docker/runtime-packages.sh BINARY...
set -euo pipefail

(($# > 0)) || {
  echo "usage: docker/runtime-packages.sh BINARY..." >&2
  exit 2
}

# Every library the binaries load, once.
declare -A seen=()
libraries=()
for binary in "$@"; do
  loaded="$(ldd "$binary")" || {
    echo "runtime-packages: ldd $binary failed" >&2
    exit 1
  }
  if grep 'not found' <<<"$loaded" >&2; then
    echo "runtime-packages: $binary needs libraries this host does not have" >&2
    exit 1
  fi
  while read -r library; do
    if [[ -z "${seen[$library]:-}" ]]; then
      seen["$library"]=1
      libraries+=("$library")
    fi
  done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$loaded")
done

# dpkg knows a file under the path its package ships it at; with merged /usr
# that may be /lib/... or /usr/lib/..., and ldd may name a symlink: so each
# library has several spellings, tried in this order.
spellings() {
  local path="$1" real
  real="$(readlink -f "$path")"
  printf '%s\n' "$path" "$real" "/usr${path#/usr}" "${path#/usr}" \
    "/usr${real#/usr}" "${real#/usr}" | awk '!seen[$0]++'
}
queries=()
for library in "${libraries[@]}"; do
  mapfile -t -O "${#queries[@]}" queries < <(spellings "$library")
done

# One dpkg-query for all spellings; lines are "PACKAGE[:ARCH][, ...]: PATH"
# (paths no package owns are only reported on stderr).
declare -A owner=()
while IFS= read -r line; do
  [[ "$line" == diversion* || "$line" != *": "* ]] && continue
  package="${line%: *}"
  package="${package%%,*}"
  owner["${line##*: }"]="${package%%:*}"
done < <(dpkg-query -S "${queries[@]}" 2>/dev/null || true)

declare -A packages=()
for library in "${libraries[@]}"; do
  package=""
  while read -r spelling; do
    if [[ -n "${owner[$spelling]:-}" ]]; then
      package="${owner[$spelling]}"
      break
    fi
  done < <(spellings "$library")
  if [[ -z "$package" ]]; then
    echo "runtime-packages: no package owns $library" >&2
    exit 1
  fi
  packages["$package"]=1
done
((${#packages[@]} > 0)) || exit 0
printf '%s\n' "${!packages[@]}" | sort
