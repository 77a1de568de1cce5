#!/usr/bin/env python3
"""The validate cases in the model only, before and after a model change, beside the real figures of a
validate report: 'before' is OLD_BINARY on PROFILE (its switch counts are the report's simulated ones
for the same seeds, which the script checks by comparing the times: an old binary's --json may not
carry workload_nvcsw), 'after: parity' NEW_BINARY on PROFILE, 'after: + remote' NEW_BINARY on
PROFILE_REMOTE. Nothing real is run (docs/validation-data/2026-12-03/ctx21-notes.md).

Usage: model_before_after.py OLD_BINARY NEW_BINARY REPORT.json PROFILE PROFILE_REMOTE SEEDS
"""
import json, statistics, subprocess, sys, tempfile
main_bin, new_bin, report, prof_before, prof_remote, SEEDS = sys.argv[1:7]
SEEDS = int(SEEDS)
rep = json.load(open(report))
metric_of = {"s": "time", "us/op": "usecs_per_op"}
def run(binary, profile, cmd, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([binary, "run", "--machine", profile, "--seed", str(seed), "--json", f.name, "--", *cmd],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(f.name))
rows = []
for case in rep["cases"]:
    cmd = case["command"].split()
    name = metric_of.get(case["unit"], case["metric"])
    real = case["real"]
    out = {"cmd": case["command"], "real": real["mean"], "rv": statistics.mean(real["voluntary_switches"]),
           "ri": statistics.mean(real["involuntary_switches"])}
    # before
    vals = []
    for s in range(1, SEEDS + 1):
        j = run(main_bin, prof_before, cmd, s)
        vals.append(next(m["value"] for m in j["metrics"] if m["name"] == name))
    rs = case["sim"]["samples"][:SEEDS]
    same = all(abs(a - b) < 1e-9 * max(1, abs(b)) for a, b in zip(vals, rs))
    out["b"] = statistics.mean(vals)
    out["bv"] = statistics.mean(case["sim"]["voluntary_switches"][:SEEDS])
    out["bi"] = statistics.mean(case["sim"]["involuntary_switches"][:SEEDS])
    out["bsame"] = same
    for tag, prof in (("a", prof_before), ("c", prof_remote)):
        vals, v, i = [], [], []
        for s in range(1, SEEDS + 1):
            j = run(new_bin, prof, cmd, s)
            vals.append(next(m["value"] for m in j["metrics"] if m["name"] == name))
            v.append(j["counters"].get("workload_nvcsw", 0))
            i.append(j["counters"].get("workload_nivcsw", 0))
        out[tag], out[tag + "v"], out[tag + "i"] = statistics.mean(vals), statistics.mean(v), statistics.mean(i)
    rows.append(out)
    print(out, file=sys.stderr)
e = lambda x, r: f"{(x - r) / r * 100:+.0f}"
print("| case | real | before | after: parity | after: + remote | real vol / invol | before | after: parity | after: + remote |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for o in rows:
    print(f"| `{o['cmd']}` | {o['real']:.4g} | {o['b']:.4g} ({e(o['b'], o['real'])} %) | {o['a']:.4g} ({e(o['a'], o['real'])} %) | "
          f"{o['c']:.4g} ({e(o['c'], o['real'])} %) | {o['rv']:.0f} / {o['ri']:.0f} | {o['bv']:.0f} / {o['bi']:.0f} | "
          f"{o['av']:.0f} / {o['ai']:.0f} | {o['cv']:.0f} / {o['ci']:.0f} |")
within = lambda k: sum(abs(o[k] - o['real']) / o['real'] <= 0.15 for o in rows)
print(f"\nwithin 15 % in AMean: before {within('b')}, after (parity) {within('a')}, after (+ remote) {within('c')} of {len(rows)}; "
      f"before's times equal validate-1058's simulated seeds 1-3: {all(o['bsame'] for o in rows)}")
