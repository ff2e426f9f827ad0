#!/usr/bin/env bash
# Checks that the harness's fast mode (one long-lived server, in-process
# channel) and its fresh mode (a fresh server and TCP connection per input,
# the reproducer) give every input of a sample the same status code
# (service_harness.h). The sample: SAMPLE files (default 1000) drawn at
# random over the five service targets together, from the committed corpus and a
# campaign's corpus (CAMPAIGN_DIR/<target>/corpus, default
# build-fuzz/long). Each mode runs the target once over its share, in one
# process (libFuzzer's replay of files), writing each input's code
# (POSENC_FUZZ_CODES); any difference is printed and fails the check.
# Usage: fuzz/agree.sh [SAMPLE] [CAMPAIGN_DIR]   (after cmake --build
#        --preset fuzz)
set -euo pipefail
sample="${1:-1000}"
campaign="${2:-build-fuzz/long}"
cd "$(dirname "$0")/.."
targets=(get_table stream_rows stream_batches get_rows encode)
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=64:${ASAN_OPTIONS:-}"
work="build-fuzz/agree"
rm -rf "$work" && mkdir -p "$work"
status=0
total=0
# The sample, drawn once over all five targets' files (a target with a
# small corpus gives what it has). The limit_* seeds take seconds each under
# ASan (ctest's corpus replay compares them in every build).
dirs=()
for t in "${targets[@]}"; do
  dirs+=("fuzz/corpus/$t")
  [[ -d "$campaign/$t/corpus" ]] && dirs+=("$campaign/$t/corpus")
done
find "${dirs[@]}" -type f ! -name 'limit_*' \
  | shuf -n "$sample" --random-source=<(yes) | sort >"$work/sample"
for t in "${targets[@]}"; do
  grep -E "/$t/" "$work/sample" >"$work/$t.files" || true
  [[ -s "$work/$t.files" ]] || continue
  for m in fast fresh; do
    fresh=0
    [[ $m == fresh ]] && fresh=1
    POSENC_FUZZ_FRESH=$fresh POSENC_FUZZ_CODES="$work/$t.$m" \
      xargs -a "$work/$t.files" "build-fuzz/fuzz/fuzz_$t" -close_fd_mask=2 \
      -timeout=60 >"$work/$t.$m.log" 2>&1 || {
      echo "agree: $t ($m) failed; see $work/$t.$m.log" >&2
      status=1
    }
    # One line per execution, "<target> <FNV-1a of the input> <code>"; an
    # input may run more than once (libFuzzer's replay), so the comparison
    # is over the distinct (input, code) pairs, and an input with two codes
    # in one mode is itself a difference.
    sort -u "$work/$t.$m" >"$work/$t.$m.pairs"
    if [[ -n "$(awk '{print $2}' "$work/$t.$m.pairs" | uniq -d)" ]]; then
      echo "agree: $t ($m): an input ended with two codes" >&2
      status=1
    fi
  done
  n=$(wc -l <"$work/$t.files")
  inputs=$(wc -l <"$work/$t.fast.pairs")
  total=$((total + n))
  if ! diff "$work/$t.fast.pairs" "$work/$t.fresh.pairs" >"$work/$t.diff"; then
    echo "agree: $t: the modes differ:" >&2
    cat "$work/$t.diff" >&2
    status=1
  fi
  echo "agree: $t: $n files ($inputs distinct inputs), $(grep -c '^[<>]' "$work/$t.diff" || true) inputs differ"
done
echo "agree: $total files in all; exit $status"
exit "$status"
