#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>
/* mode 0: same pipes; mode 1: new pipes every chunk; rest_us between chunks (both threads blocked) */
static int p1[2], p2[2]; static int loops, chunk, mode, rest_us;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
static pthread_barrier_t bar;
static void* b(void*x){ pinto(1); char c; for(int k=0;k<loops/chunk;k++){ pthread_barrier_wait(&bar); for(int i=0;i<chunk;i++){ if(read(p1[0],&c,1)!=1) exit(1); if(write(p2[1],&c,1)!=1) exit(1);} {double e=now()+rest_us*1e3; while(now()<e);} pthread_barrier_wait(&bar);} return 0;}
int main(int argc,char**argv){ loops=atoi(argv[1]); chunk=atoi(argv[2]); mode=atoi(argv[3]); rest_us=atoi(argv[4]);
 pipe(p1); pipe(p2); pthread_barrier_init(&bar,0,2); pthread_t t; pinto(0); pthread_create(&t,0,b,0);
 char buf[64]={0};
 for(int k=0;k<loops/chunk;k++){ pthread_barrier_wait(&bar); double s=now();
   for(int i=0;i<chunk;i++){ write(p1[1],buf,1); read(p2[0],buf,1);} double n=now(); printf("%.1f ", (n-s)/chunk/1000);
   if(mode==1){ close(p1[0]);close(p1[1]);close(p2[0]);close(p2[1]); pipe(p1); pipe(p2);} if(rest_us){double e=now()+rest_us*1e3; while(now()<e);} pthread_barrier_wait(&bar);}
 printf("\n"); pthread_join(t,0);}
