#!/usr/bin/env bash
# Repository hygiene, a step of scripts/test.sh (and so of CI). Fails on a
# tracked file that does not belong in git:
#   - a log (*.log: .gitignore ignores them; this catches `git add -f`);
#   - an empty regular file, unless ALLOW_EMPTY below names it.
# It checks the index (what the next commit holds), so a staged file counts
# too. First it tests itself on a scratch repository (a log, an empty file,
# an allowed empty file, a clean file), so a broken pattern cannot pass
# everything.
#
# Usage: scripts/check-repo.sh [DIR]     (default: this repository)
# Exit status: 0 clean; 1 problems (each listed); 2 DIR is no git work tree,
# or the self-test failed.
set -euo pipefail

# Empty on purpose. Bash patterns on the path from the repository root (`*`
# also matches `/`); keep each one narrow and say why.
ALLOW_EMPTY=(
  'py.typed' '*/py.typed'          # PEP 561 marker of a typed Python package
  '__init__.py' '*/__init__.py'    # a Python package with an empty __init__
  '.gitkeep' '*/.gitkeep'          # keeps an otherwise empty directory
  'fuzz/corpus/*'                  # libFuzzer seed: the empty input is a request
)

allowed_empty() {
  local p
  for p in "${ALLOW_EMPTY[@]}"; do
    # shellcheck disable=SC2053  # $p is a pattern on purpose
    [[ $1 == $p ]] && return 0
  done
  return 1
}

# problems DIR: one line per problem in DIR's index; none when clean.
problems() {
  local dir=$1 empty meta mode object path
  # The empty blob's id in this repository's hash (SHA-1 or SHA-256).
  empty=$(git -C "$dir" hash-object -t blob --stdin < /dev/null)
  # "MODE OBJECT STAGE<TAB>PATH", NUL-terminated (any file name).
  while IFS=$'\t' read -r -d '' meta path; do
    read -r mode object _ <<< "$meta"
    # Regular files only: not symbolic links (120000), submodules (160000).
    [[ $mode == 100644 || $mode == 100755 ]] || continue
    if [[ $path == *.log ]]; then
      echo "tracked log: $path (git rm --cached it; *.log is ignored)"
    elif [[ $object == "$empty" ]] && ! allowed_empty "$path"; then
      echo "empty file: $path (remove it, or add it to ALLOW_EMPTY in scripts/check-repo.sh with the reason)"
    fi
  done < <(git -C "$dir" ls-files -z --stage)
}

# The checker on a scratch repository with one problem of each kind.
self_test() {
  local tmp out expected
  tmp=$(mktemp -d /tmp/posenc-check-repo.XXXXXX)
  # shellcheck disable=SC2064  # expand $tmp now
  trap "rm -rf '$tmp'" RETURN
  git -C "$tmp" init -q
  mkdir -p "$tmp/pkg" "$tmp/fuzz/corpus/get_rows" "$tmp/logs"
  echo 'ok' > "$tmp/README"
  : > "$tmp/pkg/py.typed"
  : > "$tmp/pkg/__init__.py"
  : > "$tmp/fuzz/corpus/get_rows/empty_request"
  : > "$tmp/one.txt"
  : > "$tmp/pkg/empty.py"
  echo '[NOTICE] haproxy' > "$tmp/logs/hp.log"
  ln -s README "$tmp/link"
  git -C "$tmp" add -f .
  out=$(problems "$tmp" | sort)
  expected=$(printf '%s\n' \
    "empty file: one.txt (remove it, or add it to ALLOW_EMPTY in scripts/check-repo.sh with the reason)" \
    "empty file: pkg/empty.py (remove it, or add it to ALLOW_EMPTY in scripts/check-repo.sh with the reason)" \
    "tracked log: logs/hp.log (git rm --cached it; *.log is ignored)" | sort)
  if [[ $out != "$expected" ]]; then
    printf 'check-repo.sh: self-test FAILED\nexpected:\n%s\ngot:\n%s\n' \
      "$expected" "$out" >&2
    return 1
  fi
  git -C "$tmp" rm -q --cached one.txt pkg/empty.py logs/hp.log
  out=$(problems "$tmp")
  [[ -z $out ]] || { printf 'check-repo.sh: self-test FAILED: a clean index gave\n%s\n' "$out" >&2; return 1; }
}

DIR=${1:-$(cd "$(dirname "$0")/.." && pwd)}
self_test || exit 2
if ! err=$(git -C "$DIR" rev-parse --is-inside-work-tree 2>&1 > /dev/null); then
  echo "check-repo.sh: $DIR is not a git work tree: nothing to check ($err)" >&2
  exit 2
fi
found=$(problems "$DIR")
if [[ -n $found ]]; then
  while IFS= read -r line; do echo "check-repo.sh: $line" >&2; done <<< "$found"
  echo "check-repo.sh: $(wc -l <<< "$found") problem(s) in $DIR" >&2
  exit 1
fi
echo "check-repo.sh: no tracked log, no empty file outside the allow-list ($(git -C "$DIR" ls-files | wc -l) files)"
