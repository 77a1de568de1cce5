#!/usr/bin/env python3
# usage: table.py measure.tsv  -> markdown table: per case and configuration, the mean over seeds
# of time and switches for each binary label, beside the real figures of validate-1253.txt.
import sys, collections
REAL = {  # validate-1253.txt: AMean time, mean vol / invol of 10 real runs
    "hackbench -g 1 -l 200": (0.0868, 5296, 1383), "hackbench -g 2 -l 200": (0.1406, 5892, 1837),
    "hackbench -T -g 1 -l 200": (0.0845, 6151, 1795), "hackbench -T -g 2 -l 200": (0.1431, 8106, 3199),
    "hackbench -p -g 1 -l 200": (0.0364, 5480, 1534), "hackbench -p -g 2 -l 200": (0.0527, 7164, 2607),
    "hackbench -p -T -g 1 -l 200": (0.0456, 8795, 2571), "hackbench -p -T -g 2 -l 200": (0.0577, 9299, 3558),
    "perf bench sched pipe -l 20000": (51.849, 33870, 6061), "perf bench sched pipe -l 20000 -T": (49.613, 33415, 6522),
}
rows = collections.defaultdict(list)
labels = []
for line in open(sys.argv[1]):
    lab, case, cfg, seed, val, unit, nv, niv = line.rstrip("\n").split("\t")
    if lab not in labels: labels.append(lab)
    rows[(case, cfg, lab)].append((float(val), int(nv), int(niv)))
cases = list(dict.fromkeys(k[0] for k in rows))
def mean(xs): return sum(xs) / len(xs)
print("| case | config | real time | " + " | ".join(f"{l} time (err %)" for l in labels) +
      " | real vol / invol | " + " | ".join(f"{l} vol / invol (x real)" for l in labels) + " |")
print("|---|---|---:|" + "---:|" * len(labels) + "---:|" + "---:|" * len(labels))
for case in cases:
    for cfg in ("profile", "host"):
        r = REAL.get(case)
        cells_t, cells_s = [], []
        for l in labels:
            v = rows.get((case, cfg, l))
            if not v: cells_t.append("-"); cells_s.append("-"); continue
            t = mean([x[0] for x in v]); nv = mean([x[1] for x in v]); niv = mean([x[2] for x in v])
            err = f" ({(t - r[0]) / r[0] * 100:+.1f})" if r else ""
            cells_t.append(f"{t:.4g}{err}")
            xs = f" ({nv / r[1]:.2f} / {niv / r[2]:.2f})" if r else ""
            cells_s.append(f"{nv:.0f} / {niv:.0f}{xs}")
        rt = f"{r[0]:g}" if r else "-"
        rs = f"{r[1]} / {r[2]}" if r else "-"
        print(f"| `{case}` | {cfg} | {rt} | " + " | ".join(cells_t) + f" | {rs} | " + " | ".join(cells_s) + " |")
