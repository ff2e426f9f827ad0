#!/usr/bin/env bash
# Installs what is missing (Debian packages), builds posenc and runs every
# test suite: the main ctest run (unit, integration, numerics, interop,
# replica, hardening), then the suites that need their own build or engine.
# Ends with one line "N passed, N failed" over all suites; exits non-zero if
# any test failed.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh || exit 1
export CTEST_OUTPUT_ON_FAILURE=1

passed=0
failed=0
status=0
# Runs one ctest invocation and adds its counts to the totals.
run_ctest() {
  local log
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -n "$line" ]]; then
    local total bad
    bad=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + total - bad))
    failed=$((failed + bad))
  elif ! grep -q "No tests were found" "$log"; then
    failed=$((failed + 1))
  fi
  [[ $rc -eq 0 ]] || status=1
  rm -f "$log"
}

cmake --preset release || exit 1
cmake --build --preset release || exit 1
run_ctest --preset release
run_ctest --test-dir build -L docker

echo
echo "posenc: ${passed} passed, ${failed} failed"
exit $status
