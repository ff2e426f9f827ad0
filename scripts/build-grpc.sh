#!/usr/bin/env bash
# Builds the gRPC that posenc links: Debian's own gRPC 1.51.1 source package
# (bookworm's grpc 1.51.1-3, Debian's patches applied) plus posenc's patches
# for the four HTTP/2 CVEs that Debian 12's libgrpc still carries
# (third_party/grpc/patches/, one file per CVE, named after it). Static
# libraries and grpc_cpp_plugin go to $POSENC_GRPC_PREFIX (default
# /opt/posenc/grpc); Abseil, Protobuf, OpenSSL, c-ares, re2 and zlib stay
# Debian 12's packages.
#
# Why not a current release: Debian's source archive lists gRPC 1.82/1.83,
# Protobuf 36.2 and Abseil 20260817 in experimental, but its pool serves none
# of their files here (404); see docs/grpc.md.
#
# Idempotent: a stamp holds the hash of the source, the patches and this
# script; when it matches, nothing is done. Only the targets posenc needs are
# built (grpc++, grpc++_reflection, grpcpp_channelz, grpc_cpp_plugin).
# Usage: scripts/build-grpc.sh   (after scripts/bootstrap.sh; root or a
#        writable prefix)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${POSENC_GRPC_PREFIX:-/opt/posenc/grpc}"

version=1.51.1
debian_revision=3
# Pinned: the hashes of Debian's files (as in grpc_1.51.1-3.dsc).
orig_sha256=b55696fb249669744de3e71acc54a9382bea0dce7cd5ba379b356b12b82d4229
debian_sha256=767b69da166bae708a54c4740056d9e847d57d89885173016bfc57ebbf154b2d
patches_dir="$repo/third_party/grpc/patches"

stamp_input() {
  echo "$orig_sha256 $debian_sha256"
  cat "$patches_dir"/series
  for p in $(grep -v '^#' "$patches_dir"/series); do cat "$patches_dir/$p"; done
  cat "${BASH_SOURCE[0]}"
}
stamp="$(stamp_input | sha256sum | cut -c1-16)"
if [[ -f "$prefix/posenc-stamp" && "$(cat "$prefix/posenc-stamp")" == "$stamp" ]]; then
  exit 0
fi

work="${POSENC_GRPC_WORK:-/var/tmp/posenc-grpc-build}"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
start=$SECONDS

# Debian's source package, from a deb-src line for bookworm (added if the
# machine has none; bookworm is the stable release this project targets).
if ! apt-get source --download-only "grpc=$version-$debian_revision" \
  >"$work/fetch.log" 2>&1; then
  echo "build-grpc: adding a deb-src line for bookworm" >&2
  cat >/etc/apt/sources.list.d/posenc-deb-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq
  apt-get source --download-only "grpc=$version-$debian_revision" \
    >"$work/fetch.log" 2>&1 || {
    cat "$work/fetch.log" >&2
    exit 1
  }
fi
echo "$orig_sha256  grpc_$version.orig.tar.gz" | sha256sum -c --quiet
echo "$debian_sha256  grpc_$version-$debian_revision.debian.tar.xz" |
  sha256sum -c --quiet
# Unpacks and applies Debian's patch series (checks the .dsc's hashes too).
dpkg-source --no-check -x "grpc_$version-$debian_revision.dsc" src >/dev/null 2>&1
cd src
for p in $(grep -v '^#' "$patches_dir"/series); do
  echo "build-grpc: applying $p" >&2
  patch -p1 --no-backup-if-mismatch -s <"$patches_dir/$p"
done

# Only what posenc links is built and installed: the unsecure and ALTS
# variants (a second compile of most of the core) are left out of the install
# set, so `cmake --install` does not look for them.
python3 - <<'PY'
import re
path = "CMakeLists.txt"
text = open(path).read()
for target in ("grpc_unsecure", "grpc++_unsecure", "grpc++_alts",
               "grpc++_error_details"):
    old = "if(gRPC_INSTALL)\n  install(TARGETS %s EXPORT gRPCTargets" % target
    assert text.count(old) == 1, target
    text = text.replace(old, "if(FALSE)  # posenc: not built\n  install(TARGETS %s EXPORT gRPCTargets" % target)
open(path, "w").write(text)
PY

cmake -S . -B build -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_CXX_STANDARD=17 \
  -DBUILD_SHARED_LIBS=OFF \
  -DgRPC_BUILD_TESTS=OFF \
  -DgRPC_ABSL_PROVIDER=package \
  -DgRPC_CARES_PROVIDER=package \
  -DgRPC_PROTOBUF_PROVIDER=package \
  -DgRPC_RE2_PROVIDER=package \
  -DgRPC_SSL_PROVIDER=package \
  -DgRPC_ZLIB_PROVIDER=package \
  -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF \
  -DgRPC_BUILD_CSHARP_EXT=OFF \
  -DgRPC_BUILD_GRPC_CSHARP_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_NODE_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_OBJECTIVE_C_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_PHP_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_PYTHON_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_RUBY_PLUGIN=OFF \
  >"$work/configure.log" 2>&1 || {
  tail -n 40 "$work/configure.log" >&2
  exit 1
}
echo "build-grpc: compiling gRPC $version (log: $work/build.log)" >&2
cmake --build build --target grpc++ grpc++_reflection grpcpp_channelz \
  grpc_cpp_plugin >"$work/build.log" 2>&1 || {
  grep -A20 -m3 'error' "$work/build.log" >&2 || tail -n 60 "$work/build.log" >&2
  exit 1
}
rm -rf "$prefix"
cmake --install build >"$work/install.log" 2>&1 || {
  tail -n 40 "$work/install.log" >&2
  exit 1
}
echo "$stamp" >"$prefix/posenc-stamp"
rm -rf "$work"
echo "build-grpc: gRPC $version+posenc built in $((SECONDS - start)) s ($prefix)" >&2
