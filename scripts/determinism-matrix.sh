#!/usr/bin/env bash
# The determinism matrix: a fixed set of short simulated runs whose outputs a refactor that
# should not change behaviour must reproduce byte for byte (stdout, the --json file, the exit
# status and, for the trace cases, the trace file).
#
#   scripts/determinism-matrix.sh record BINARY DIR [-j JOBS] [--only REGEX]
#       runs every case with BINARY and writes its outputs into DIR (created; must be empty or
#       absent), plus DIR/cases.txt (the case list) and DIR/binary.txt (what recorded it)
#   scripts/determinism-matrix.sh check BINARY DIR [-j JOBS] [--only REGEX] [--keep NEWDIR]
#       re-runs every case with BINARY into a temporary directory (NEWDIR with --keep) and
#       compares each output file with DIR byte for byte; prints one line per case that differs
#       (and which files), then a summary; exit status 0 if all are identical, 1 otherwise
#   scripts/determinism-matrix.sh list
#       prints the cases, one per line: ID, then the schedlab arguments
#
# The matrix: every profile in profiles/ x every benchmark (and the hackbench -p -T, schbench
# -R, taskset variants, two rt-app use cases) x 3 feature sets (kernel defaults; the three RFC
# mechanisms on; older / switched-off paths) x 2 seeds; plus a few cases for --check, the three
# trace formats, --idle-disable and idle=poll. Each case runs in its own directory (DIR/ID.d,
# compared too: rt-app writes its logs there). JOBS defaults to the number of CPUs; the outputs
# do not depend on it.
#
# SCHEDLAB_MATRIX_EXTRA: arguments added to every `schedlab run` (before the case's own), e.g.
# SCHEDLAB_MATRIX_EXTRA=--cold to check that a binary with a new default keeps the old output
# behind a flag (record with the old binary, check with the new one and the flag).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
mapfile -t PROFILES < <(cd "$ROOT/profiles" && ls *.toml | sed 's/\.toml$//')
# name|benchmark command line
BENCHES=(
  "hackbench|hackbench -g 4 -l 100"
  "hackbench-pT|hackbench -p -T -g 2 -l 100"
  "pipe|perf bench sched pipe -l 5000"
  "ipistorm|ipistorm numipi=2000 single=1 offset=2 cpulist=0-1 wait=1"
  "tbench|tbench -t 1 2"
  "schbench|schbench -m 2 -t 4 -r 1"
  "schbench-rps|schbench -m 1 -t 4 -R 2000 -r 1"
  "netperf|netperf -t TCP_RR -l 1 --instances=2"
  "taskset|taskset -c 0-2 hackbench -g 1 -f 4 -l 200"
  "rtapp-periodic|rt-app $ROOT/tests/workload/rtapp/periodic.json"
  "rtapp-sync|rt-app $ROOT/tests/workload/rtapp/sync.json"
)
# name|--features value
FEATURES=(
  "default|"
  "rfc|SM_IDLE,IDLE_CPUMASK,IDLE_SPIN"
  "alt|NO_SIS_UTIL,SIS_PROP,IDLE_CPUMASK,NO_TTWU_QUEUE,NO_WA_IDLE,NO_WA_BIAS,NO_WAKEUP_PREEMPTION,NO_NEWIDLE_BALANCE"
)
SEEDS=(1 2)

