// crosscpu_msg: what a 100-byte message through an AF_UNIX stream socket (or, with PIPE=1 in the
// environment, a pipe) costs when writer and reader are on one CPU, and what it costs when they
// are on two (docs/workloads.md, "Messages that cross CPUs"; docs/validation.md, 2026-12-03).
//
//   g++ -O2 -o crosscpu_msg crosscpu_msg.cpp -lpthread
//   ./crosscpu_msg NSOCK CROSS      # CROSS 0: one thread on CPU 0 sends a batch of 100 messages
//                                   #   per socket, then reads them (each phase timed once);
//                                   # CROSS 1: the sender on CPU 0, a reader thread on CPU 1
//                                   #   spinning on non-blocking reads over the NSOCK sockets
//
// Times are the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), so another process sharing the
// CPUs does not inflate them. The cross reader times each successful read with two clock reads
// (the tool prints what one costs). No wakeups are involved: nobody ever blocks.
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>
static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
struct Pair { int s[2]; };
static bool g_pipe = getenv("PIPE") != nullptr;
static std::vector<Pair> mk(int n) { std::vector<Pair> v(n); for (auto& p : v) { if (g_pipe) { int f[2]; pipe(f); p.s[0] = f[0]; p.s[1] = f[1]; } else socketpair(AF_UNIX, SOCK_STREAM, 0, p.s); } return v; }
static ssize_t xsend(int fd, const char* b) { return g_pipe ? write(fd, b, 100) : send(fd, b, 100, 0); }
static ssize_t xrecv(int fd, char* b, bool nb) { if (!g_pipe) return recv(fd, b, 100, nb ? MSG_DONTWAIT : 0); return read(fd, b, 100); }
static std::atomic<bool> stop{false};
static std::vector<Pair>* g_pairs; static long g_got = 0; static double g_busy = 0;
static void* reader(void*) {
  pin(1); char b[100]; long got = 0; double busy = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    for (auto& p : *g_pairs) {
      double t0 = now();
      ssize_t r = xrecv(p.s[0], b, true);
      if (r > 0) { busy += now() - t0; ++got; }
    }
  }
  g_got = got; g_busy = busy; return nullptr;
}
int main(int argc, char** argv) {
  int nsock = atoi(argv[1]); int cross = atoi(argv[2]); long n = 200000;
  auto pairs = mk(nsock);
  if (g_pipe)
    for (auto& p : pairs) fcntl(p.s[0], F_SETFL, O_NONBLOCK);
  char b[100] = {};
  pin(0);
  if (!cross) {
    // batches of 100 messages per socket: all sends, then all recvs, each phase timed once
    const int B = 100; double ts = 0, tr = 0;
    for (long i = 0; i < n / (B * nsock); ++i) {
      double a = now();
      for (int j = 0; j < B; ++j) for (auto& p : pairs) xsend(p.s[1], b);
      double m = now();
      for (int j = 0; j < B; ++j) for (auto& p : pairs) xrecv(p.s[0], b, false);
      double e = now(); ts += m - a; tr += e - m;
    }
    double c0 = now(); for (int i = 0; i < 100000; ++i) now(); double clk = (now() - c0) / 100000;
    printf(g_pipe ? "pipe " : "unix ");
    printf("same-cpu %2d sockets: send %.0f ns, recv %.0f ns per message; one clock read %.0f ns\n", nsock,
           ts / n * 1e9, tr / n * 1e9, clk * 1e9);
  } else {
    g_pairs = &pairs; pthread_t th; pthread_create(&th, nullptr, reader, nullptr);
    usleep(10000);
    double t0 = now();
    for (long i = 0; i < n / nsock; ++i) for (auto& p : pairs) xsend(p.s[1], b);
    double t = now() - t0;
    usleep(20000); stop = true; pthread_join(th, nullptr);
    printf(g_pipe ? "pipe " : "unix ");
    printf("cross-cpu %2d sockets: send %.0f ns per message (sender CPU 0), recv %.0f ns per message (reader CPU 1, spinning)\n",
           nsock, t / n * 1e9, g_busy / (g_got ? g_got : 1) * 1e9);
    double c0 = now(); for (int i = 0; i < 100000; ++i) now(); printf("  (the reader's figure includes one clock read of %.0f ns)\n", (now() - c0) / 100000 * 1e9);
  }
}
