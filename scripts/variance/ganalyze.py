#!/usr/bin/env python3
# Summarises gap-scan files written by gaps.c (docs/variance.md): the tick (gaps phase-locked at
# 4 ms, HZ 250) and the other gaps, with quantiles and a histogram. Usage: ganalyze.py FILE...
import sys, collections, math
for f in sys.argv[1:]:
    xs=[tuple(map(int,l.split())) for l in open(f)]
    P=4000000
    # phase of gap start mod tick period, 100 bins
    ph=collections.Counter((a%P)*100//P for a,l in xs)
    top=ph.most_common(1)[0][0]
    tick=[l for a,l in xs if abs(((a%P)*100//P)-top)<=1 or abs(((a%P)*100//P)-top)>=99]
    other=[l for a,l in xs if not (abs(((a%P)*100//P)-top)<=1 or abs(((a%P)*100//P)-top)>=99)]
    def q(v,p):
        v=sorted(v); return v[min(len(v)-1,int(p*(len(v)-1)))] if v else float('nan')
    T=max(a for a,l in xs)/1e9 if xs else 1
    print(f, "gaps",len(xs),"over %.2fs"%T, "tick-phase bin",top, "tick gaps",len(tick), "rate %.0f/s"%(len(tick)/T))
    print("  tick gap us p10/50/90/99:", [round(q(tick,p)/1e3,2) for p in (.1,.5,.9,.99)])
    print("  other gaps:",len(other),"rate %.1f/s"%(len(other)/T), "us p10/50/90/99/max:", [round(q(other,p)/1e3,2) for p in (.1,.5,.9,.99,1)])
    h=collections.Counter()
    for v in other:
        b=0
        while v>=1000*2**b: b+=1
        h[b]+=1
    print("  other histogram (<2^b us):", " ".join(f"{2**b}:{h[b]}" for b in sorted(h)))
    print("  total stolen time: tick %.2f ms, other %.2f ms"%(sum(tick)/1e6, sum(other)/1e6))
