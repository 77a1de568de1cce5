#!/usr/bin/env bash
# `make demo`: one A/B per mechanism on the default profiles, each well under a minute on 2 cores.
set -euo pipefail
SCHEDLAB=${1:-build/schedlab}
RUNS=${RUNS:-10}

run() {
  echo
  echo "\$ schedlab $*"
  "$SCHEDLAB" "$@"
}

echo "schedlab demo: three scheduler changes, ${RUNS} seeded runs per side (run i of both sides uses seed i)."

# 1. SM_IDLE: a call-function storm into an idle (polling) CPU, as ipistorm does. Without the fast
#    path every kick runs pick_next_task() and a newidle balance attempt before going back to idle.
run ab --machine epyc-milan-2s --base "" --test SM_IDLE --runs "$RUNS" \
  -- ipistorm numipi=20000 single=1 offset=1 cpulist=0 wait=1

# 2. IDLE_CPUMASK: wakeups on a big, mostly busy LLC (Sapphire Rapids: 120 CPUs per LLC) scan
#    only the CPUs whose idle bit is set.
run ab --machine spr-2s --base "" --test IDLE_CPUMASK --runs "$RUNS" \
  -- hackbench -g 12 -l 100

# 3. IDLE_SPIN: a pipe ping-pong between two tasks on two CPUs; spinning instead of going idle
#    skips the context switch, idle entry and exit.
run ab --machine epyc-milan-2s --base "" --test IDLE_SPIN --runs "$RUNS" \
  -- perf bench sched pipe -l 20000
