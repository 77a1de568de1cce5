// Pipe ping-pong in chunks (thread A on cpu0, B on cpu1), something between the chunks:
//   ./pp3 LOOPS CHUNK NEWPIPES BETWEEN ARG
//   NEWPIPES 1: new pipes after every chunk
//   BETWEEN sleep: both threads blocked ARG us; spin: both spin ARG us; touch: A touches ARG MB
// Prints the mean round trip (us) of each chunk.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2], loops, chunk, newpipes, arg;
static const char* between;
static pthread_barrier_t bar;
static void pinto(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
static double now(void) { struct timespec a; clock_gettime(CLOCK_MONOTONIC, &a); return a.tv_sec * 1e9 + a.tv_nsec; }
static void spin_us(int us) { double e = now() + us * 1e3; while (now() < e) {} }
static void* b(void* x) {
  pinto(1); char c;
  for (int k = 0; k < loops / chunk; k++) {
    pthread_barrier_wait(&bar);
    for (int i = 0; i < chunk; i++) { if (read(p1[0], &c, 1) != 1) exit(1); if (write(p2[1], &c, 1) != 1) exit(1); }
    if (!strcmp(between, "spin")) spin_us(arg);
    pthread_barrier_wait(&bar);
  }
  return 0;
}
int main(int argc, char** argv) {
  if (argc < 6) { fprintf(stderr, "usage: pp3 LOOPS CHUNK NEWPIPES sleep|spin|touch ARG\n"); return 2; }
  loops = atoi(argv[1]); chunk = atoi(argv[2]); newpipes = atoi(argv[3]); between = argv[4]; arg = atoi(argv[5]);
  if (pipe(p1) || pipe(p2)) return 1;
  pthread_barrier_init(&bar, 0, 2); pthread_t t; pinto(0); pthread_create(&t, 0, b, 0);
  char buf[8] = {0};
  for (int k = 0; k < loops / chunk; k++) {
    pthread_barrier_wait(&bar); double s = now();
    for (int i = 0; i < chunk; i++) { if (write(p1[1], buf, 1) != 1 || read(p2[0], buf, 1) != 1) return 1; }
    printf("%.1f ", (now() - s) / chunk / 1000);
    if (newpipes) { close(p1[0]); close(p1[1]); close(p2[0]); close(p2[1]); if (pipe(p1) || pipe(p2)) return 1; }
    if (!strcmp(between, "sleep") && arg) usleep(arg);
    if (!strcmp(between, "spin")) spin_us(arg);
    if (!strcmp(between, "touch") && arg) {
      size_t sz = (size_t)arg << 20; char* m = mmap(0, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      memset(m, 1, sz); munmap(m, sz);
    }
    pthread_barrier_wait(&bar);
  }
  printf("\n"); pthread_join(t, 0); return 0;
}
