// A (cpu0) wakes B (cpu1) after a 60 us spin; after the wake A either spins (mode 0) until B
// has run, or blocks in futex_wait (mode 1) until B wakes it. Prints the median of t1 - t0
// (before A's FUTEX_WAKE to B's return from FUTEX_WAIT) and of A's FUTEX_WAKE call.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static atomic_int fb, fa, done; static long t0, t1, tw; static int mode, n, gap;
static long lat[100000], sys[100000];
static void fwait(atomic_int*f,int v){syscall(SYS_futex,f,FUTEX_WAIT_PRIVATE,v,0,0,0);}
static void fwake(atomic_int*f){syscall(SYS_futex,f,FUTEX_WAKE_PRIVATE,1,0,0,0);}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static void*B(void*x){pin(1);for(int i=0;i<n;i++){while(atomic_load(&fb)==0)fwait(&fb,0);t1=ns();atomic_store(&fb,0);
 atomic_store(&done,1); if(mode){atomic_store(&fa,1);fwake(&fa);}}return 0;}
int main(int c,char**v){n=atoi(v[1]);mode=atoi(v[2]);gap=atoi(v[3]);pin(0);pthread_t b;pthread_create(&b,0,B,0);usleep(1000);
 for(int i=0;i<n;i++){long s=ns();while(ns()-s<gap*1000L);atomic_store(&done,0);t0=ns();atomic_store(&fb,1);fwake(&fb);tw=ns()-t0;
  if(mode){while(atomic_load(&fa)==0)fwait(&fa,0);atomic_store(&fa,0);}else{while(!atomic_load(&done));}
  while(!atomic_load(&done));lat[i]=t1-t0;sys[i]=tw;}
 pthread_join(b,0);
 int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
 qsort(lat,n,sizeof(long),cmp);qsort(sys,n,sizeof(long),cmp);printf("mode %d gap %d: latency p50 %ld p10 %ld p90 %ld  wake-call p50 %ld\n",mode,gap,lat[n/2],lat[n/10],lat[9*n/10],sys[n/2]);}
