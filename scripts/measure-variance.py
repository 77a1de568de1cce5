#!/usr/bin/env python3
"""Run-to-run variation of the real benchmarks `schedlab validate` uses (docs/variance.md).

Runs the validate cases ROUNDS times, interleaved (one run of each case per round, so slow drift
of the host hits every case alike), and records per run: the metric, the wall time, the run's own
CPU time (wait4 rusage of the benchmark), the machine's busy time during the run from /proc/stat,
and so the busy share of *other* processes, plus the load average before. Before each round it
waits (up to --max-wait s) until the machine is quiet: a 2 s /proc/stat sample, taken while this
script sleeps, shows less than --quiet %% busy. (The load average is no use for this: the
benchmarks' own 40-80 tasks keep it high for minutes.) The load is recorded either way.

Output: one JSON object per run, one per line (--output), and a summary table on stdout
(per case: n, mean, CoV, min, quantiles, bimodality coefficient; runs with other-busy above
--busy-limit are also summarised apart).

  scripts/measure-variance.py --rounds 30 --output /tmp/runs.jsonl
  scripts/measure-variance.py --summary /tmp/runs.jsonl      # only the table, from a file
"""
import argparse, json, math, os, re, subprocess, sys, time

CASES = [
    ["hackbench", "-g", "1", "-l", "200"],
    ["hackbench", "-g", "2", "-l", "200"],
    ["hackbench", "-T", "-g", "1", "-l", "200"],
    ["hackbench", "-T", "-g", "2", "-l", "200"],
    ["hackbench", "-p", "-g", "1", "-l", "200"],
    ["hackbench", "-p", "-g", "2", "-l", "200"],
    ["hackbench", "-p", "-T", "-g", "1", "-l", "200"],
    ["hackbench", "-p", "-T", "-g", "2", "-l", "200"],
    ["perf", "bench", "sched", "pipe", "-l", "20000"],
    ["perf", "bench", "sched", "pipe", "-l", "20000", "-T"],
]
USER_HZ = os.sysconf("SC_CLK_TCK")


def loadavg():
    return float(open("/proc/loadavg").read().split()[0])


def cpu_jiffies():
    f = open("/proc/stat").readline().split()
    v = list(map(int, f[1:9]))  # user nice system idle iowait irq softirq steal
    return sum(v), v[3] + v[4], v[7]


def metric(out):
    m = re.search(r"^Time:\s*([0-9.]+)", out, re.M)
    if m:
        return float(m.group(1))
    m = re.search(r"([0-9.]+)\s+usecs/op", out)
    if m:
        return float(m.group(1))
    return None


def busy_pct(interval=2.0):
    tot0, idle0, _ = cpu_jiffies()
    time.sleep(interval)
    tot1, idle1, _ = cpu_jiffies()
    return 100.0 * ((tot1 - tot0) - (idle1 - idle0)) / max(1, tot1 - tot0)


def run_once(argv):
    la = loadavg()
    tot0, idle0, steal0 = cpu_jiffies()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    tot1, idle1, steal1 = cpu_jiffies()
    busy_s = ((tot1 - tot0) - (idle1 - idle0)) / USER_HZ
    own_s = ru.ru_utime + ru.ru_stime
    ncpu = os.cpu_count()
    return {
        "cmd": " ".join(argv), "value": metric(out), "status": status, "wall_s": wall,
        "own_cpu_s": own_s, "busy_s": busy_s,
        "other_busy_pct": max(0.0, 100 * (busy_s - own_s) / (wall * ncpu)),
        "steal_s": (steal1 - steal0) / USER_HZ, "loadavg_before": la,
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw,
    }


def quantile(xs, p):
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def describe(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / n)
    if n > 3 and sd > 0:
        g = sum((x - m) ** 3 for x in xs) / n / sd ** 3
        k = sum((x - m) ** 4 for x in xs) / n / sd ** 4 - 3
        # Sarle's bimodality coefficient (sample-size corrected); > 0.555 suggests bi/multimodality
        bc = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    else:
        g = k = bc = float("nan")
    return {"n": n, "mean": m, "cov_pct": 100 * sd / m if m else float("nan"), "min": min(xs),
            "p10": quantile(xs, .1), "p50": quantile(xs, .5), "p90": quantile(xs, .9), "max": max(xs),
            "skew": g, "bc": bc}


def summary(rows, busy_limit):
    by = {}
    for r in rows:
        if r["value"] is not None:
            by.setdefault(r["cmd"], []).append(r)
    print(f"{'case':42s} {'n':>3s} {'mean':>9s} {'CoV%':>6s} {'min':>9s} {'p10':>9s} {'p50':>9s} "
          f"{'p90':>9s} {'max':>9s} {'skew':>5s} {'BC':>5s} | quiet: {'n':>3s} {'mean':>9s} {'CoV%':>6s} "
          f"| other-busy% med")
    for cmd in [" ".join(c) for c in CASES] + sorted(set(by) - {" ".join(c) for c in CASES}):
        if cmd not in by:
            continue
        rs = by[cmd]
        d = describe([r["value"] for r in rs])
        q = [r["value"] for r in rs if r["other_busy_pct"] <= busy_limit]
        dq = describe(q) if len(q) >= 2 else {"n": len(q), "mean": float("nan"), "cov_pct": float("nan")}
        ob = quantile([r["other_busy_pct"] for r in rs], .5)
        print(f"{cmd:42s} {d['n']:3d} {d['mean']:9.4f} {d['cov_pct']:6.1f} {d['min']:9.4f} {d['p10']:9.4f} "
              f"{d['p50']:9.4f} {d['p90']:9.4f} {d['max']:9.4f} {d['skew']:5.2f} {d['bc']:5.2f} | "
              f"{dq['n']:3d} {dq['mean']:9.4f} {dq['cov_pct']:6.1f} | {ob:5.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--output", default="variance-runs.jsonl")
    ap.add_argument("--only", default="", help="run only cases whose command contains this")
    ap.add_argument("--quiet", type=float, default=10.0, help="wait until the machine is below this busy %%")
    ap.add_argument("--max-wait", type=float, default=600, help="seconds to wait for a quiet machine per round")
    ap.add_argument("--busy-limit", type=float, default=5.0, help="other-busy %% above which a run is 'loaded'")
    ap.add_argument("--summary", metavar="FILE", help="print the summary of an earlier output and exit")
    a = ap.parse_args()
    if a.summary:
        summary([json.loads(l) for l in open(a.summary) if l.strip()], a.busy_limit)
        return
    cases = [c for c in CASES if a.only in " ".join(c)]
    rows = []
    with open(a.output, "a") as out:
        for rnd in range(a.rounds):
            waited = 0.0
            while True:
                b = busy_pct()
                waited += 2
                if b < a.quiet or waited >= a.max_wait:
                    break
            for c in cases:
                r = run_once(c)
                r["round"] = rnd
                r["waited_s"] = waited
                r["busy_pct_before"] = b
                rows.append(r)
                out.write(json.dumps(r) + "\n")
                out.flush()
            print(f"round {rnd + 1}/{a.rounds} done (busy before {b:.1f}%, load {loadavg():.2f}, waited {waited:.0f} s)", file=sys.stderr)
    summary(rows, a.busy_limit)


if __name__ == "__main__":
    main()