# Prints the cases: ID<TAB>arguments to `schedlab run` (before --json), then ' -- ' and the
# benchmark. Arguments are separated by single spaces and contain none.
cases() {
  local p b f s bname bcmd fname fval
  for p in "${PROFILES[@]}"; do
    for b in "${BENCHES[@]}"; do
      bname=${b%%|*}; bcmd=${b#*|}
      for f in "${FEATURES[@]}"; do
        fname=${f%%|*}; fval=${f#*|}
        for s in "${SEEDS[@]}"; do
          printf '%s\t%s\n' "$p.$bname.$fname.s$s" \
            "--machine $p --seed $s${fval:+ --features $fval} -- $bcmd"
        done
      done
    done
  done
  # Extra paths: the invariant checker (and its wasted_idle_ns), the three trace writers,
  # every idle state disabled (default_idle), idle=poll.
  local m
  for m in tiny-4 epyc-milan-2s; do
    printf '%s\t%s\n' "$m.hackbench.check" "--machine $m --check -- hackbench -g 2 -l 50"
    printf '%s\t%s\n' "$m.pipe.rfc.check" \
      "--machine $m --check --features SM_IDLE,IDLE_CPUMASK,IDLE_SPIN -- perf bench sched pipe -l 2000"
  done
  printf '%s\t%s\n' "tiny-4.netperf.check" "--machine tiny-4 --check -- netperf -t TCP_RR -l 1"
  printf '%s\t%s\n' "tiny-4.hackbench.trace-txt" "--machine tiny-4 --trace @TRACE@.txt -- hackbench -g 1 -l 50"
  printf '%s\t%s\n' "tiny-4.pipe.trace-json" "--machine tiny-4 --trace @TRACE@.json --features IDLE_SPIN -- perf bench sched pipe -l 500"
  printf '%s\t%s\n' "tiny-4.ipistorm.trace-dat" "--machine tiny-4 --trace @TRACE@.dat --features SM_IDLE -- ipistorm numipi=500 offset=2 cpulist=0-1"
  printf '%s\t%s\n' "epyc-milan-2s.hackbench.trace-json" "--machine epyc-milan-2s --trace @TRACE@.json --trace-window 0.001,0.002 -- hackbench -g 2 -l 50"
  printf '%s\t%s\n' "tiny-4.hackbench.idle-disable" "--machine tiny-4 --idle-disable POLL,C1,C6 -- hackbench -g 2 -l 50"
  printf '%s\t%s\n' "spr-2s.pipe.idle-poll" "--machine spr-2s --set tunables.idle_poll=true -- perf bench sched pipe -l 2000"
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# stdin without `schedlab run`'s progress lines ("run: 40% done, ETA 3s", "run: 0.759 s
# simulated, 3801088 events"), which are printed by wall time.
drop_progress() {
  grep -Ev '^run: ([0-9]+% done(, ETA [0-9hms]+)?|[0-9.]+ s simulated, [0-9]+ events)$' || true
}

# One case: run it and keep stdout, stderr, the exit status, the JSON and any trace file.
run_one() {
  local bin=$1 dir=$2 id=$3 args=$4
  dir=$(cd "$dir" && pwd)
  args=${args//@TRACE@/$dir/$id.trace}
  local pre=${args%% -- *} post=${args#* -- }
  local rc=0
  mkdir -p "$dir/$id.d"
  # shellcheck disable=SC2086  # the arguments are space-separated by construction
  (cd "$dir/$id.d" && "$bin" run ${SCHEDLAB_MATRIX_EXTRA:-} $pre --json "$dir/$id.json" -- $post) \
    >"$dir/$id.out" 2>"$dir/$id.err" || rc=$?
  echo "$rc" >"$dir/$id.rc"
}

run_all() {
  local bin=$1 dir=$2 jobs=$3 only=$4
  mkdir -p "$dir"
  cases | { if [ -n "$only" ]; then grep -E "$only" || true; else cat; fi; } >"$dir/cases.txt"
  local n
  n=$(wc -l <"$dir/cases.txt")
  [ "$n" -gt 0 ] || { echo "determinism-matrix: no case matches '$only'" >&2; exit 2; }
  echo "determinism-matrix: $n cases with $bin ($jobs jobs) -> $dir" >&2
  local self
  self=$(readlink -f "$0")
  tr '\t' '\n' <"$dir/cases.txt" | tr '\n' '\0' |
    xargs -0 -n 2 -P "$jobs" bash "$self" _one "$bin" "$dir"
}

[ $# -ge 1 ] || usage
mode=$1; shift
case $mode in
  _one) run_one "$@"; exit 0 ;;
  list) cases; exit 0 ;;
  record|check) ;;
  *) usage ;;
esac
[ $# -ge 2 ] || usage
BIN=$(readlink -f "$1"); DIR=$2; shift 2
JOBS=$(nproc); ONLY=""; KEEP=""
while [ $# -gt 0 ]; do
  case $1 in
    -j) JOBS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ -x "$BIN" ] || { echo "determinism-matrix: $BIN is not an executable" >&2; exit 2; }

if [ "$mode" = record ]; then
  if [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
    echo "determinism-matrix: $DIR is not empty" >&2; exit 2
  fi
  start=$SECONDS
  run_all "$BIN" "$DIR" "$JOBS" "$ONLY"
  { echo "$BIN"; sha256sum "$BIN" | cut -d' ' -f1; date -u +%FT%TZ; } >"$DIR/binary.txt"
  fails=$(grep -lv '^0$' "$DIR"/*.rc | wc -l || true)
  echo "determinism-matrix: recorded $(wc -l <"$DIR/cases.txt") cases in $((SECONDS - start)) s" \
       "($fails with a non-zero exit status)" >&2
  exit 0
fi

# check
[ -f "$DIR/cases.txt" ] || { echo "determinism-matrix: $DIR has no recorded matrix" >&2; exit 2; }
if [ -n "$KEEP" ]; then
  if [ -d "$KEEP" ] && [ -n "$(ls -A "$KEEP")" ]; then
    echo "determinism-matrix: $KEEP is not empty" >&2; exit 2
  fi
  NEW=$KEEP
else
  NEW=$(mktemp -d)
  trap 'rm -rf "$NEW"' EXIT
fi
start=$SECONDS
run_all "$BIN" "$NEW" "$JOBS" "$ONLY"
ndiff=0; ncase=0
while IFS=$'\t' read -r id _; do
  ncase=$((ncase + 1))
  bad=""
  for suffix in .out .err .rc .json .trace.txt .trace.json .trace.dat; do
    a=$DIR/$id$suffix b=$NEW/$id$suffix
    [ -e "$a" ] || [ -e "$b" ] || continue
    if [ ! -e "$a" ] || [ ! -e "$b" ]; then bad="$bad ${suffix#.}"; continue; fi
    if [ "$suffix" = .err ]; then
      # Error text may name the output paths, which differ between the two directories; the
      # progress lines of a run that takes more than a few wall seconds (RunProgress, run.cpp)
      # depend on the machine's speed and load, not on the model, and are left out.
      cmp -s <(sed "s#$DIR#@DIR@#g" "$a" | drop_progress) <(sed "s#$NEW#@DIR@#g" "$b" | drop_progress) ||
        bad="$bad err"
    elif ! cmp -s "$a" "$b"; then
      bad="$bad ${suffix#.}"
    fi
  done
  if ! diff -r -q "$DIR/$id.d" "$NEW/$id.d" >/dev/null 2>&1; then bad="$bad files"; fi
  if [ -n "$bad" ]; then
    echo "differs: $id (${bad# })"
    ndiff=$((ndiff + 1))
  fi
done <"$NEW/cases.txt"
echo "determinism-matrix: $ndiff of $ncase cases differ ($((SECONDS - start)) s)"
[ "$ndiff" -eq 0 ]
