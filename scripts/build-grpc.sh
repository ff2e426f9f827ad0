#!/usr/bin/env bash
# Builds the gRPC that posenc links: Debian's own gRPC 1.51.1 source package
# (bookworm's grpc 1.51.1-3, Debian's patches applied) plus posenc's patches
# for the four HTTP/2 CVEs that Debian 12's libgrpc still carries
# (third_party/grpc/patches/, one file per CVE, named after it). Static
# libraries and grpc_cpp_plugin go to $POSENC_GRPC_PREFIX (default
# /opt/posenc/grpc); Abseil, Protobuf, OpenSSL, c-ares, re2 and zlib stay
# Debian 12's packages.
#
# --tsan builds the same pinned, patched gRPC with -fsanitize=thread, together
# with Debian's own Abseil source (bookworm's abseil 20220623.1-1+deb12u2, the
# version of libabsl-dev, plus third_party/abseil/patches: TSan annotations)
# built the same way, into $POSENC_GRPC_TSAN_PREFIX
# (default /opt/posenc/grpc-tsan). The `tsan` preset links these, so that
# ThreadSanitizer sees gRPC's and Abseil's own synchronization (gRPC's mutexes
# are absl::Mutex) instead of being told about it by suppressions; see
# docs/development.md, "ThreadSanitizer".
#
# Why not a current release: Debian's source archive lists gRPC 1.82/1.83,
# Protobuf 36.2 and Abseil 20260817 in experimental, but its pool serves none
# of their files here (404); see docs/grpc.md.
#
# Idempotent: a stamp holds the hash of the sources, the patches and this
# script; when it matches, nothing is done. Only the targets posenc needs are
# built (grpc++, grpc++_reflection, grpcpp_channelz, grpc_cpp_plugin).
# Usage: scripts/build-grpc.sh [--tsan]   (after scripts/bootstrap.sh; root
#        or a writable prefix)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavor=release
case "${1:-}" in
  "") ;;
  --tsan) flavor=tsan ;;
  *)
    echo "usage: scripts/build-grpc.sh [--tsan]" >&2
    exit 2
    ;;
esac
if [[ $flavor == tsan ]]; then
  prefix="${POSENC_GRPC_TSAN_PREFIX:-/opt/posenc/grpc-tsan}"
else
  prefix="${POSENC_GRPC_PREFIX:-/opt/posenc/grpc}"
fi

version=1.51.1
debian_revision=3
# Pinned: the hashes of Debian's files (as in grpc_1.51.1-3.dsc).
orig_sha256=b55696fb249669744de3e71acc54a9382bea0dce7cd5ba379b356b12b82d4229
debian_sha256=767b69da166bae708a54c4740056d9e847d57d89885173016bfc57ebbf154b2d
# Abseil, for --tsan only (as in abseil_20220623.1-1+deb12u2.dsc).
absl_version=20220623.1
absl_debian_revision=1+deb12u2
absl_orig_sha256=abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe
absl_debian_sha256=e08490fc7b6f3beca1925953b0c4fb92df2de5e2a01295e4641e2a3d4e528eeb
patches_dir="$repo/third_party/grpc/patches"
absl_patches_dir="$repo/third_party/abseil/patches"

stamp_input() {
  echo "$flavor $orig_sha256 $debian_sha256"
  if [[ $flavor == tsan ]]; then
    echo "$absl_orig_sha256 $absl_debian_sha256"
    for p in $(grep -v '^#' "$absl_patches_dir"/series); do
      cat "$absl_patches_dir/$p"
    done
  fi
  cat "$patches_dir"/series
  for p in $(grep -v '^#' "$patches_dir"/series); do cat "$patches_dir/$p"; done
  cat "${BASH_SOURCE[0]}"
}
stamp="$(stamp_input | sha256sum | cut -c1-16)"
if [[ -f "$prefix/posenc-stamp" && "$(cat "$prefix/posenc-stamp")" == "$stamp" ]]; then
  exit 0
fi

work="${POSENC_GRPC_WORK:-/var/tmp/posenc-grpc-build}-$flavor"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
start=$SECONDS

