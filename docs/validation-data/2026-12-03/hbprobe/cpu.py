import re,collections,sys
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
for fn in sys.argv[1:]:
    run=collections.Counter(); start={}; pids=set(); idle=collections.Counter(); istart={}
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        cpu,t,e,rest=int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        if e!='sched_switch': continue
        d=dict(re.findall(r'(\w+)=(\S+)',rest))
        pp,np_=int(d['prev_pid']),int(d['next_pid'])
        if pp in start: run[pp]+=t-start.pop(pp)
        start[np_]=t
        if d['prev_comm'].startswith('hackbench'): pids.add(pp)
    ps=sorted(pids); b=ps[0]
    R=sum(run[p] for p in ps if 1<=p-b<=20); S=sum(run[p] for p in ps if 21<=p-b<=40)
    oth=sum(v for p,v in run.items() if p not in pids and p!=0)
    print(fn, f"receivers {R*1000:.1f} ms, senders {S*1000:.1f} ms, other tasks {oth*1000:.1f} ms, idle {run[0]*1000:.1f} ms")
