import subprocess, time, re, sys, json
args = sys.argv[1:] or ["hackbench","-g","1","-l","200"]
samples=[]
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
t0=time.time()
while p.poll() is None:
    time.sleep(0.008)
    try: txt=open('/sys/kernel/debug/sched/debug').read()
    except Exception as e: break
    samples.append((time.time()-t0, txt))
out=p.stdout.read().decode()
print(out.strip().splitlines()[-1], file=sys.stderr)
# parse
res=[]
for t,txt in samples:
    cpu=None; cur={}
    rows=[]
    avg={}
    for line in txt.splitlines():
        m=re.match(r'cpu#(\d+)',line)
        if m: cpu=int(m.group(1)); continue
        m=re.match(r'cfs_rq\[(\d+)\]:(\S+)',line)
        if m: grp=m.group(2); continue
        m=re.match(r'\s+\.avg_vruntime\s+:\s+(\S+)',line)
        if m: avg[(cpu,grp)]=float(m.group(1)); continue
        m=re.match(r'\s*([>]?)([RSDI])\s+hackbench\s+(\d+)\s+(\S+)\s+([EN])\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)\s+\d+\s+\d+\s+(\S+)',line)
        if m:
            rows.append(dict(cpu=cpu,cur=m.group(1)=='>',st=m.group(2),pid=int(m.group(3)),vr=float(m.group(4)),el=m.group(5),dl=float(m.group(6)),slice=float(m.group(7)),sw=int(m.group(9)),grp=m.group(13)))
    for r in rows: r['avg']=avg.get((r['cpu'],r['grp']))
    res.append(dict(t=t,rows=rows))
json.dump(res, open(sys.argv[0]+'.out.json' if False else 'samples.json','w'))
for s in res:
    per={}
    for r in s['rows']:
        if r['st']=='R': per.setdefault(r['cpu'],[]).append(r)
    line=f"t={s['t']*1000:6.1f}ms"
    for c in sorted(per):
        rs=per[c]; 
        lags=[ (r['avg']-r['vr']) for r in rs if r['avg'] is not None]
        el=sum(1 for r in rs if r['el']=='E')
        line+=f" | cpu{c}: R={len(rs)} E={el} lag(ms) min={min(lags):.2f} max={max(lags):.2f}" if lags else f" | cpu{c}: R={len(rs)}"
    print(line)