# Downloads Debian's source package $1=$2, checks its two files against the
# pinned hashes $3 (.orig.tar.gz) and $4 (.debian.tar.xz), and unpacks it with
# Debian's patch series into $work/$5. Adds a deb-src line for bookworm (the
# stable release this project targets) if the machine has none.
fetch_debian_source() {
  local pkg=$1 full_version=$2 orig=$3 debian=$4 dir=$5
  local upstream=${full_version%-*}
  if ! apt-get source --download-only "$pkg=$full_version" \
    >"$work/fetch-$pkg.log" 2>&1; then
    echo "build-grpc: adding a deb-src line for bookworm" >&2
    cat >/etc/apt/sources.list.d/posenc-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -qq
    apt-get source --download-only "$pkg=$full_version" \
      >"$work/fetch-$pkg.log" 2>&1 || {
      cat "$work/fetch-$pkg.log" >&2
      exit 1
    }
  fi
  echo "$orig  ${pkg}_$upstream.orig.tar.gz" | sha256sum -c --quiet
  echo "$debian  ${pkg}_$full_version.debian.tar.xz" | sha256sum -c --quiet
  dpkg-source --no-check -x "${pkg}_$full_version.dsc" "$dir" >/dev/null 2>&1
}

# Flags of the instrumented flavour; the Release flavour keeps CMake's.
common_cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17
  -DBUILD_SHARED_LIBS=OFF)
if [[ $flavor == tsan ]]; then
  # -O1 -g1 as the `tsan` preset compiles posenc: line tables for TSan's
  # reports, about the Release build's compile time.
  san="-fsanitize=thread -fno-omit-frame-pointer -O1 -g1 -DNDEBUG"
  common_cmake_args+=(-DCMAKE_C_FLAGS_RELEASE="$san"
    -DCMAKE_CXX_FLAGS_RELEASE="$san"
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
    -DCMAKE_PREFIX_PATH="$work/stage")
fi

# Everything is built in $work first; $prefix is replaced only at the end, so
# a failed or interrupted build leaves the previous gRPC in place.
if [[ $flavor == tsan ]]; then
  fetch_debian_source abseil "$absl_version-$absl_debian_revision" \
    "$absl_orig_sha256" "$absl_debian_sha256" absl-src
  for p in $(grep -v '^#' "$absl_patches_dir"/series); do
    echo "build-grpc: applying $p to Abseil" >&2
    patch -d absl-src -p1 --no-backup-if-mismatch -s <"$absl_patches_dir/$p"
  done
  echo "build-grpc: compiling Abseil $absl_version with -fsanitize=thread" \
    "(log: $work/absl-build.log)" >&2
  cmake -S absl-src -B absl-build "${common_cmake_args[@]}" \
    -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF \
    >"$work/absl-configure.log" 2>&1 || {
    tail -n 40 "$work/absl-configure.log" >&2
    exit 1
  }
  cmake --build absl-build >"$work/absl-build.log" 2>&1 || {
    grep -A20 -m3 'error' "$work/absl-build.log" >&2 ||
      tail -n 60 "$work/absl-build.log" >&2
    exit 1
  }
  # Staged for gRPC's configure; installed in $prefix with gRPC below.
  cmake --install absl-build --prefix "$work/stage" \
    >"$work/absl-install.log" 2>&1 || {
    tail -n 40 "$work/absl-install.log" >&2
    exit 1
  }
fi

fetch_debian_source grpc "$version-$debian_revision" "$orig_sha256" \
  "$debian_sha256" src
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

cmake -S . -B build "${common_cmake_args[@]}" \
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
echo "build-grpc: compiling gRPC $version ($flavor, log: $work/build.log)" >&2
cmake --build build --target grpc++ grpc++_reflection grpcpp_channelz \
  grpc_cpp_plugin >"$work/build.log" 2>&1 || {
  grep -A20 -m3 'error' "$work/build.log" >&2 || tail -n 60 "$work/build.log" >&2
  exit 1
}
rm -rf "$prefix"
if [[ $flavor == tsan ]]; then
  cmake --install "$work/absl-build" >"$work/absl-install.log" 2>&1 || {
    tail -n 40 "$work/absl-install.log" >&2
    exit 1
  }
fi
cmake --install build >"$work/install.log" 2>&1 || {
  tail -n 40 "$work/install.log" >&2
  exit 1
}
echo "$stamp" >"$prefix/posenc-stamp"
rm -rf "$work"
echo "build-grpc: gRPC $version+posenc ($flavor) built in" \
  "$((SECONDS - start)) s ($prefix)" >&2
