#!/usr/bin/python3
"""Regenerates the SciPy reference fixtures the C++ stats tests compare against.

Run with Debian 12's python3-scipy (SciPy 1.10, NumPy 1.24):
    /usr/bin/python3 tests/reference/make_fixtures.py
It writes tests/reference/scipy_fixtures.json; commit the result. CI does not run this.

Small samples are drawn with a fixed NumPy seed and stored literally (rounded to 6 decimals so
the text is exact). Large samples (n > 10000, needed for the asymptotic KS path) are not stored:
they are described by a "gen" spec that the C++ test expands the same way (SplitMix64 stream,
value = loc + scale * u with u = (x >> 11) * 2^-53, floored when "floor" is true); both sides do
the same IEEE double arithmetic, so the samples are bit-identical.
"""
import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import special, stats

MASK = (1 << 64) - 1


def splitmix_uniforms(seed, n):
    x = seed & MASK
    out = []
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z = z ^ (z >> 31)
        out.append((z >> 11) * 2.0 ** -53)
    return out


def expand(gen):
    vals = []
    for u in splitmix_uniforms(gen["seed"], gen["n"]):
        t = gen["scale"] * u
        v = gen["loc"] + t
        if gen.get("floor"):
            v = math.floor(v)
        vals.append(float(v))
    return vals


rng = np.random.default_rng(20240513)


def normal(n, loc=0.0, scale=1.0, decimals=6):
    return [float(v) for v in np.round(rng.normal(loc, scale, n), decimals)]


def ints(n, lo, hi):
    return [float(v) for v in rng.integers(lo, hi, n)]


pairs = []


def add_pair(name, a, b, a_gen=None, b_gen=None):
    pairs.append((name, a, b, a_gen, b_gen))


# Small samples: exact KS, exact MWU where there are no ties and one side <= 8.
add_pair("n1_vs_n1", [1.5], [2.5])
add_pair("tiny_3_4", normal(3), normal(4, 0.5))
add_pair("equal_5_5_shift", normal(5), normal(5, 1.0))
add_pair("equal_8_8", normal(8), normal(8, 0.3))
add_pair("equal_10_10", normal(10), normal(10, 0.8))
add_pair("unequal_7_13", normal(7, 10, 2), normal(13, 11, 2))
add_pair("unequal_8_40", normal(8), normal(40, 0.4))
add_pair("unequal_20_30", normal(20), normal(30, 0.2))
add_pair("unequal_50_37", normal(50, 100, 5), normal(37, 102, 5))
add_pair("ties_int_12_15", ints(12, 0, 5), ints(15, 1, 6))
add_pair("ties_int_6_7", ints(6, 0, 4), ints(7, 0, 4))
add_pair("ties_int_100_120", ints(100, 0, 10), ints(120, 1, 11))
add_pair("identical_9", [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0],
         [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0])
same = normal(25)
add_pair("identical_25", same, list(same))
add_pair("all_equal_values", [7.0] * 6, [7.0] * 9)
add_pair("disjoint_6_6", normal(6, 0, 1), normal(6, 100, 1))
add_pair("disjoint_30_45", normal(30, 0, 1), normal(45, 100, 1))
add_pair("disjoint_200_300", normal(200, 0, 1), normal(300, 50, 1))
add_pair("medium_200_300", normal(200), normal(300, 0.1))
add_pair("medium_1000_1500", normal(1000), normal(1500, 0.05))
add_pair("medium_2000_2000", normal(2000), normal(2000, 0.03))
add_pair("medium_3000_40", normal(3000), normal(40, 0.2))
add_pair("latency_like_500_500", [float(v) for v in np.round(rng.lognormal(3, 0.5, 500), 3)],
         [float(v) for v in np.round(rng.lognormal(2.95, 0.5, 500), 3)])


def gen(seed, n, loc, scale, floor=False):
    return {"seed": seed, "n": n, "loc": loc, "scale": scale, "floor": floor}


