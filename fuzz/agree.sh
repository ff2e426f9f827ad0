#!/usr/bin/env bash
# Checks that the harness's fast mode (one long-lived server, in-process
# channel) and its fresh mode (a fresh server and TCP connection per input,
# the reproducer) give every input of a sample the same status code
# (service_harness.h). The sample: SAMPLE inputs (default 1000) drawn
# evenly over the five service targets from the committed corpus and a
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
for t in "${targets[@]}"; do
  # The limit_* seeds take seconds each under ASan (ctest's corpus replay
  # compares them in every build).
  find "fuzz/corpus/$t" "$campaign/$t/corpus" -type f ! -name 'limit_*' \
    2>/dev/null | shuf -n "$((sample / ${#targets[@]}))" --random-source=<(yes) \
    | sort >"$work/$t.files"
  for m in fast fresh; do
    fresh=0
    [[ $m == fresh ]] && fresh=1
    POSENC_FUZZ_FRESH=$fresh POSENC_FUZZ_CODES="$work/$t.$m" \
      xargs -a "$work/$t.files" "build-fuzz/fuzz/fuzz_$t" -close_fd_mask=2 \
      -timeout=60 >"$work/$t.$m.log" 2>&1 || {
      echo "agree: $t ($m) failed; see $work/$t.$m.log" >&2
      status=1
    }
  done
  n=$(wc -l <"$work/$t.files")
  total=$((total + n))
  if ! diff <(paste -d' ' "$work/$t.files" "$work/$t.fast") \
      <(paste -d' ' "$work/$t.files" "$work/$t.fresh") >"$work/$t.diff"; then
    echo "agree: $t: the modes differ:" >&2
    cat "$work/$t.diff" >&2
    status=1
  fi
  echo "agree: $t: $n inputs, $(wc -l <"$work/$t.fast") fast, $(wc -l <"$work/$t.fresh") fresh, $(grep -c . "$work/$t.diff" || true) lines differ"
done
echo "agree: $total inputs in all; exit $status"
exit "$status"
