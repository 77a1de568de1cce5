#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2]; static int loops;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void* b(void*x){ pinto(1); char c; for(int i=0;i<loops;i++){ if(read(p1[0],&c,1)!=1) exit(1); if(write(p2[1],&c,1)!=1) exit(1);} return 0;}
static double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
int main(int argc,char**argv){ loops=atoi(argv[1]); int chunk=atoi(argv[2]);
 pipe(p1); pipe(p2); pthread_t t; pinto(0); pthread_create(&t,0,b,0);
 char buf[64]={0}; double t0=now(), s=t0;
 for(int i=1;i<=loops;i++){ write(p1[1],buf,1); read(p2[0],buf,1); if(i%chunk==0){double n=now(); printf("%d %.1f\n", i, (n-s)/chunk/1000); s=n;}}
 pthread_join(t,0); printf("total %.2f us/rtt\n",(now()-t0)/loops/1000); }
