#!/usr/bin/env bash
# The fuzz campaign (not CI; the CMake target `fuzz_long` runs it with its
# defaults): each target for EXECS executions (default 10,000,000) or
# MINUTES minutes, whichever comes first, from the committed corpus plus
# what earlier campaigns in DIR found (DIR/<target>/corpus; DIR defaults to
# build-fuzz/long), then new coverage is merged into fuzz/corpus/<target>/
# (-merge=1): the hand-written seeds (fuzz/make_corpus.sh) are kept, the
# found ones are re-minimized and named by their SHA-1.
#
# libFuzzer's fork mode (-fork=1, the default): the inputs run in a child
# process that is replaced every few minutes, so a finding does not end the
# campaign (-ignore_crashes/-ignore_timeouts/-ignore_ooms) and a process
# never grows for millions of inputs (each server leaves its threads' MPFR
# caches behind, see lsan.supp). Each job first re-runs part of the corpus
# (the limit_* seeds take seconds each under ASan): --no-fork runs one
# process per target instead, stopping at the first finding.
#
# Findings (crash-, timeout-, oom-, leak- files) stay in
# DIR/<target>/artifacts/ and are never merged: each must be
# fixed, then made a seed and a regression test. Exit 1 if there is any.
# Inputs slower than 10 s (slow-unit- files; -timeout is 60 s) are listed
# apart: not failures, but worth a look. A finding of a service target
# (fast mode, one long-lived server) is confirmed in the fresh mode:
#   POSENC_FUZZ_FRESH=1 build-fuzz/fuzz/fuzz_<target> FILE
#
# Usage: fuzz/long.sh [--execs N] [--minutes M] [--parallel P] [--no-fork]
#                     [--no-merge] [--merge-only] [--no-build] [--dir DIR]
#                     [--preset fuzz|fuzz-ubsan] [TARGET...]
#   TARGET: get_table stream_rows stream_batches get_rows encode preset
#   hf_config shared_mapping (default: all)
#   --parallel P: P targets at once (default 1), each at nice 10.
#   --no-build: use build-fuzz/fuzz/ as it is.
#   --preset fuzz-ubsan: the targets built with UBSan and without ASan
#   (build-fuzz-ubsan/; 2-4x the executions a second of the service targets,
#   whose time under ASan goes to gRPC's per-call allocations). A campaign's
#   corpus is merged into fuzz/corpus/, which every build replays under ASan
#   + UBSan (ctest fuzz_corpus_replay, fuzz/run.sh), so memory errors on the
#   paths it found are still looked for; an ASan-only finding (a heap
#   overflow that UBSan cannot see) shows there.
#   --no-merge: leave fuzz/corpus/ alone; --merge-only: run nothing, merge
#   what DIR holds and print the summary of its last campaign.
# Prints per target: executions, seconds, exec/s, cov (edges) at the start
# (the first stats line after the corpus) and at the end and ft (libFuzzer's
# last stats line), corpus size, findings and slow inputs; and writes them
# to DIR/summary.txt. The campaign of issue 36, on a shared machine:
#   nice -n 19 timeout 2h fuzz/long.sh --minutes 100 --parallel 8 \
#     --no-merge --dir build-fuzz/campaign
set -euo pipefail
cd "$(dirname "$0")/.."
execs=10000000
minutes=""
parallel=1
merge=1
fork=1
run=1
build=1
long="build-fuzz/long"
preset=fuzz
targets=()
while (($#)); do
  case "$1" in
    --execs) execs="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --no-merge) merge=0; shift ;;
    --merge-only) run=0; shift ;;
    --no-build) build=0; shift ;;
    --no-fork) fork=0; shift ;;
    --dir) long="$2"; shift 2 ;;
    --preset) preset="$2"; shift 2 ;;
    get_table|stream_rows|stream_batches|get_rows|encode|preset|hf_config|shared_mapping)
      targets+=("$1"); shift ;;
    *) echo "long.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || targets=(get_table stream_rows stream_batches get_rows encode
  preset hf_config shared_mapping)

case "$preset" in
  fuzz) bin=build-fuzz/fuzz ;;
  fuzz-ubsan) bin=build-fuzz-ubsan/fuzz ;;
  *) echo "long.sh: --preset fuzz or fuzz-ubsan" >&2; exit 2 ;;
esac
if ((build)); then
  cmake --preset "$preset" >/dev/null
  # Only the targets of this campaign (the machine may be shared).
  nice cmake --build --preset "$preset" --target "${targets[@]/#/fuzz_}"
fi

