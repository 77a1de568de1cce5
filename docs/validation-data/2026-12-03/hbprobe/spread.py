import re,collections,sys
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
for fn in sys.argv[1:]:
    run=collections.defaultdict(collections.Counter); start={}; last={}; pids=set(); t0=None
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        cpu,t,e,rest=int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        if e!='sched_switch': continue
        d=dict(re.findall(r'(\w+)=(\S+)',rest))
        pp,np_=int(d['prev_pid']),int(d['next_pid'])
        if pp in start: run[pp][cpu]+=t-start.pop(pp)
        if d['next_comm'].startswith('hackbench'):
            start[np_]=t; pids.add(np_)
            if t0 is None: t0=t
        if d['prev_comm'].startswith('hackbench'): last[pp]=t
    ps=sorted(pids); b=ps[0]
    out=[]
    for p in ps:
        if 21<=p-b<=40:
            c=run[p]; tot=c[0]+c[1]
            out.append((round((last[p]-t0)*1000), f"{c[0]/tot:.0%}" ))
    print(fn, sorted(out))
