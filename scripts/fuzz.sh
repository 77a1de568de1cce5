#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-sanitize/ and runs each for a bounded
# time: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s, every target)
#       scripts/fuzz.sh --configure   only configures that build (what `make test-sanitize` uses:
#                                      the sanitized test suite and the fuzzers share one build)
# The committed seeds (fuzz/corpus/<name>/) are read only; what a run adds goes to
# build-sanitize/corpus/<name>/ and is kept for the next run. A crash, a sanitizer report, a leak or
# a timeout stops that target, leaves the reproducer in build-sanitize/artifacts/ and fails the
# script. Environment: FUZZ_BUILD (build-sanitize), FUZZ_JOBS (parallel build jobs), FUZZ_TIMEOUT
# (seconds for one input before it counts as a hang, 20), FUZZ_RSS_MB (memory limit, 2048),
# FUZZ_CXX/FUZZ_CC (clang++/clang), FUZZ_CMAKE_FLAGS (more cmake options).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FUZZ_BUILD:-build-sanitize}
jobs=${FUZZ_JOBS:-$(nproc)}
if [ ! -f "$build/build.ninja" ] || ! grep -q '^SCHEDLAB_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  CXX=${FUZZ_CXX:-clang++} CC=${FUZZ_CC:-clang} cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSCHEDLAB_FUZZ=ON ${FUZZ_CMAKE_FLAGS:-} >/dev/null
fi
if [ "${1:-}" = --configure ]; then exit 0; fi
secs=${1:-60}
shift || true
# One build at a time when several fuzz.sh run side by side (each then runs its own targets).
flock "$build/.build.lock" cmake --build "$build" --target fuzzers -j "$jobs"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/targets/*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
mkdir -p "$build/artifacts" "$build/logs"
failed=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  log="$build/logs/$t.log"
  # Per-target input size bound (fuzz/targets/<name>.options: libFuzzer flags, one per line).
  extra=()
  if [ -f "fuzz/targets/$t.options" ]; then mapfile -t extra < "fuzz/targets/$t.options"; fi
  if "$build/fuzz/fuzz_$t" "$corpus" "fuzz/corpus/$t" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-20}" \
       -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 \
       "${extra[@]}" >"$log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    rate=$(grep -o 'exec/s: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $t: ok, $execs inputs in ${secs}s ($rate exec/s), coverage $cov, corpus $(ls "$corpus" | wc -l)"
  else
    echo "fuzz: $t: FAILED (see $log; reproducer in $build/artifacts/)" >&2
    tail -20 "$log" >&2
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
