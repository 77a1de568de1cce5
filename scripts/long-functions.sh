#!/usr/bin/env bash
# Lists the functions in src/ longer than MAX lines (default 100), longest first:
#   LINES FILE:LINE NAME
# and exits 1 if there is one, 0 otherwise.
#
#   scripts/long-functions.sh [--max N]
#
# Functions are found by Universal Ctags (Debian's universal-ctags; its `end:` field gives where a
# definition ends), so a lambda counts as part of the function that holds it. There is no allow
# list: issue 26 split the last ten long functions into named steps, and a new one is split the
# same way. Exit status 2 on a bad argument, 77 without Universal Ctags (ctest reports
# lint.LongFunctions, which runs this, as skipped).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAX=100
while [ $# -gt 0 ]; do
  case "$1" in
    --max) MAX=${2:?--max needs a number}; shift 2 ;;
    *) echo "long-functions: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$MAX" in ''|*[!0-9]*) echo "long-functions: --max '$MAX' is not a number of lines" >&2; exit 2 ;; esac
if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "long-functions: needs Universal Ctags (apt-get install universal-ctags)" >&2
  exit 77  # ctest: skipped
fi

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

total=0
while read -r lines where name; do
  [ -n "$lines" ] || continue
  printf '%5d %s %s\n' "$lines" "$where" "$name"
  total=$((total + 1))
done <<< "$long"
echo "long-functions: $total functions in src/ over $MAX lines" >&2
[ "$total" = 0 ]
