#!/usr/bin/env bash
# -DSCHEDLAB_CHANGES_DIR=DIR (CMakeLists.txt): configures a temporary build directory with the
# example change directory, checks that its .cpp is a source of schedlab_changes (the library
# linked whole into schedlab) and compiles that object there; then checks that a missing
# directory is one clear configure error. The example's behaviour in `schedlab ab` is tested by
# tests/example/example_change_test.cpp on the binary built with the same CMake function.
#   changes_dir.sh SOURCE_DIR CMAKE GENERATOR [COMPILER_LAUNCHER]
set -euo pipefail
src=$1 cmake=$2 gen=$3 launcher=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "changes_dir.sh: FAIL: $*" >&2; exit 1; }
args=(-G "$gen" -DCMAKE_BUILD_TYPE=Release)
[[ -n $launcher ]] && args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher")

"$cmake" -S "$src" -B "$tmp/b" "${args[@]}" -DSCHEDLAB_CHANGES_DIR="$src/examples/changes" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }
grep -q "schedlab: scheduler changes from $src/examples/changes: $src/examples/changes/newidle_min_idle.cpp" \
  "$tmp/configure.log" || { cat "$tmp/configure.log"; fail "no status line naming the example"; }
# The example is compiled into schedlab_changes; the example binary is not built then.
out=$(python3 - "$tmp/b/compile_commands.json" "$src/examples/changes/newidle_min_idle.cpp" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    if e["file"] == sys.argv[2]:
        args = e["command"].split()
        print(e.get("output") or args[args.index("-o") + 1])
PY
)
[[ $out == CMakeFiles/schedlab_changes.dir/* ]] || fail "example compiled as '$out', not into schedlab_changes"
if "$cmake" --build "$tmp/b" --target help | grep -q schedlab-example-changes; then
  fail "schedlab-example-changes defined although SCHEDLAB_CHANGES_DIR is set"
fi
"$cmake" --build "$tmp/b" --target "$out" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "compile"; }
[[ -s $tmp/b/$out ]] || fail "no object $out"
if grep -q "warning:" "$tmp/build.log"; then cat "$tmp/build.log"; fail "warnings"; fi

# A directory that does not exist: the configure fails and says which.
if "$cmake" -S "$src" -B "$tmp/c" "${args[@]}" -DSCHEDLAB_CHANGES_DIR="$tmp/none" >"$tmp/bad.log" 2>&1; then
  fail "configure accepted a missing SCHEDLAB_CHANGES_DIR"
fi
grep -q "SCHEDLAB_CHANGES_DIR: $tmp/none is not a directory" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "error message"; }
echo "changes_dir.sh: ok ($out)"
