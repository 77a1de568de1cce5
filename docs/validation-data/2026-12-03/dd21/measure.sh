#!/bin/bash
# usage: measure.sh BINARY OUTTSV
B=$1; OUT=$2; M=docs/validation-data/2026-12-03/host-1253.toml
: > $OUT
CASES=("hackbench -g 1 -l 200" "hackbench -g 2 -l 200" "hackbench -T -g 1 -l 200" "hackbench -T -g 2 -l 200" "hackbench -p -g 1 -l 200" "hackbench -p -g 2 -l 200" "hackbench -p -T -g 1 -l 200" "hackbench -p -T -g 2 -l 200" "perf bench sched pipe -l 20000" "perf bench sched pipe -l 20000 -T")
for c in "${CASES[@]}"; do for f in off DELAY_DEQUEUE; do for s in 1 2 3; do
  FA=(); [ $f != off ] && FA=(--features $f)
  $B run --seed $s --machine $M "${FA[@]}" --json ${TMPDIR:-/tmp}/dd21-m.json -- $c >/dev/null
  python3 -c "
import json,sys;d=json.load(open('${TMPDIR:-/tmp}/dd21-m.json'));m=d['metrics'][0];c=d['counters']
print('\t'.join(map(str,[sys.argv[1],sys.argv[2],sys.argv[3],m['value'],m['unit'],c['workload_nvcsw'],c['workload_nivcsw']])))" "$c" $f $s >> $OUT
done; done; done
