import re,collections,sys
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
def q(v):
    v=sorted(v); n=len(v)
    return f"n={n} p10={v[n//10]*1e6:.0f}us p50={v[n//2]*1e6:.0f}us p90={v[9*n//10]*1e6:.0f}us" if n else "n=0"
for fn in sys.argv[1:]:
    slept={}; lastwake={}; res={'pre':[], 'nopre':[]}; ranfor=collections.defaultdict(list); start={}; pend={}
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        wcomm,wpid,cpu,t,e,rest=m.group(1).strip(),int(m.group(2)),int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        d=dict(re.findall(r'(\w+)=(\S+)',rest))
        if e=='sched_waking' and wcomm.startswith('hackbench') and d['comm'].startswith('hackbench'):
            p=int(d['pid'])
            if p in slept:
                lastwake[cpu]=(wpid,p,t-slept.pop(p))
        elif e=='sched_switch':
            pp,np_=int(d['prev_pid']),int(d['next_pid'])
            lw=lastwake.pop(cpu,None)
            if d['prev_comm'].startswith('hackbench'):
                if not d['prev_state'].startswith('R'): slept[pp]=t
                if pp in start: ranfor['pre' if (lw and lw[0]==pp and lw[1]==np_) else 'x'].append(t-start[pp])
            if lw:
                if d['prev_state'].startswith('R') and lw[0]==pp and lw[1]==np_: res['pre'].append(lw[2])
                else: res['nopre'].append(lw[2])
            start[np_]=t
    print(fn, "sleep before a preempting wake:", q(res['pre']), "| before a non-preempting:", q(res['nopre']))
    print("    waker ran before being preempted:", q(ranfor['pre']))