export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=64:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$long"
# Per input: -timeout 60 s (a cold RoPE row at d = 65536 takes seconds under
# ASan); the process may grow to 3 GiB (ASan's quarantine and metadata).
# -close_fd_mask=2 drops the servers' log lines only: libFuzzer points the
# sanitizers' report at a copy of stderr before closing it, so ASan and UBSan
# reports still reach fuzz.log, in fork mode too (checked with a planted
# use-after-free and a signed overflow, -fork=1: every crash's report was in
# the parent's log).
flags=(-timeout=60 -rss_limit_mb=3072 -close_fd_mask=2 -print_pcs=0)

campaign() {  # target
  local t=$1 w="$long/$1"
  mkdir -p "$w/corpus" "$w/artifacts"
  local time_flag=()
  [[ -n "$minutes" ]] && time_flag=(-max_total_time=$((minutes * 60)))
  local start=$SECONDS rc=0
  local mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  ((fork)) || mode=(-print_final_stats=1)
  nice -n 10 "$bin/fuzz_$t" "${mode[@]}" -runs="$execs" \
    "${time_flag[@]}" "${flags[@]}" -artifact_prefix="$w/artifacts/" \
    "$w/corpus" "fuzz/corpus/$t" >"$w/fuzz.log" 2>&1 || rc=$?
  echo "$((SECONDS - start))" >"$w/seconds"
  echo "$rc" >"$w/rc"
}

merge_into_repo() {  # target
  local t=$1 w="$long/$1"
  rm -rf "$w/min" && mkdir -p "$w/min"
  # Edges only (-use_counters=0): ctest fuzz_corpus_replay runs every file
  # in both harness modes in every build, the fresh one at ~50 inputs a
  # second under ASan, so the corpus keeps one input per new edge, not per
  # new hit count (4,863 files for the first campaign's service targets).
  nice -n 10 "$bin/fuzz_$t" -merge=1 -use_counters=0 "${flags[@]}" "$w/min" \
    "fuzz/corpus/$t" "$w/corpus" >"$w/merge.log" 2>&1
  # Hand-written seeds are the files whose name is not a SHA-1.
  local named=() f
  for f in "fuzz/corpus/$t"/*; do
    [[ "$(basename "$f")" =~ ^[0-9a-f]{40}$ ]] || named+=("$(sha1sum <"$f" | cut -c1-40)")
  done
  find "fuzz/corpus/$t" -type f -regextype posix-extended \
    -regex '.*/[0-9a-f]{40}' -delete
  for f in "$w/min"/*; do
    local sum
    sum=$(sha1sum <"$f" | cut -c1-40)
    [[ " ${named[*]} " == *" $sum "* ]] || cp "$f" "fuzz/corpus/$t/$sum"
  done
}

running=0
for t in "${targets[@]}"; do
  ((run)) || break
  campaign "$t" &
  running=$((running + 1))
  if ((running >= parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

findings=0
summary="$long/summary.txt"
{
  printf '%-15s %11s %8s %7s %9s %7s %6s %7s %9s %s\n' target executions \
    seconds exec/s cov_start cov_end ft corpus findings slow
  for t in "${targets[@]}"; do
    w="$long/$t"
    # The last stats line: "#N: cov: C ft: F corp: K exec/s ..." (fork
    # mode's parent) or "#N<TAB>DONE   cov: C ft: F corp: K/..." (one
    # process, whose executions are its stat::number_of_executed_units).
    last=$(grep -aE '^#[0-9]+(:|[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)) +cov:' \
      "$w/fuzz.log" | tail -1 || true)
    n=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
    if ((!fork)); then
      n=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' \
        "$w/fuzz.log" | tail -1)
    fi
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    # At the start: the first stats line once the corpus was loaded
    # (INITED, or fork mode's first "#N: cov:" line).
    first=$(grep -aE '^#[0-9]+(:|[[:space:]]+INITED) +cov:' "$w/fuzz.log" \
      | head -1 || true)
    cov0=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$first")
    secs=$(cat "$w/seconds" 2>/dev/null || echo 0)
    rate=$(( ${n:-0} / (secs > 0 ? secs : 1) ))
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    if ((merge)); then merge_into_repo "$t"; fi
    found=$(find "$w/artifacts" -type f ! -name 'slow-unit-*' | wc -l)
    slow=$(find "$w/artifacts" -type f -name 'slow-unit-*' | wc -l)
    findings=$((findings + found))
    printf '%-15s %11s %8s %7s %9s %7s %6s %7s %9s %s\n' "$t" "${n:-?}" \
      "$secs" "$rate" "${cov0:-?}" "${cov:-?}" "${ft:-?}" \
      "$(find "fuzz/corpus/$t" -type f | wc -l)" "$found" "$slow"
  done
} >"$summary"
cat "$summary"
if ((findings)); then
  echo "long.sh: findings in $long/*/artifacts (reproduce: build-fuzz/fuzz/fuzz_<target> FILE)" >&2
  exit 1
fi
