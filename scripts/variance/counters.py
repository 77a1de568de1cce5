#!/usr/bin/env python3
# The validate cases with the kernel's own counters (docs/variance.md): per run the metric, and
# from `perf stat -a` (context switches, migrations) and /proc/interrupts deltas (RES = reschedule
# IPIs, CAL = function-call IPIs, LOC = local timer) what the real kernel did, with the machine's
# busy share in the second before. Compare with `schedlab run --machine host -- CASE` (ctxsw,
# migrations, ipi_resched, ipi_callfunc). Usage: counters.py RUNS_PER_CASE [FILTER]
import json, re, subprocess, sys, time

CASES = [
    "hackbench -g 1 -l 200", "hackbench -g 2 -l 200", "hackbench -T -g 1 -l 200", "hackbench -T -g 2 -l 200",
    "hackbench -p -g 1 -l 200", "hackbench -p -g 2 -l 200", "hackbench -p -T -g 1 -l 200",
    "hackbench -p -T -g 2 -l 200", "perf bench sched pipe -l 20000", "perf bench sched pipe -l 20000 -T",
]


def irqs():
    out = {}
    for line in open("/proc/interrupts").read().splitlines()[1:]:
        f = line.split()
        if f and f[0].rstrip(":") in ("RES", "CAL", "LOC", "TLB"):
            out[f[0].rstrip(":")] = [int(x) for x in f[1:3]]
    return out


def busy(interval=1.0):
    a = list(map(int, open("/proc/stat").readline().split()[1:9]))
    time.sleep(interval)
    b = list(map(int, open("/proc/stat").readline().split()[1:9]))
    d = [y - x for x, y in zip(a, b)]
    return 100.0 * (sum(d) - d[3] - d[4]) / max(1, sum(d))


n = int(sys.argv[1])
flt = sys.argv[2] if len(sys.argv) > 2 else ""
for case in [c for c in CASES if flt in c]:
    for _ in range(n):
        bb = busy()
        i0 = irqs()
        p = subprocess.run(["perf", "stat", "-a", "-A", "-x,", "-e", "context-switches,cpu-migrations", "--"] + case.split(),
                           capture_output=True, text=True)
        i1 = irqs()
        s = p.stdout + p.stderr
        m = re.search(r"^Time:\s*([0-9.]+)", s, re.M) or re.search(r"([0-9.]+)\s+usecs/op", s)
        cs = [int(x) for x in re.findall(r"^CPU\d+,(\d+),,context-switches", s, re.M)]
        mig = [int(x) for x in re.findall(r"^CPU\d+,(\d+),,cpu-migrations", s, re.M)]
        print(json.dumps({"case": case, "value": float(m.group(1)) if m else None, "busy_before": round(bb, 1),
                          "ctxsw": cs, "migrations": mig,
                          **{k: [b - a for a, b in zip(i0[k], i1[k])] for k in i1}}), flush=True)
