#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2]; static int loops; static int pin;
static void pinto(int c){ if(!pin) return; cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void* b(void*x){ pinto(1); char c; for(int i=0;i<loops;i++){ if(read(p1[0],&c,1)!=1) exit(1); if(write(p2[1],&c,1)!=1) exit(1);} return 0;}
int main(int argc,char**argv){ loops=atoi(argv[1]); pin=atoi(argv[2]); int sz=argc>3?atoi(argv[3]):1;
 pipe(p1); pipe(p2); pthread_t t; pinto(0); pthread_create(&t,0,b,0);
 char buf[64]={0}; struct timespec a,z; clock_gettime(CLOCK_MONOTONIC,&a);
 for(int i=0;i<loops;i++){ write(p1[1],buf,1); read(p2[0],buf,1);} clock_gettime(CLOCK_MONOTONIC,&z);
 pthread_join(t,0); double ns=(z.tv_sec-a.tv_sec)*1e9+(z.tv_nsec-a.tv_nsec); printf("pin=%d %.2f us/rtt\n",pin,ns/loops/1000); }
