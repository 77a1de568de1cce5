#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2]; static int loops, spin;
static double spinB[400], spinA[400]; static int chunk;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
static volatile unsigned long sink;
static double dospin(){ double a=now(); unsigned long x=1; for(int j=0;j<spin;j++){ x = x*6364136223846793005UL+1;} sink=x; return now()-a; }
static void* b(void*x){ pinto(1); char c; for(int i=0;i<loops;i++){ if(read(p1[0],&c,1)!=1) exit(1); spinB[i/chunk]+=dospin(); if(write(p2[1],&c,1)!=1) exit(1);} return 0;}
int main(int argc,char**argv){ loops=atoi(argv[1]); chunk=atoi(argv[2]); spin=atoi(argv[3]);
 pipe(p1); pipe(p2); pthread_t t; pinto(0); pthread_create(&t,0,b,0);
 char buf[64]={0}; double t0=now(), s=t0; double rt[400];
 for(int i=0;i<loops;i++){ write(p1[1],buf,1); read(p2[0],buf,1); spinA[i/chunk]+=dospin(); if((i+1)%chunk==0){double n=now(); rt[i/chunk]=(n-s)/chunk/1000; s=n;}}
 pthread_join(t,0);
 for(int k=0;k<loops/chunk;k++) printf("%d rtt %.1f spinA %.0f spinB %.0f\n",(k+1)*chunk, rt[k], spinA[k]/chunk, spinB[k]/chunk);
 printf("total %.2f us/rtt\n",(now()-t0)/loops/1000);
 /* fully busy control */
 double tot=0; for(int i=0;i<2000;i++) tot+=dospin(); printf("busy spin %.0f ns\n", tot/2000);
}
