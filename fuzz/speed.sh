#!/usr/bin/env bash
# Executions a second of each fuzz target, on one core (taskset), from the
# committed corpus, as libFuzzer counts them (stat::number_of_executed_units
# over the wall time, loading the corpus included), in the harness's fast
# mode and, for the service targets, its fresh mode (a server and TCP
# connection per input, the harness before issue 36). Prints one line per
# target and mode: target mode executions seconds exec/s.
# Usage: fuzz/speed.sh [SECONDS] [TARGET...]   (default 30 s; all targets;
#        after cmake --build --preset fuzz)
set -euo pipefail
seconds="${1:-30}"
shift || true
cd "$(dirname "$0")/.."
targets=("$@")
((${#targets[@]})) || targets=(get_table stream_rows stream_batches get_rows
  encode preset hf_config shared_mapping)
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=64:${ASAN_OPTIONS:-}"
work="build-fuzz/speed"
rm -rf "$work" && mkdir -p "$work"
printf '%-15s %-6s %11s %8s %7s\n' target mode executions seconds exec/s
for t in "${targets[@]}"; do
  modes=(fast)
  case $t in get_table|stream_rows|stream_batches|get_rows|encode) modes+=(fresh) ;; esac
  for m in "${modes[@]}"; do
    rm -rf "$work/corpus" && mkdir -p "$work/corpus"
    find "fuzz/corpus/$t" -type f ! -name 'limit_*' -exec cp -t "$work/corpus" {} +
    start=$(date +%s.%N)
    POSENC_FUZZ_FRESH=$([[ $m == fresh ]] && echo 1 || echo 0) \
      taskset -c 0 "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" \
      -timeout=60 -close_fd_mask=2 -print_final_stats=1 \
      -artifact_prefix="$work/$t-" "$work/corpus" >"$work/$t.$m.log" 2>&1 || true
    end=$(date +%s.%N)
    n=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$work/$t.$m.log")
    awk -v t="$t" -v m="$m" -v n="${n:-0}" -v s="$start" -v e="$end" \
      'BEGIN { printf "%-15s %-6s %11d %8.1f %7.0f\n", t, m, n, e - s, n / (e - s) }'
  done
done
