#!/usr/bin/env bash
# Repository hygiene, a step of scripts/test.sh (and so of CI). Fails on a
# tracked file that does not belong in git:
#   - a log (*.log: .gitignore ignores them; this catches `git add -f`);
#   - an empty regular file, unless ALLOW_EMPTY below names it;
# and on an include that breaks the layering (LAYERS below,
# docs/development.md): a file of a layer includes a header of a higher one.
# It checks the index (what the next commit holds), so a staged file counts
# too. First it tests itself on a scratch repository (a log, an empty file,
# an allowed empty file, a clean file, includes down and up the layers), so
# a broken pattern cannot pass everything.
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

# The layers, lowest first: a .h/.cc in one may include (#include "DIR/...")
# only headers of its own layer or lower ones. posenc/ is the generated proto
# code (proto/posenc/v1), on convert's level: presets and the core know
# nothing of the proto. ABOVE sit above them all and are not checked;
# anything else (absl/, hwy/, ...) is a dependency outside the repository.
LAYERS=(core/numerics core/runtime core/spec core/plan core/cache presets
        'convert posenc')
ABOVE=(server client bench fuzz tests)

# layer_rank PATH: the index in LAYERS of the layer holding PATH (a file, or
# the target of an include); 99 for ABOVE; -1 for a file directly in core/
# (every core file belongs to a layer); -2 outside the repository.
layer_rank() {
  local i dir
  for i in "${!LAYERS[@]}"; do
    for dir in ${LAYERS[$i]}; do
      [[ $1 == "$dir"/* ]] && { echo "$i"; return; }
    done
  done
  for dir in "${ABOVE[@]}"; do
    [[ $1 == "$dir"/* ]] && { echo 99; return; }
  done
  if [[ $1 == core/* ]]; then echo -1; else echo -2; fi
}

# layer_problems DIR: one line per include in DIR's index that goes up the
# layers.
layer_problems() {
  local dir=$1 file target rank target_rank
  # "PATH:#include "TARGET"" for every quoted include of a checked folder.
  while IFS= read -r line; do
    file=${line%%:*}
    target=${line#*\"}
    target=${target%%\"*}
    rank=$(layer_rank "$file")
    if (( rank == -1 )); then
      echo "layering: $file is in no layer of core/ (move it into one of: ${LAYERS[*]})"
      continue
    fi
    (( rank == 99 || rank == -2 )) && continue
    target_rank=$(layer_rank "$target")
    if (( target_rank > rank )); then
      echo "layering: $file includes $target, a higher layer (order, lowest first: ${LAYERS[*]})"
    fi
  done < <(git -C "$dir" grep --cached -E '^#include "' -- \
             'core/*.h' 'core/*.cc' 'presets/*.h' 'presets/*.cc' \
             'convert/*.h' 'convert/*.cc' || true)
}

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
  layer_problems "$dir"
}

# The checker on a scratch repository with one problem of each kind.
self_test() {
  local tmp out expected
  tmp=$(mktemp -d /tmp/posenc-check-repo.XXXXXX)
  # shellcheck disable=SC2064  # expand $tmp now
  trap "rm -rf '$tmp'" RETURN
  git -C "$tmp" init -q
  mkdir -p "$tmp/pkg" "$tmp/fuzz/corpus/get_rows" "$tmp/logs" \
    "$tmp/core/spec" "$tmp/core/plan" "$tmp/presets" "$tmp/server"
  # Includes down the layers, and from a folder above them all: fine.
  printf '#include "core/spec/s.h"\n#include "core/numerics/n.h"\n' \
    > "$tmp/core/plan/p.h"
  printf '#include "convert/c.h"\n#include "core/plan/p.h"\n' \
    > "$tmp/server/x.cc"
  # Up: the plan from a spec, the proto from a preset; a file outside the
  # layers of core/.
  printf '#include <vector>\n#include "core/plan/p.h"\n' > "$tmp/core/spec/up.h"
  printf '#include "posenc/v1/posenc.pb.h"\n' > "$tmp/presets/up.cc"
  printf '#include "core/spec/s.h"\n' > "$tmp/core/flat.h"
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
    "tracked log: logs/hp.log (git rm --cached it; *.log is ignored)" \
    "layering: core/spec/up.h includes core/plan/p.h, a higher layer (order, lowest first: ${LAYERS[*]})" \
    "layering: presets/up.cc includes posenc/v1/posenc.pb.h, a higher layer (order, lowest first: ${LAYERS[*]})" \
    "layering: core/flat.h is in no layer of core/ (move it into one of: ${LAYERS[*]})" | sort)
  if [[ $out != "$expected" ]]; then
    printf 'check-repo.sh: self-test FAILED\nexpected:\n%s\ngot:\n%s\n' \
      "$expected" "$out" >&2
    return 1
  fi
  git -C "$tmp" rm -q --cached one.txt pkg/empty.py logs/hp.log \
    core/spec/up.h presets/up.cc core/flat.h
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
echo "check-repo.sh: no tracked log, no empty file outside the allow-list, no include up the layers ($(git -C "$DIR" ls-files | wc -l) files)"
