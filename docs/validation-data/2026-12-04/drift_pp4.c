#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2]; static int loops, chunk;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static inline double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
static volatile double tw0[200000], tw1[200000], tr[200000];
static void* b(void*x){ pinto(1); char c; for(int i=0;i<loops;i++){ if(read(p1[0],&c,1)!=1) exit(1); tr[i]=now(); if(write(p2[1],&c,1)!=1) exit(1);} return 0;}
int main(int argc,char**argv){ loops=atoi(argv[1]); chunk=atoi(argv[2]);
 pipe(p1); pipe(p2); pthread_t t; pinto(0); pthread_create(&t,0,b,0);
 char buf[64]={0}; static double rt[200000];
 for(int i=0;i<loops;i++){ double a=now(); tw0[i]=a; write(p1[1],buf,1); tw1[i]=now(); read(p2[0],buf,1); rt[i]=now()-a;}
 pthread_join(t,0);
 for(int k=0;k<loops/chunk;k++){ double w=0,l=0,r=0; for(int i=k*chunk;i<(k+1)*chunk;i++){ w+=tw1[i]-tw0[i]; l+=tr[i]-tw0[i]; r+=rt[i]; }
   printf("%6d rtt %.1f write %.1f wake %.1f\n",(k+1)*chunk, r/chunk/1000, w/chunk/1000, l/chunk/1000);}
}
