#!/usr/bin/env python3
# perf bench sched pipe repeated under `perf stat -a -A -e context-switches,cpu-migrations`: per run
# the usecs/op and the context switches on each CPU (split across CPUs = the two tasks ran on two
# CPUs), and the machine's busy share in the second before. docs/variance.md.
# Usage: pipe_placement.py RUNS [-T]
import subprocess, re, sys, json, time
# perf bench sched pipe repeated; per run: usecs/op and the share of context switches on the busiest CPU
N=int(sys.argv[1]); extra=sys.argv[2:]
def busy():
    a=open('/proc/stat').readline().split(); time.sleep(1); b=open('/proc/stat').readline().split()
    a=list(map(int,a[1:9])); b=list(map(int,b[1:9])); d=[y-x for x,y in zip(a,b)]; return 100*(sum(d)-d[3]-d[4])/sum(d)
for i in range(N):
    bb=busy()
    out=subprocess.run(['perf','stat','-a','-A','-e','context-switches,cpu-migrations','-x,','--','perf','bench','sched','pipe','-l','20000']+extra,capture_output=True,text=True)
    s=out.stdout+out.stderr
    us=float(re.search(r'([0-9.]+)\s+usecs/op',s).group(1))
    cs=[int(m.group(2)) for m in re.finditer(r'^CPU(\d+),(\d+),,context-switches',s,re.M)]
    mig=sum(int(m.group(2)) for m in re.finditer(r'^CPU(\d+),(\d+),,cpu-migrations',s,re.M))
    print(json.dumps({"us":us,"cs":cs,"mig":mig,"busy_before":round(bb,1),"extra":extra}),flush=True)
