import re,collections,sys
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
for fn in sys.argv[1:]:
    ev=[]
    pids=set(); t0=None
    wakes=collections.Counter(); pre=collections.Counter(); last={}
    lastwake={}
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        wcomm,wpid,cpu,t,e,rest=m.group(1).strip(),int(m.group(2)),int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        d=dict(re.findall(r'(\w+)=(\S+)',rest))
        if e=='sched_waking' and wcomm.startswith('hackbench') and d['comm'].startswith('hackbench'):
            if t0 is None: t0=t
            b=int((t-t0)*1000//5); wakes[b]+=1; pids.add(wpid)
            if int(d['target_cpu'])==cpu: lastwake[cpu]=(wpid,int(d['pid']))
        if e=='sched_switch' and d['prev_comm'].startswith('hackbench'):
            pp=int(d['prev_pid']); last[pp]=t
            lw=lastwake.get(cpu)
            if t0 and d['prev_state'].startswith('R') and lw and lw[0]==pp and lw[1]==int(d['next_pid']): pre[int((t-t0)*1000//5)]+=1
        if e=='sched_switch': lastwake.pop(cpu,None)
    ends=sorted((v-t0)*1000 for p,v in last.items())
    print(fn, 'wakes/5ms:', [wakes[b] for b in range(max(wakes)+1)])
    print('   preempt/5ms:', [pre[b] for b in range(max(wakes)+1)])
    print('   last switch of tasks (ms):', [round(x) for x in ends])
