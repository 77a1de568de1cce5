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
static _Atomic int word, ready, done;
static void pinto(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static long fx(void*a,int op,int v){return syscall(SYS_futex,a,op,v,0,0,0);}
static double now(){struct timespec a; clock_gettime(CLOCK_MONOTONIC,&a); return a.tv_sec*1e9+a.tv_nsec;}
static int n;
static void* wakee(void*x){ pinto(1); for(int i=0;i<n;i++){ atomic_store(&ready,i+1); while(atomic_load(&word)==0) fx(&word,FUTEX_WAIT_PRIVATE,0); atomic_store(&word,0); atomic_store(&done,i+1);} return 0;}
int main(int argc,char**argv){ n=atoi(argv[1]); double gap=atof(argv[2])*1000; pinto(0);
 pthread_t t; pthread_create(&t,0,wakee,0); double sum=0; int cnt=0; double lat=0;
 double *v=malloc(sizeof(double)*n);
 for(int i=0;i<n;i++){ while(atomic_load(&ready)!=i+1); double t0=now(); while(now()-t0<gap); 
   atomic_store(&word,1); double a=now(); long r=fx(&word,FUTEX_WAKE_PRIVATE,1); double b=now(); v[i]=r? (b-a):-1;
   while(atomic_load(&done)!=i+1); }
 pthread_join(t,0);
 // median of woken samples
 int m=0; for(int i=0;i<n;i++) if(v[i]>=0) v[m++]=v[i];
 for(int i=1;i<m;i++){double x=v[i];int j=i-1;while(j>=0&&v[j]>x){v[j+1]=v[j];j--;}v[j+1]=x;}
 printf("gap %5.1f us: woke %4d/%d, FUTEX_WAKE median %.0f ns p10 %.0f p90 %.0f\n", gap/1000, m, n, m?v[m/2]:0, m?v[m/10]:0, m?v[m*9/10]:0);
}
