import subprocess, time, re, sys, json, os
os.sched_setaffinity(0,{1})
p = subprocess.Popen(["taskset","-c","0","hackbench","-g","1","-l","200"], stdout=subprocess.PIPE)
snaps=[]
while p.poll() is None:
    snaps.append(open('/sys/kernel/debug/sched/debug').read())
print(p.stdout.read().decode().strip().splitlines()[-1], len(snaps), file=sys.stderr)
json.dump(snaps, open('pinsnaps.json','w'))
