#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2]; static int chunk;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
static void* b(void*x){ pinto(1); char c; for(int i=0;i<chunk;i++){ if(read(p1[0],&c,1)!=1) exit(1); if(write(p2[1],&c,1)!=1) exit(1);} return 0;}
static void* a(void*x){ pinto(0); char buf[8]={0}; double s=now(); for(int i=0;i<chunk;i++){ write(p1[1],buf,1); read(p2[0],buf,1);} printf("%.1f ", (now()-s)/chunk/1000); return 0;}
int main(int argc,char**argv){ int n=atoi(argv[1]); chunk=atoi(argv[2]); int newa=atoi(argv[3]), newb=atoi(argv[4]);
 pipe(p1); pipe(p2);
 /* persistent threads when not renewed: run them via loops */
 for(int k=0;k<n;k++){ pthread_t ta,tb; pthread_create(&tb,0,b,0); pthread_create(&ta,0,a,0); pthread_join(ta,0); pthread_join(tb,0);} printf("\n");}
