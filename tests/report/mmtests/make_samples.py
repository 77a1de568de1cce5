#!/usr/bin/env python3
"""Constructs raw samples whose mmtests summary is a table posted on LKML, so that the golden test
(tests/report/mmtests_test.cpp) feeds real-looking samples through schedlab's mmtests code and
compares the output with the posted bytes.

The posting gives only the summary (Min, Amean, Stddev, CoeffVar, Max, BAmean-50/95/99 at 4
decimals and the percentages at 2). This script searches (seeded, deterministic) for n = 100
values per set whose statistics, computed as mmtests computes them (sorted best first, sample
standard deviation, BAmean-p = mean of the best int(n p / 100) values), print exactly as posted.
It only has to hit the posted rounding; the C++ test then checks the whole table independently.

Source: Bharata B Rao, "[RFC PATCH v0 0/3] sched/numa: Process Adaptive autoNUMA",
Message-ID <20220128052851.17162-1-bharata@amd.com>, 2022-01-28, table
"hackbench-process-pipes" (two kernels, hackbench-default and hackbench-pan; one operation, 256
groups). n = 100 follows from the table itself: Max = 100 Amean - 99 BAmean-99 holds for both sets
to the printed precision (and for no other n near it).

Usage: make_samples.py > hackbench_pan_samples.txt   (Python 3 standard library only)
"""
import math
import random

N = 100
BEST = (50, 95, 99)
# Posted summary per set: min, amean, stddev, coeffvar, max, bamean-50, -95, -99.
POSTED = {
    "hackbench-default": (23.5510, 24.4604, 0.4420, 1.8072, 25.4930, 24.1074, 24.4111, 24.4499),
    "hackbench-pan": (23.1900, 24.0353, 0.7611, 3.1666, 30.5450, 23.6616, 23.9308, 23.9696),
}
POSTED_PCT = (1.53, 1.74, -72.18, -75.22, -19.82, 1.85, 1.97, 1.96)  # of pan against default


def stats(xs):
    s = sorted(xs)  # lower is better: ascending, summed in that order
    n = len(s)
    tot = 0.0
    for x in s:
        tot += x
    mean = tot / n
    d = 0.0
    for x in s:
        d += (x - mean) ** 2
    sd = math.sqrt(d / (n - 1))
    best = []
    for p in BEST:
        k = max(1, n * p // 100)
        t = 0.0
        for x in s[:k]:
            t += x
        best.append(t / k)
    return (s[0], mean, sd, sd * 100 / mean, s[-1], *best)


def pndiff(v, b):
    if v == b:
        return 0.0
    if v == 0:
        return 100.0
    if b == 0:
        return -99.0
    return 100 - (v * 100 / b)


def build(mn, mx, b50, b95, b99, c, s):
    m1 = (50 * b50 - mn) / 49
    m2 = (95 * b95 - 50 * b50) / 45
    m3 = (99 * b99 - 95 * b95) / 4
    xs = [mn]
    for g, (m, k) in enumerate(((m1, 49), (m2, 45), (m3, 4))):
        w = s * c[g]
        for i in range(k):
            xs.append(m + w * (-1 + 2 * i / (k - 1)))
    xs.append(mx)
    return xs, (m1, m2, m3)


def feasible(xs, mn, mx):
    s = xs[:]
    return all(s[i] <= s[i + 1] for i in range(len(s) - 1)) and s[0] == mn and s[-1] == mx


def solve(label, rng):
    mn, a, sd, cv, mx, p50, p95, p99 = POSTED[label]
    want = [f"{v:.4f}" for v in POSTED[label]]
    for _ in range(200000):
        b50 = p50 + rng.uniform(-5e-5, 5e-5)
        b95 = p95 + rng.uniform(-5e-5, 5e-5)
        b99 = p99 + rng.uniform(-5e-5, 5e-5)
        c = (rng.uniform(0.2, 1), rng.uniform(0.2, 1), rng.uniform(0.01, 1))
        # Bisect the spread scale for the target standard deviation.
        target = sd + rng.uniform(-5e-5, 5e-5)
        lo, hi = 0.0, 2.0
        for _ in range(60):
            mid = (lo + hi) / 2
            xs, _m = build(mn, mx, b50, b95, b99, c, mid)
            if stats(xs)[2] < target:
                lo = mid
            else:
                hi = mid
        xs, _m = build(mn, mx, b50, b95, b99, c, lo)
        xs = [float(f"{x:.9f}") for x in xs[1:-1]]
        xs = [mn] + xs + [mx]
        if not feasible(xs, mn, mx):
            continue
        got = [f"{v:.4f}" for v in stats(xs)]
        if got == want:
            yield xs


def main():
    rng = random.Random(20220128)
    base_gen = solve("hackbench-default", rng)
    for base in base_gen:
        sb = stats(base)
        for _ in range(50):
            test = next(solve("hackbench-pan", rng))
            st = stats(test)
            pct = [f"{pndiff(v, b):.2f}" for v, b in zip(st, sb)]
            if pct == [f"{p:.2f}" for p in POSTED_PCT]:
                print("# Samples whose mmtests summary is the hackbench-process-pipes table of")
                print("# <20220128052851.17162-1-bharata@amd.com>; written by make_samples.py.")
                for label, xs in (("hackbench-default", base), ("hackbench-pan", test)):
                    print(f"[{label}]")
                    for x in xs:
                        print(repr(x))
                return
    raise SystemExit("no samples found")


main()
