#!/usr/bin/env bash
# Builds the fuzz targets (clang, ASan + UBSan; the `fuzz` preset) and runs
# each for a bounded time. Any crash, sanitizer report, timeout (-timeout=5)
# or memory blow-up (-rss_limit_mb=2048) fails the run.
# Usage: fuzz/run.sh [TOTAL_SECONDS]   (default 60: 15 s per target)
set -euo pipefail
total="${1:-60}"
cd "$(dirname "$0")/.."
targets=(get_table stream_rows stream_batches get_rows)
per_target=$(( total / ${#targets[@]} ))
(( per_target >= 1 )) || per_target=1

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

work="build-fuzz/run"
rm -rf "$work"
mkdir -p "$work/artifacts"
status=0
for t in "${targets[@]}"; do
  # Fuzz a scratch copy so the committed seeds stay small and reviewed.
  mkdir -p "$work/corpus/$t"
  cp fuzz/corpus/"$t"/* "$work/corpus/$t/"
  echo "fuzz: $t for ${per_target}s"
  if ! "build-fuzz/fuzz/fuzz_$t" -max_total_time="$per_target" -timeout=5 \
      -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/$t-" "$work/corpus/$t" \
      >"$work/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; log $work/$t.log, inputs in $work/artifacts/" >&2
    tail -n 40 "$work/$t.log" >&2
    status=1
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/$t.log" |
      sed "s/^/fuzz: $t /"
  fi
done
exit "$status"
