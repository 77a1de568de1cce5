import re, sys, collections
pat=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
def kv(s):
    d={}
    for m in re.finditer(r'(\w+)=(\S+)',s): d[m.group(1)]=m.group(2)
    return d
def analyse(fn, comm='hackbench'):
    run={}    # pid -> cpu if runnable
    names={}
    last_t=None; area=collections.Counter(); t0=None
    cur={}   # cpu -> pid running
    lastwake={} # cpu -> (waker pid, wakee pid, t)
    stats=collections.Counter()
    def cnt(c): return sum(1 for p,cc in run.items() if cc==c and names.get(p,'').startswith(comm))
    for line in open(fn):
        m=pat.match(line)
        if not m: continue
        wcomm,wpid,cpu,t,ev,rest=m.group(1).strip(),int(m.group(2)),int(m.group(3)),float(m.group(4)),m.group(5),m.group(6)
        d=kv(rest)
        # only while hackbench active
        if t0 is None and wcomm.startswith(comm): t0=t
        if t0 is not None and last_t is not None:
            for c in (0,1): area[c]+=cnt(c)*(t-last_t)
        last_t=t
        if ev in('sched_wakeup','sched_wakeup_new'):
            p=int(d['pid']); names[p]=d['comm']; tc=int(d['target_cpu'])
            run[p]=tc
            if d['comm'].startswith(comm) and wcomm.startswith(comm):
                stats['wake_hb']+=1
                if tc==cpu: stats['wake_same']+=1; lastwake[cpu]=(wpid,p)
                else: stats['wake_remote']+=1
        elif ev=='sched_switch':
            pp=int(d['prev_pid']); np_=int(d['next_pid'])
            names[pp]=d['prev_comm']; names[np_]=d['next_comm']
            if d['prev_state'].startswith('R'):
                run[pp]=cpu
                if d['prev_comm'].startswith(comm):
                    stats['invol']+=1
                    lw=lastwake.get(cpu)
                    if lw and lw[0]==pp and lw[1]==np_: stats['preempted_by_just_woken']+=1
            else:
                run.pop(pp,None)
                if d['prev_comm'].startswith(comm): stats['vol']+=1
            if np_!=0: run[np_]=cpu
            lastwake.pop(cpu,None)
        elif ev=='sched_migrate_task':
            p=int(d['pid']); 
            if p in run: run[p]=int(d['dest_cpu'])
            if d['comm'].startswith(comm): stats['migr']+=1
    dur=last_t-t0
    print(fn, f"dur={dur*1000:.1f}ms", ' '.join(f"{k}={v}" for k,v in sorted(stats.items())), ' '.join(f"meanR{c}={area[c]/dur:.1f}" for c in (0,1)))
for f in sys.argv[1:]: analyse(f)
