import re,collections,sys
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
for fn in sys.argv[1:]:
    wakers=collections.Counter(); vol=collections.Counter(); inv=collections.Counter(); run=collections.Counter(); wakes=collections.Counter()
    start={}; 
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        wcomm,wpid,cpu,t,ev,rest=m.group(1).strip(),int(m.group(2)),int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        d=dict(re.findall(r'(\w+)=(\S+)',rest))
        if ev=='sched_waking' and d['comm'].startswith('hackbench') and wcomm.startswith('hackbench'):
            wakers[wpid]+=1; wakes[int(d['pid'])]+=1
        if ev=='sched_switch':
            pp=int(d['prev_pid']); np_=int(d['next_pid'])
            if d['prev_comm'].startswith('hackbench'):
                (inv if d['prev_state'].startswith('R') else vol)[pp]+=1
                if pp in start: run[pp]+=t-start.pop(pp)
            if d['next_comm'].startswith('hackbench'): start[np_]=t
    S=[p for p in wakers if wakers[p]>100]; R=[p for p in wakes if wakes[p]>20 and p not in S]
    def agg(ps,c): return sum(c[p] for p in ps)
    print(fn, f"senders={len(S)} vol={agg(S,vol)} invol={agg(S,inv)} run={agg(S,run)*1000:.1f}ms | receivers={len(R)} vol={agg(R,vol)} invol={agg(R,inv)} run={agg(R,run)*1000:.1f}ms wakes={agg(R,wakes)}")
