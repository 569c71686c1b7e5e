// Helpers shared by the C benchmark tools (loadgen.c, fanout-floor.c, probe-floor.c): the monotonic clock
// the server's producer stamps updates with, the process's CPU time, and a write that goes on
// until everything is written or fails. Included by each tool's single source file.
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H
#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

// CLOCK_MONOTONIC in nanoseconds (the clock of the `ts` field).
static inline int64_t now_ns(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// User plus system CPU time of the whole process, in seconds.
static inline double process_cpu_seconds(void) {
  struct rusage r; getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

// Writes all of p (blocking descriptors); -1 on an error or a closed connection.
static inline int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) { if (w < 0 && errno == EINTR) continue; return -1; }
    c += w; n -= (size_t)w;
  }
  return 0;
}
#endif
