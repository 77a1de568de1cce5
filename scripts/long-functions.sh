#!/usr/bin/env bash
# Lists the functions in src/ longer than MAX lines (default 100), longest first:
#   LINES FILE:LINE NAME
# and exits 1 if one of them is not in the allow list, 0 otherwise.
#
#   scripts/long-functions.sh [--max N] [--allow FILE] [--all]
#
# Functions are found by Universal Ctags (Debian's universal-ctags; its `end:` field gives where a
# definition ends), so a lambda counts as part of the function that holds it. The allow list
# (default scripts/long-functions.allow) names the functions still waiting to be split, one
# `FILE NAME` a line: issue 26 wants it empty. --all lists allowed functions as well as new ones
# (marked "new"); without it only the new ones are printed. Exit status 2 on a bad argument, 77
# without Universal Ctags (ctest reports lint.LongFunctions, which runs this, as skipped).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAX=100
ALLOW="$ROOT/scripts/long-functions.allow"
ALL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --max) MAX=${2:?--max needs a number}; shift 2 ;;
    --allow) ALLOW=${2:?--allow needs a file}; shift 2 ;;
    --all) ALL=1; shift ;;
    *) echo "long-functions: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$MAX" in ''|*[!0-9]*) echo "long-functions: --max '$MAX' is not a number of lines" >&2; exit 2 ;; esac
if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "long-functions: needs Universal Ctags (apt-get install universal-ctags)" >&2
  exit 77  # ctest: skipped
fi
[ -r "$ALLOW" ] || { echo "long-functions: cannot read the allow list $ALLOW" >&2; exit 2; }

cd "$ROOT"
# One line per long function: LINES FILE:LINE NAME.
long=$(ctags --languages=C++ --kinds-C++=f --fields=+ne -f - -R src |
  awk -F'\t' -v max="$MAX" '{
    l = ""; e = ""
    for (i = 4; i <= NF; i++) {
      if ($i ~ /^line:/) l = substr($i, 6)
      if ($i ~ /^end:/) e = substr($i, 5)
    }
    if (l != "" && e != "" && e - l + 1 > max) printf "%d %s:%s %s\n", e - l + 1, $2, l, $1
  }' | sort -k1,1nr -k2,2)

new=0
while read -r lines where name; do
  [ -n "$lines" ] || continue
  file=${where%:*}
  if grep -v '^#' "$ALLOW" | grep -qx "$file $name"; then
    [ "$ALL" = 1 ] && printf '%5d %s %s\n' "$lines" "$where" "$name"
  else
    printf '%5d %s %s  new: over %d lines\n' "$lines" "$where" "$name" "$MAX"
    new=$((new + 1))
  fi
done <<< "$long"
total=$(grep -c . <<< "$long" || true)
echo "long-functions: $total functions in src/ over $MAX lines, $new not in $(basename "$ALLOW")" >&2
[ "$new" = 0 ]
