#!/usr/bin/env python3
"""The validate cases run in the model only, beside the real figures of a validate report
(docs/validation.md, 2026-12-03). For each case: the model's mean metric and mean voluntary /
involuntary switches of the benchmark's tasks (workload_nvcsw / workload_nivcsw) over SEEDS seeds,
and the real run's means from the report. Nothing real is run.

Usage: model_cases.py BINARY PROFILE REPORT.json SEEDS [-- EXTRA schedlab run ARGS...]
"""
import json
import statistics
import subprocess
import sys
import tempfile

binary, profile, report, seeds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
extra = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
rep = json.load(open(report))
metric_of = {"s": "time", "us/op": "usecs_per_op"}
print(f"model: {binary} --machine {profile} {' '.join(extra)} seeds 1..{seeds}; real: {report}\n")
print("| case | real | model | error % | real vol | model vol | real invol | model invol |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for case in rep["cases"]:
    cmd = case["command"].split()
    vals, vol, invol = [], [], []
    for seed in range(1, seeds + 1):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([binary, "run", "--machine", profile, "--seed", str(seed), "--json", f.name, *extra,
                            "--", *cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            j = json.load(open(f.name))
        name = metric_of[case["unit"]] if case["unit"] in metric_of else case["metric"]
        vals.append(next(m["value"] for m in j["metrics"] if m["name"] == name))
        vol.append(j["counters"].get("workload_nvcsw", 0))
        invol.append(j["counters"].get("workload_nivcsw", 0))
    real = case["real"]
    sim = statistics.mean(vals)
    err = (sim - real["mean"]) / real["mean"] * 100
    print(f"| `{case['command']}` | {real['mean']:.4g} | {sim:.4g} | {err:+.1f} | "
          f"{statistics.mean(real['voluntary_switches']):.0f} | {statistics.mean(vol):.0f} | "
          f"{statistics.mean(real['involuntary_switches']):.0f} | {statistics.mean(invol):.0f} |")
