#!/usr/bin/env bash
# Builds a local stand-in for debian:bookworm-slim with debootstrap and imports
# it into the Docker engine, for machines that cannot pull from a registry.
# Trimmed the way the official slim image is: no docs, man pages, info pages
# or locales (now or for packages installed later), no apt lists.
# Usage: docker/make-base-image.sh [TAG]   (root; default TAG debian:bookworm-slim)
set -euo pipefail

tag="${1:-debian:bookworm-slim}"
sources=/etc/apt/sources.list.d/debian.sources

# The Debian mirror apt uses on this machine (first URIs line of the main
# archive), falling back to the public redirector.
mirror="http://deb.debian.org/debian"
if [[ -r "$sources" ]]; then
  found="$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$sources")"
  [[ -n "$found" ]] && mirror="$found"
fi
security="${mirror%/debian}/debian-security"

rootfs="$(mktemp -d /tmp/posenc-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT

echo "make-base-image: debootstrap bookworm from $mirror" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 30 "$rootfs.log" >&2
  exit 1
}
rm -f "$rootfs.log"

# Keep later package installs slim too (as the official image does).
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
cat >"$rootfs/etc/apt/apt.conf.d/docker-no-languages" <<'CFG'
Acquire::Languages "none";
CFG

# deb822 sources like the official image: main, updates and security.
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC

# Trim what the slim image drops.
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda}/*
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
  -exec rm -rf {} +
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
  "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log \
  "$rootfs"/var/cache/debconf/*-old "$rootfs"/tmp/*

tar -C "$rootfs" --numeric-owner -c . |
  docker import --change 'CMD ["bash"]' - "$tag" >/dev/null
echo "make-base-image: imported $tag ($(docker image inspect -f '{{.Size}}' "$tag") bytes)" >&2
