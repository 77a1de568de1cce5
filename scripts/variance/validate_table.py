#!/usr/bin/env python3
"""Markdown table of one or more `schedlab validate -o X.json` reports (docs/validation.md):
per case real/sim AMean and CoV, error %, CoV ratio, KS p, and the median outside load of the real
runs. Usage: validate_table.py REPORT.json..."""
import json
import statistics
import sys

for path in sys.argv[1:]:
    j = json.load(open(path))
    a = j["agreement"]
    print(f"`{path.split('/')[-1]}`: started {j['started_utc']}, {j['elapsed_s']:.0f} s, load average "
          f"{j['loadavg_before']} before; {a['within_15pct']} of {a['cases']} within 15 % in AMean, "
          f"{a['within_2x_cov']} within 2x in CoV, {a['within_both']} both\n")
    print("| case | real AMean | real CoV % | sim AMean | sim CoV % | error % | CoV x | KS p | outside load % (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in j["cases"]:
        r, s = c["real"], c["sim"]
        loads = r.get("other_busy_pct", [])
        load = statistics.median(loads) if loads else float("nan")
        print(f"| `{c['command']}` | {r['mean']:.4g} {c['unit']} | {100 * r['cov']:.1f} | {s['mean']:.4g} | "
              f"{100 * s['cov']:.1f} | {c['error_pct']:+.1f} | {c['cov_ratio']:.2f} | {c['ks']['pvalue']:.3g} | {load:.0f} |")
    print()
