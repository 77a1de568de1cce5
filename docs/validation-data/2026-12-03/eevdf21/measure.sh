#!/bin/bash
# usage: measure.sh BINARY LABEL OUTTSV   (run from the repository root)
# The 10 validate cases on host-1253.toml, seeds 1-3, in two configurations: the profile as it is
# ("profile": base slice 2.25 ms, DELAY_DEQUEUE off) and as the host's kernel runs
# ("host": --set tunables.base_slice_ns=1400000 --features DELAY_DEQUEUE). One TSV row per run:
# label, case, config, seed, metric value, unit, workload_nvcsw, workload_nivcsw.
B=$1; LABEL=$2; OUT=$3; M=docs/validation-data/2026-12-03/host-1253.toml
J=${TMPDIR:-/tmp}/eevdf21-m-$$.json
CASES=("hackbench -g 1 -l 200" "hackbench -g 2 -l 200" "hackbench -T -g 1 -l 200" "hackbench -T -g 2 -l 200" "hackbench -p -g 1 -l 200" "hackbench -p -g 2 -l 200" "hackbench -p -T -g 1 -l 200" "hackbench -p -T -g 2 -l 200" "perf bench sched pipe -l 20000" "perf bench sched pipe -l 20000 -T" "taskset -c 0 hackbench -g 1 -l 200")
for c in "${CASES[@]}"; do for cfg in profile host; do for s in 1 2 3; do
  FA=(); [ $cfg = host ] && FA=(--set tunables.base_slice_ns=1400000 --features DELAY_DEQUEUE)
  $B run --seed $s --machine $M "${FA[@]}" --json $J -- $c >/dev/null
  python3 -c "
import json,sys;d=json.load(open(sys.argv[5]));m=d['metrics'][0];c=d['counters']
print('\t'.join(map(str,[sys.argv[1],sys.argv[2],sys.argv[3],sys.argv[4],m['value'],m['unit'],c['workload_nvcsw'],c['workload_nivcsw']])))" "$LABEL" "$c" $cfg $s $J >> $OUT
done; done; done
rm -f $J
