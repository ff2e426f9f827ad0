#!/bin/sh
# The caller of docker/compose.shm.yaml, in the posenc image as another user
# than the server's, with /shm mounted read-only: reads tables through the
# shared tmpfs with the posenc CLI (`table --shared-memory`) and checks them:
#   (1) a golden table (tests/golden/interop.txt, GetTable d512_f64_concat):
#       mapped (the CLI's stderr line) and its bytes' sha256 the golden's;
#   (2) a 16 MiB table (d=512, max_len=8192, float32): mapped, and the same
#       bytes as the same call without --shared-memory (the bytes path);
#   (3) nothing in /shm can be written from here.
# Prints `caller: PASS` and exits 0, or `caller: FAIL: ...` (stderr) and
# exits 1.
set -eu

target="${POSENC_TARGET:-127.0.0.1:50051}"
golden="${POSENC_GOLDEN_SHA256:?POSENC_GOLDEN_SHA256 is not set}"

fail() {
  echo "caller: FAIL: $*" >&2
  exit 1
}

# table NAME ARGS...: `posenc table ARGS... -o /tmp/NAME.bin`, its stderr
# kept in /tmp/NAME.err and echoed; prints the output's sha256.
table() {
  name="$1"
  shift
  posenc table --target "$target" --timeout 30 "$@" -o "/tmp/$name.bin" \
    2>"/tmp/$name.err" || {
    cat "/tmp/$name.err" >&2
    fail "posenc table $* failed"
  }
  sed "s/^/caller: [$name] /" "/tmp/$name.err" >&2
  sha256sum "/tmp/$name.bin" | cut -d' ' -f1
}

# mapped NAME: NAME's call took the shared-memory path.
mapped() {
  grep -q '^shared memory: mapped /shm/' "/tmp/$1.err" ||
    fail "$1 was not mapped from /shm: $(cat "/tmp/$1.err")"
}

echo "caller: uid $(id -u), target $target"

# (1) The golden table through the mapping.
sum="$(table golden --shared-memory --d 512 --max-len 40 --base 500.5 \
  --dtype float64 --layout concat_sin_cos)"
mapped golden
[ "$sum" = "$golden" ] || fail "golden table: sha256 $sum, want $golden"
echo "caller: (1) d512_f64_concat mapped, sha256 $sum = golden"

# (2) 16 MiB through the mapping and through the bytes path.
shm_sum="$(table big --shared-memory --d 512 --max-len 8192)"
mapped big
bytes_sum="$(table big-bytes --d 512 --max-len 8192)"
[ "$(wc -c </tmp/big.bin)" -eq 16777216 ] || fail "big: $(wc -c </tmp/big.bin) bytes"
[ "$shm_sum" = "$bytes_sum" ] ||
  fail "d=512 max_len=8192: mapped sha256 $shm_sum != bytes $bytes_sum"
echo "caller: (2) d=512 max_len=8192 float32 mapped, 16777216 bytes, sha256 $shm_sum = the bytes path's"

# (3) Read-only here (the mount), and the server's files are not ours.
if touch /shm/caller-was-here 2>/dev/null; then
  fail "could create a file in /shm"
fi
for file in /shm/posenc-*/table-*; do
  [ -f "$file" ] || fail "no table file in /shm"
  # `true`, not `:`: a failed redirection of a special builtin ends sh.
  if true 2>/dev/null >>"$file"; then
    fail "could open $file for writing"
  fi
done
echo "caller: (3) /shm and its tables are read-only to uid $(id -u)"

echo "caller: PASS"
