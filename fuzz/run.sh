#!/usr/bin/env bash
# CI's short fuzz run: builds the fuzz targets (clang, ASan + UBSan; the
# `fuzz` preset) and runs each for TOTAL_SECONDS / 8, from the committed
# corpus: the service targets through one long-lived posenc server per
# process (service_harness.h's fast mode), the parser targets directly. Any
# crash, sanitizer report, failed check, input slower than -timeout or
# memory blow-up (-rss_limit_mb) fails the run; the input is kept in
# build-fuzz/run/artifacts/ and reproduces alone:
#   POSENC_FUZZ_FRESH=1 build-fuzz/fuzz/fuzz_<target> build-fuzz/run/artifacts/<target>-crash-...
# What a run discovers stays in build-fuzz/run (scratch); fuzz/long.sh is the
# campaign that merges new coverage into fuzz/corpus/.
# Usage: fuzz/run.sh [TOTAL_SECONDS]   (default 60: ~7 s per target)
# TOTAL_SECONDS bounds the wall time of the five runs together (the build
# before them not counted): each target gets what is left divided by the
# targets left, less 2 s for the process to load and exit.
set -euo pipefail
total="${1:-60}"
cd "$(dirname "$0")/.."
targets=(get_table stream_rows stream_batches get_rows encode preset hf_config
  shared_mapping)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

# MPFR's per-thread caches outlive each input's compute threads (lsan.supp);
# a smaller quarantine keeps a long run's RSS flat.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=64:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

work="build-fuzz/run"
rm -rf "$work"
mkdir -p "$work/artifacts"
status=0
start=$SECONDS
left=${#targets[@]}
for t in "${targets[@]}"; do
  per_target=$(((total - (SECONDS - start)) / left - 2))
  ((per_target >= 1)) || per_target=1
  left=$((left - 1))
  # A scratch copy, so the committed corpus changes only by fuzz/long.sh's
  # merge. Loading the seeds counts in the time limit, so every seed but
  # those at the server's limits (limit_*: seconds each under ASan); ctest
  # fuzz_corpus_replay runs every seed in every build.
  mkdir -p "$work/corpus/$t"
  find "fuzz/corpus/$t" -type f ! -name 'limit_*' -exec cp -t "$work/corpus/$t/" {} +
  echo "fuzz: $t for ${per_target}s"
  # The time limit includes loading the corpus; -close_fd_mask=2 drops the
  # servers' log lines (sanitizer reports and failed checks still print).
  if ! "build-fuzz/fuzz/fuzz_$t" -max_total_time="$per_target" -timeout=30 \
      -rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/$t-" "$work/corpus/$t" \
      >"$work/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; log $work/$t.log, inputs in $work/artifacts/" >&2
    tail -n 40 "$work/$t.log" >&2
    status=1
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^posenc-fuzz" \
      "$work/$t.log" | sed "s/^/fuzz: $t /"
  fi
done
exit "$status"
