// Wake-up latency against the idle gap (docs/variance.md): a thread pinned to cpu1 blocks in
// FUTEX_WAIT; cpu0 spins GAP ns after the wakee said it is about to wait, then FUTEX_WAKE, and the
// wakee notes the latency. Prints p10/p50/p90 and how many wake-ups were fast (< 6 us, a polling
// wakee) per gap. Build: gcc -O2 -pthread wgap.c -o wgap; run: ./wgap EVENTS_PER_GAP
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static inline int64_t now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1000000000LL+t.tv_nsec;}
static _Atomic int word, ready=-1, done=-1; static _Atomic int64_t t0; static int64_t lat[100000];
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static void* wakee(void*a){pin(1); for(int i=0;;i++){ready=i; while(word==0) syscall(SYS_futex,&word,FUTEX_WAIT_PRIVATE,0,0,0,0); int64_t t1=now(); if(word==2)break; lat[i%100000]=t1-t0; word=0; done=i;} return 0;}
int main(int c,char**v){ pin(0); pthread_t th; pthread_create(&th,0,wakee,0); int n=atoi(v[1]);
 int gaps[]={0,250,500,1000,1500,2000,3000,4000,6000,10000,30000}; int ng=sizeof gaps/sizeof*gaps; int i=0;
 for(int g=0; g<ng; g++){ int64_t sum=0; int cnt=0, fast=0; int64_t arr[4000]; int na=0;
  for(int k=0;k<n;k++,i++){ while(ready!=i); int64_t u=now()+gaps[g]; while(now()<u); t0=now(); word=1; long w=syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); while(done!=i); if(w==1){arr[na++]=lat[i%100000];} }
  // median
  for(int a=1;a<na;a++){int64_t x=arr[a];int b=a-1;while(b>=0&&arr[b]>x){arr[b+1]=arr[b];b--;}arr[b+1]=x;}
  int f=0; for(int a=0;a<na;a++) if(arr[a]<6000) f++;
  printf("gap %5d ns: woken %4d/%d  p10 %6.1f p50 %6.1f p90 %6.1f us  fast(<6us) %d\n",gaps[g],na,n,arr[na/10]/1e3,arr[na/2]/1e3,arr[na*9/10]/1e3,f);
 }
 while(ready!=i); word=2; syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); pthread_join(th,0);}
