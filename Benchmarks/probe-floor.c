// Kernel floor of a keepalive PROBE: N loopback TCP connections, a reader process that
// epoll-reads them all, and a writer that writes one 9-byte WebSocket text frame
// ("PROBE\r\n") to each connection every 5 s, spread evenly. Prints the writer's CPU
// (utime + stime from getrusage) per write over the measured window, after 3 s of warm-up:
// what a keepalive PROBE costs a server that does nothing else, the floor for
// Benchmarks/idle-probe-cpu.sh on the same machine.
// Build and run: gcc -O2 -o /tmp/probe-floor Benchmarks/probe-floor.c && /tmp/probe-floor 15000 20 50
//   (connections, seconds measured, tick in ms: 50 is the server's wheel granularity with the
//   default keepalive settings).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

static double now(void) { return now_ns() / 1e9; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 15000, window = argc > 2 ? atoi(argv[2]) : 20, tickMs = argc > 3 ? atoi(argv[3]) : 50;
  if (n < 1 || n > 1000000 || window < 1 || window > 3600 || tickMs < 1 || tickMs > 5000) { fprintf(stderr, "usage: probe-floor [N] [SECONDS] [TICK_MS]\n"); return 2; }
  struct rlimit rl; getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  if (bind(ls, (void *)&a, sizeof a) || listen(ls, 4096)) { perror("listen"); return 1; }
  socklen_t al = sizeof a; getsockname(ls, (void *)&a, &al);
  pid_t child = fork();
  if (child == 0) {  // reader: connect all, then read whatever comes
    int ep = epoll_create1(0);
    for (int i = 0; i < n; i++) {
      int s = socket(AF_INET, SOCK_STREAM, 0);
      if (connect(s, (void *)&a, sizeof a)) { perror("connect"); _exit(1); }
      struct epoll_event e = { .events = EPOLLIN, .data.fd = s }; epoll_ctl(ep, EPOLL_CTL_ADD, s, &e);
    }
    struct epoll_event ev[256]; char buf[4096];
    for (;;) { int k = epoll_wait(ep, ev, 256, -1); for (int i = 0; i < k; i++) if (read(ev[i].data.fd, buf, sizeof buf) <= 0) _exit(0); }
  }
  int *fds = malloc(sizeof(int) * (size_t)n);
  if (!fds) { perror("malloc"); kill(child, SIGKILL); return 1; }
  for (int i = 0; i < n; i++) {
    fds[i] = accept(ls, 0, 0);
    if (fds[i] < 0) { perror("accept"); kill(child, SIGKILL); return 1; }
    setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  const char frame[] = "\x81\x07PROBE\r\n";
  // One write per connection every 5 s, spread over ticks of TICK_MS (as a timer wheel's).
  double t0 = now(), c0 = 0; long writes = 0; int next = 0, warm = 3; double start = t0;
  for (long tick = 0;; tick++) {
    double due = t0 + tick * tickMs / 1000.0, w = due - now(); if (w > 0) usleep((useconds_t)(w * 1e6));
    if (now() - start >= warm && c0 == 0) { c0 = process_cpu_seconds(); writes = 0; start = now(); warm = 0; }
    long per = (long)n * tickMs / 5000; if (per < 1) per = 1;
    for (long j = 0; j < per; j++) { if (write(fds[next], frame, 9) != 9) perror("write"); next = (next + 1) % n; writes++; }
    if (warm == 0 && now() - start >= window) break;
  }
  double c = process_cpu_seconds() - c0;
  printf("%d connections, ticks of %d ms, %ld PROBE writes in %d s: writer CPU %.2f s, %.2f µs per PROBE\n", n, tickMs, writes, window, c, c * 1e6 / writes);
  kill(child, SIGKILL); waitpid(child, 0, 0); return 0;
}
