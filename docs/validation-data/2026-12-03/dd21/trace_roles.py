import re,sys,collections
# hackbench -g 1: main 1000, receivers 1001..1000+F, senders after
F=int(sys.argv[2]) if len(sys.argv)>2 else 20
base=int(sys.argv[3]) if len(sys.argv)>3 else 1000
def role(pid):
    if base+1<=pid<=base+F: return 'R'
    if base+F+1<=pid<=base+2*F: return 'S'
    return 'O'
line_re=re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
lastwake={}  # wakee pid -> (waker pid, time)
pre=collections.Counter(); sw=collections.Counter(); wakes=collections.Counter()
gap=[]
for l in open(sys.argv[1]):
    m=line_re.match(l)
    if not m: continue
    comm,pid,cpu,ts,ev,rest=m.groups(); pid=int(pid); ts=float(ts)
    kv=dict(re.findall(r'(\w+)=(\S+)',rest))
    if ev=='sched_waking':
        w=int(kv['pid']); lastwake[w]=(pid,ts); wakes[(role(pid),role(w))]+=1
    elif ev=='sched_switch':
        p=int(kv['prev_pid']); n=int(kv['next_pid']); st=kv['prev_state']
        sw[(role(p),st)]+=1
        if st.startswith('R') and role(p)=='S':
            lw=lastwake.get(n)
            key=('S preempted by', role(n))
            if lw and lw[0]==p and role(n)=='R':
                key=('S preempted by R it woke',); gap.append((ts-lw[1])*1e6)
            pre[key]+=1
        elif st.startswith('R'):
            pre[(role(p),'preempted by',role(n))]+=1
print('switches by prev role/state:',dict(sw))
print('preemptions:',dict(pre))
print('wakings (waker role, wakee role):',dict(wakes))
if gap:
    gap.sort(); print('gap us median %.2f p10 %.2f p90 %.2f'%(gap[len(gap)//2],gap[len(gap)//10],gap[9*len(gap)//10]))
