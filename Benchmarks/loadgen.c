// A lean load generator for `lightstreamer-loadtest --serve`, in C: the same sessions as the
// Swift load tool (WebSocket, `wsok`, `create_session` on adapter set LOAD, one MERGE `add` of
// 10 items with field `ts`), the same latency (CLOCK_MONOTONIC at receipt minus the `ts` the
// producer wrote), and the same final line, at a fraction of the Swift tool's CPU: the two
// share this machine's two cores with the server, so the lighter the load generator, the less
// the latency measured includes its own turns.
//
// Build: gcc -O2 -o /tmp/loadgen Benchmarks/loadgen.c
// Run:   /tmp/loadgen --connect-port 19090 --sessions 1000 --seconds 20
//   (also --warmup S (3), --items-per-session N (10), --items N (100), --rate R (10/s),
//   --mute N (0): N more sessions, the same subscription, that never read past their
//   handshake, with a 4 KiB receive buffer: slow readers, for what they cost the server),
//   --late MS (0: off): print when, in the measured stretch, a latency above MS ms was seen,
//   with the worst of each 100 ms (to find what a p99.9 above p99 comes from); it
//   takes the Swift tool's place as DRIVER= in Benchmarks/server-cpu-ab.sh and
//   Benchmarks/cpu-per-update-ab.sh.
//
// Sessions are opened one after the other (blocking connect and handshake), and read with
// epoll as they open (between every 16) and then. Latencies go into a histogram of 10 µs
// buckets up to 60 s.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

#define BUF 16384
#define BUCKET_US 10
#define BUCKETS (60 * 1000000 / BUCKET_US)

typedef struct { int fd; int len; unsigned char buf[BUF]; } Conn;

static uint32_t *histogram;
static long samples, updates, subscribed, errors;
static int recording;
static double late_ms;
static int64_t late_window = -1, late_worst_us, record_start_ns;

// The worst latency of the 100 ms window that just ended, if above --late.
static void report_late(void) {
  if (late_window >= 0 && late_worst_us > late_ms * 1000)
    printf("late: at +%.1f s (CLOCK_MONOTONIC %.1f s), %.1f ms\n", late_window / 10.0,
           (record_start_ns + late_window * 100000000) / 1e9, late_worst_us / 1000.0);
}

// Appends a masked client text frame carrying `text` to out; returns the new length.
static size_t frame(unsigned char *out, size_t at, const char *text) {
  size_t n = strlen(text); const unsigned char mask[4] = {1, 2, 3, 4};
  out[at++] = 0x81;
  if (n < 126) out[at++] = (unsigned char)(0x80 | n);
  else { out[at++] = 0x80 | 126; out[at++] = (unsigned char)(n >> 8); out[at++] = (unsigned char)n; }
  memcpy(out + at, mask, 4); at += 4;
  for (size_t i = 0; i < n; i++) out[at + i] = (unsigned char)text[i] ^ mask[i % 4];
  return at + n;
}

static int starts(const unsigned char *l, size_t n, const char *p) { size_t k = strlen(p); return n >= k && memcmp(l, p, k) == 0; }

static void line(const unsigned char *l, size_t n, int64_t now) {
  if (n && l[n - 1] == '\r') n--;
  if (n > 2 && l[0] == 'U' && l[1] == ',') {
    if (!recording) return;
    updates++;
    size_t j = n; while (j > 0 && l[j - 1] != ',' && l[j - 1] != '|') j--;
    int64_t ts = 0; for (size_t i = j; i < n; i++) if (l[i] >= '0' && l[i] <= '9') ts = ts * 10 + (l[i] - '0');
    if (ts > 0) { int64_t us = (now - ts) / 1000; if (us < 0) us = 0; int64_t b = us / BUCKET_US; if (b >= BUCKETS) b = BUCKETS - 1; histogram[b]++; samples++;
      if (late_ms > 0) {
        int64_t w = (now - record_start_ns) / 100000000;
        if (w != late_window) { report_late(); late_window = w; late_worst_us = 0; }
        if (us > late_worst_us) late_worst_us = us;
      }
    }
  } else if (starts(l, n, "SUBOK")) subscribed++;
  else if (starts(l, n, "CONERR") || starts(l, n, "REQERR") || starts(l, n, "END")) errors++;
}

