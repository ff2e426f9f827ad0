#!/usr/bin/env bash
# Builds HAProxy 3.0.11 from the upstream tarball Debian's pool serves
# (haproxy_3.0.11.orig.tar.gz, trixie's haproxy 3.0.11-1+deb13u4; its .dsc
# and debian.tar.xz are not served here, so Debian's own patches are not
# applied), pinned by the SHA-256 that Debian's Sources index gives for it,
# into $POSENC_HAPROXY_PREFIX (default /opt/posenc/haproxy;
# sbin/haproxy). Only for measuring the fronts against HTTP/2 attacks
# (bench/attacks/fronts.py --haproxy /opt/posenc/haproxy/sbin/haproxy): the
# shipped fronts stay Debian 12's packages (docs/security.md says why and
# which HAProxy a deployment needs).
# Idempotent: a stamp holds the hash of the tarball and this script.
# Usage: bench/attacks/build-haproxy.sh   (after scripts/bootstrap.sh; root or a
#        writable prefix)
set -euo pipefail
prefix="${POSENC_HAPROXY_PREFIX:-/opt/posenc/haproxy}"
version=3.0.11
tarball="haproxy_$version.orig.tar.gz"
sha256=a133e2d550c5fd9a849b5c7ab17bb945bcdad209ca140d41f45ebf31943ae783
url="http://deb.debian.org/debian/pool/main/h/haproxy/$tarball"

stamp="$( (echo "$sha256"; cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-16)"
if [[ -f "$prefix/posenc-stamp" && "$(cat "$prefix/posenc-stamp")" == "$stamp" ]]; then
  exit 0
fi
work="${POSENC_HAPROXY_WORK:-/var/tmp/posenc-haproxy-build}"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
# (python3 rather than curl: bootstrap.sh installs it, not curl)
python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(*sys.argv[1:])' \
  "$url" "$tarball"
echo "$sha256  $tarball" | sha256sum -c --quiet
tar xzf "$tarball"
cd "haproxy-$version"
# What posenc's config uses (h2, stick tables, tcp-check; its one regex,
# `expect rbinary`, works with libc's regex), without Lua, QUIC or TLS: the
# fronts measured here speak h2c.
echo "build-haproxy: compiling HAProxy $version (log: $work/build.log)" >&2
make -j"$(nproc)" TARGET=linux-glibc >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log" >&2
  exit 1
}
rm -rf "$prefix.new"
make install-bin PREFIX="$prefix.new" >"$work/install.log" 2>&1
echo "$stamp" >"$prefix.new/posenc-stamp"
rm -rf "$prefix"
mv "$prefix.new" "$prefix"
"$prefix/sbin/haproxy" -v | head -n 1