# Large samples: asymptotic KS (max(n) > 10000) through the different kstwo regimes.
big = [
    ("asymp_same_12000_11000", gen(1, 12000, 0.0, 1.0), gen(2, 11000, 0.0, 1.0)),
    ("asymp_shift_12000_11000", gen(3, 12000, 0.0, 1.0), gen(4, 11000, 0.02, 1.0)),
    ("asymp_bigshift_15000_10001", gen(5, 15000, 0.0, 1.0), gen(6, 10001, 0.3, 1.0)),
    ("asymp_small_en_10500_60", gen(7, 10500, 0.0, 1.0), gen(8, 60, 0.1, 1.0)),
    ("asymp_small_en_shift_10500_60", gen(9, 10500, 0.0, 1.0), gen(10, 60, 0.35, 1.0)),
    ("asymp_ties_20000_12000", gen(11, 20000, 0.0, 50.0, True), gen(12, 12000, 1.0, 50.0, True)),
    ("asymp_tiny_shift_30000_30000", gen(13, 30000, 0.0, 1.0), gen(14, 30000, 0.004, 1.0)),
    # Largest exact cases (max(n) <= 10000), unequal and equal sizes.
    ("exact_band_10000_9999_shift", gen(15, 10000, 0.0, 1.0), gen(16, 9999, 0.03, 1.0)),
    ("exact_square_8000_8000_shift", gen(17, 8000, 0.0, 1.0), gen(18, 8000, 0.04, 1.0)),
]
for name, ga, gb in big:
    add_pair(name, None, None, ga, gb)


def ks_case(a, b):
    r = stats.ks_2samp(a, b)  # method='auto', two-sided
    return {"d": float(r.statistic), "p": float(r.pvalue)}


def mwu_case(a, b):
    r = stats.mannwhitneyu(a, b)  # method='auto', two-sided, continuity correction
    return {"u": float(r.statistic), "p": float(r.pvalue)}


out_pairs = []
for name, a, b, ga, gb in pairs:
    av = a if a is not None else expand(ga)
    bv = b if b is not None else expand(gb)
    entry = {"name": name}
    if ga is None:
        entry["a"] = av
        entry["b"] = bv
    else:
        entry["a_gen"] = ga
        entry["b_gen"] = gb
    entry["ks"] = ks_case(av, bv)
    entry["mwu"] = mwu_case(av, bv)
    out_pairs.append(entry)

methods = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf"]
qs = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0]
quantile_cases = []
for sample in ([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], [42.0], [1.0, 2.0], normal(11, 5, 3),
               normal(100, 50, 10), ints(37, 0, 20), normal(1000, 0, 1)):
    res = {m: [float(np.quantile(sample, q, method=m)) for q in qs] for m in methods}
    quantile_cases.append({
        "sample": sample, "q": qs, "quantiles": res,
        "mean": float(np.mean(sample)), "pstd": float(np.std(sample)),
        "sstd": float(np.std(sample, ddof=1)) if len(sample) > 1 else None,
        "median": float(np.median(sample)),
    })

# The one-sample Kolmogorov distribution directly (kstwo.sf), covering every regime.
kstwo_cases = []
for n in (1, 2, 5, 10, 37, 100, 140, 141, 500, 1000, 5000, 20000, 100001):
    for x in (0.0005, 0.004, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.9, 0.99):
        kstwo_cases.append({"n": n, "x": x, "sf": float(stats.kstwo.sf(x, n))})
smirnov_cases = []
for n in (1, 3, 10, 50, 141, 1000, 5000, 20000):
    for x in (0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.8):
        smirnov_cases.append({"n": n, "x": x, "sf": float(special.smirnov(n, x))})

doc = {
    "generator": "tests/reference/make_fixtures.py",
    "scipy": scipy.__version__,
    "numpy": np.__version__,
    "pairs": out_pairs,
    "quantiles": quantile_cases,
    "kstwo_sf": kstwo_cases,
    "smirnov_sf": smirnov_cases,
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scipy_fixtures.json")
with open(path, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(f"wrote {path}: {len(out_pairs)} pairs, {len(quantile_cases)} quantile samples, "
      f"{len(kstwo_cases)} kstwo and {len(smirnov_cases)} smirnov values", file=sys.stderr)