// Handles the whole frames in c->buf; keeps a partial one. Returns -1 on a close frame.
static int frames(Conn *c) {
  int64_t now = now_ns(); size_t at = 0, len = (size_t)c->len; int closed = 0;
  while (len - at >= 2) {
    unsigned char op = c->buf[at] & 0x0f; size_t n = c->buf[at + 1] & 0x7f, h = 2;
    if (n == 126) { if (len - at < 4) break; n = ((size_t)c->buf[at + 2] << 8) | c->buf[at + 3]; h = 4; }
    else if (n == 127) { if (len - at < 10) break; n = 0; for (int i = 0; i < 8; i++) n = (n << 8) | c->buf[at + 2 + i]; h = 10; }
    if (n > BUF - 16) { fprintf(stderr, "frame of %zu bytes: too large\n", n); return -1; }
    if (len - at < h + n) break;
    const unsigned char *p = c->buf + at + h;
    if (op == 0x8) closed = 1;
    else if (op == 0x1 || op == 0x0) { size_t s = 0; for (size_t i = 0; i < n; i++) if (p[i] == '\n') { line(p + s, i - s, now); s = i + 1; } }
    at += h + n;
  }
  memmove(c->buf, c->buf + at, len - at); c->len = (int)(len - at);
  return closed ? -1 : 0;
}

// Reads what the sessions in `ep` have for us: one epoll_wait of up to `timeout_ms`.
static void read_ready(int ep, int timeout_ms) {
  struct epoll_event ev[512];
  int k = epoll_wait(ep, ev, 512, timeout_ms);
  for (int i = 0; i < k; i++) {
    Conn *c = ev[i].data.ptr;
    ssize_t r = read(c->fd, c->buf + c->len, (size_t)(BUF - c->len));
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r <= 0) { errors++; epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, 0); close(c->fd); c->fd = -1; continue; }
    c->len += (int)r;
    if (frames(c) < 0) { errors++; epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, 0); close(c->fd); c->fd = -1; }
  }
}

static double percentile(double p) {
  if (samples == 0) return 0;
  long rank = (long)(samples * p), seen = 0;
  for (long b = 0; b < BUCKETS; b++) { seen += histogram[b]; if (seen > rank) return (b * BUCKET_US + BUCKET_US / 2) / 1000.0; }
  return BUCKETS * (double)BUCKET_US / 1000.0;
}

