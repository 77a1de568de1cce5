import collections,re
real={}
for l in open('docs/validation-data/2026-12-03/validate-1253.txt'):
    m=re.match(r'^(hackbench.*?|perf bench.*?)\s{2,}(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s*$',l)
    if m: real.setdefault(m.group(1),{})['cs']=(int(m.group(2)),int(m.group(5)))
    m=re.match(r'^(hackbench.*?|perf bench.*?)\s{2,}(s|us/op)\s+([\d.]+)',l)
    if m: real.setdefault(m.group(1),{})['t']=float(m.group(3))
d=collections.defaultdict(list)
for l in open('docs/validation-data/2026-12-03/dd21/measure.tsv'):
    c,f,s,v,u,nv,ni=l.rstrip('\n').split('\t'); d[(c,f)].append((float(v),int(nv),int(ni)))
print('| case | real time | off time (err %) | DD time (err %) | real vol / invol | off vol / invol (x real) | DD vol / invol (x real) |')
print('|---|---:|---:|---:|---:|---:|---:|')
for c in real:
    r=real[c]; row=[c]
    mean=lambda f,i: sum(x[i] for x in d[(c,f)])/len(d[(c,f)])
    row.append('%.4g'%r['t'])
    for f in ('off','DELAY_DEQUEUE'):
        t=mean(f,0); row.append('%.4g (%+.1f)'%(t,(t-r['t'])/r['t']*100))
    rv,ri=r['cs']; row.append('%d / %d'%(rv,ri))
    for f in ('off','DELAY_DEQUEUE'):
        v,i=mean(f,1),mean(f,2); row.append('%.0f / %.0f (%.2f / %.2f)'%(v,i,v/rv,i/ri))
    print('| `'+' | '.join(row).replace(' | ','` | ',1)+' |')
