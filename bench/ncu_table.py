#!/usr/bin/env python3
"""Per-kernel table of an ncu log (gpu__time_duration, DRAM bytes, occupancy, registers): calls,
ns a call, MB read and written a call. Usage: ncu_table.py NCU.LOG"""
import re,sys,collections
txt=open(sys.argv[1]).read()
blocks=re.split(r'\n  (\S.*?) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)', txt)
agg=collections.OrderedDict()
for name,body in zip(blocks[1::2], blocks[2::2]):
    short=name.split('(')[0][:60]
    m={}
    for key in ['gpu__time_duration.sum','dram__bytes_read.sum','dram__bytes_write.sum','sm__warps_active.avg.pct_of_peak_sustained_active','launch__registers_per_thread']:
        r=re.search(re.escape(key)+r'\s+(\S+)\s+([\d.,]+)',body)
        if r:
            v=float(r.group(2).replace(',',''))
            u=r.group(1)
            if u=='us': v*=1e3
            if u=='ms': v*=1e6
            if u=='Kbyte': v*=1e3
            if u=='Mbyte': v*=1e6
            if u=='Gbyte': v*=1e9
            m[key]=v
    a=agg.setdefault(short,[0,0,0,0,0,0])
    a[0]+=1; a[1]+=m.get('gpu__time_duration.sum',0); a[2]+=m.get('dram__bytes_read.sum',0); a[3]+=m.get('dram__bytes_write.sum',0); a[4]=m.get('sm__warps_active.avg.pct_of_peak_sustained_active',0); a[5]=m.get('launch__registers_per_thread',0)
print('%-60s %5s %10s %9s %9s %6s %4s'%('kernel','calls','ns/call','MB rd','MB wr','occ%','regs'))
for k,a in agg.items():
    n=a[0]; print('%-60s %5d %10.0f %9.1f %9.1f %6.1f %4.0f'%(k,n,a[1]/n,a[2]/n/1e6,a[3]/n/1e6,a[4],a[5]))