int main(int argc, char **argv) {
  int port = 0, sessions = 1000, per = 10, items = 100, mute = 0; double seconds = 10, warmup = 3, rate = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--connect-port")) port = atoi(v); else if (!strcmp(k, "--sessions")) sessions = atoi(v);
    else if (!strcmp(k, "--seconds")) seconds = atof(v); else if (!strcmp(k, "--warmup")) warmup = atof(v);
    else if (!strcmp(k, "--items-per-session")) per = atoi(v); else if (!strcmp(k, "--items")) items = atoi(v);
    else if (!strcmp(k, "--rate")) rate = atof(v); else if (!strcmp(k, "--mute")) mute = atoi(v);
    else if (!strcmp(k, "--late")) late_ms = atof(v);
    else { fprintf(stderr, "unknown option %s\n", k); return 2; }
  }
  if (argc % 2 == 0 || port <= 0 || port > 65535 || sessions < 1 || sessions > 200000 || mute < 0 || mute > 200000 || per < 1 || per > 100 || items < 1
      || items > 1000000
      || seconds <= 0 || warmup < 0 || rate <= 0 || !(late_ms >= 0)) {
    fprintf(stderr, "usage: loadgen --connect-port P [--sessions N] [--seconds S] [--warmup S] [--items-per-session N] [--items N] [--rate R] [--mute N] [--late MS]\n");
    return 2;
  }
  struct rlimit rl; getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);
  histogram = calloc(BUCKETS, sizeof *histogram);
  Conn *conns = calloc((size_t)sessions + (size_t)mute, sizeof *conns);
  if (!histogram || !conns) { perror("calloc"); return 1; }
  int ep = epoll_create1(0), one = 1;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  const char *upgrade = "GET /lightstreamer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n\r\n";
  double t0 = now_ns() / 1e9;
  // Mute sessions are interleaved with the readers (every sessions/mute-th), so that both
  // kinds spread over the server's event loops alike.
  for (int i = 0; i < sessions + mute; i++) {
    Conn *c = &conns[i];
    long total = (long)sessions + mute;
    int muted = ((long)i + 1) * mute / total > (long)i * mute / total;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    if (c->fd >= 0 && muted) setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    if (c->fd < 0 || connect(c->fd, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // The handshake is read blocking, for at most 10 s per read.
    struct timeval limit = { .tv_sec = 10 };
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (write_all(c->fd, upgrade, strlen(upgrade))) { perror("write"); return 1; }
    // The 101 response, up to its blank line (nothing follows it before `wsok`).
    int got = 0;
    while (got < 4 || memcmp(c->buf + got - 4, "\r\n\r\n", 4) != 0) {
      if (got >= BUF - 1) { fprintf(stderr, "handshake response too long\n"); return 1; }
      ssize_t r = read(c->fd, c->buf + got, 1);
      if (r <= 0) { fprintf(stderr, "handshake %d: connection closed or no answer within 10 s\n", i); return 1; }
      got += (int)r;
    }
    if (got < 12 || memcmp(c->buf, "HTTP/1.1 101", 12) != 0) { fprintf(stderr, "handshake %d refused: %.40s\n", i, c->buf); return 1; }
    char group[1200] = "", add[1600]; int first = (i * per) % items; size_t gl = 0;
    for (int k = 0; k < per; k++) {
      int w = snprintf(group + gl, sizeof group - gl, "%sload%d", k ? "%20" : "", (first + k) % items);
      if (w < 0 || (size_t)w >= sizeof group - gl) { fprintf(stderr, "item group of %d items too long\n", per); return 2; }
      gl += (size_t)w;
    }
    int w = snprintf(add, sizeof add, "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=%s&LS_schema=ts&LS_ack=false", group);
    if (w < 0 || (size_t)w >= sizeof add) { fprintf(stderr, "subscription request too long\n"); return 2; }
    unsigned char out[2048]; size_t n = frame(out, 0, "wsok");
    n = frame(out, n, "create_session\r\nLS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_adapter_set=LOAD&LS_send_sync=false");
    n = frame(out, n, add);
    if (write_all(c->fd, out, n)) { perror("write"); return 1; }
    c->len = 0;
    if (muted) continue;
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
    // The sessions already open are read while the others open, as clients would: unread
    // for as long as it takes to open thousands (minutes past the machine's capacity), they
    // would be held, then closed by the server as clients that stopped reading.
    if (i % 16 == 15) read_ready(ep, 0);
  }
  double ready_by = now_ns() / 1e9 + 120, measure_start = 0, measure_end = 0, cpu0 = 0; int phase = 0;
  for (;;) {
    double t = now_ns() / 1e9;
    if (phase == 0 && (subscribed + errors >= sessions || t > ready_by)) {
      printf("load: %ld of %d sessions subscribed (%ld errors) in %.2f seconds\n", subscribed, sessions, errors, t - t0);
      fflush(stdout); phase = 1; measure_start = t + warmup;
    }
    if (phase == 1 && t >= measure_start) { recording = 1; record_start_ns = now_ns(); cpu0 = process_cpu_seconds(); measure_start = t; phase = 2; }
    if (phase == 2 && t - measure_start >= seconds) { recording = 0; measure_end = t; report_late(); break; }
    read_ready(ep, 10);
  }
  double elapsed = measure_end - measure_start, cpu = process_cpu_seconds() - cpu0, expected = (double)sessions * per * rate;
  printf("load: %d sessions x %d items x %.0f/s: expected %.0f updates/s, delivered %.0f updates/s (%.1f%%); latency p50 %.1f ms, "
         "p99 %.1f ms, p99.9 %.1f ms (%ld samples); load tool CPU %.0f %% of a core\n",
         sessions, per, rate, expected, updates / elapsed, 100 * updates / elapsed / expected, percentile(0.5), percentile(0.99),
         percentile(0.999), samples, 100 * cpu / elapsed);
  for (int i = 0; i < sessions + mute; i++) if (conns[i].fd >= 0) close(conns[i].fd);
  return 0;
}
