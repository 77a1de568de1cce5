// Gap scan prototype (docs/variance.md; calibrate's gap scan is host/background.cpp): spins pinned
// on one CPU for T seconds reading CLOCK_MONOTONIC and prints every gap longer than THRESHOLD ns as
// "start_ns length_ns". Build: gcc -O2 gaps.c -o gaps; run: ./gaps CPU SECONDS [THRESHOLD_NS]
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <stdint.h>
static inline int64_t now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1000000000LL+t.tv_nsec;}
int main(int c,char**v){int cpu=atoi(v[1]); double T=atof(v[2]); int64_t thr=c>3?atoll(v[3]):1000;
 cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu,&s); sched_setaffinity(0,sizeof s,&s);
 int64_t t0=now(), end=t0+(int64_t)(T*1e9), prev=t0, n=0; 
 static int64_t at[2000000], len[2000000]; long k=0;
 while(1){int64_t t=now(); n++; if(t-prev>thr && k<2000000){at[k]=prev-t0; len[k]=t-prev; k++;} prev=t; if(t>end)break;}
 fprintf(stderr,"reads %ld, mean read %.1f ns, gaps>%ld: %ld\n",(long)n,(double)(prev-t0)/n,(long)thr,k);
 for(long i=0;i<k;i++) printf("%ld %ld\n",(long)at[i],(long)len[i]);
}
