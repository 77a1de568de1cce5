#!/usr/bin/env bash
# `make demo`: one A/B per mechanism on the default profiles, each well under a minute on 2 cores.
set -euo pipefail
SCHEDLAB=${1:-build/schedlab}
RUNS=${RUNS:-10}

run() {
  echo
  printf "\n$ schedlab"; printf " %q" "$@"; echo
  "$SCHEDLAB" "$@"
}

echo "schedlab demo: three scheduler changes, ${RUNS} seeded runs per side (run i of both sides uses seed i)."

# 1. SM_IDLE: the SM_IDLE posting's own ipistorm line (single=1 offset=8 cpulist=8 wait=1; the
#    numipi count is ours), C2 disabled as there: CPU 8 calls CPU 16 back to back. A call either
#    finds CPU 16 polling (a TIF_NEED_RESCHED kick, run by do_idle()'s flush: csd_run_idle) or not
#    (inside schedule_idle() with interrupts off, or in a state's bookkeeping: an IPI, csd_run_ipi).
#    Without the fast path each kick runs pick_next_task() and a newidle attempt with interrupts
#    off (irqs_off_ns); newidle_balance_walks counts the ones past their gates. The key counters
#    are CPU 16's (--counters-cpu).
run ab --machine epyc-milan-2s --idle-disable C2 --base "" --test SM_IDLE --runs "$RUNS" \
  --counters-cpu 16 -- ipistorm numipi=100000 single=1 offset=8 cpulist=8 wait=1

# 2. IDLE_CPUMASK: wakeups on a big, mostly busy LLC (Sapphire Rapids: 120 CPUs per LLC) scan
#    only the CPUs whose idle bit is set.
run ab --machine spr-2s --base "" --test IDLE_CPUMASK --runs "$RUNS" \
  -- hackbench -g 12 -l 100

# 3. IDLE_SPIN: a pipe ping-pong between two tasks on two CPUs; spinning instead of going idle
#    skips the context switch, idle entry and exit.
run ab --machine epyc-milan-2s --base "" --test IDLE_SPIN --runs "$RUNS" \
  -- perf bench sched pipe -l 20000
