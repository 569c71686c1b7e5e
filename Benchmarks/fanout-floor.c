// Floor of the fan-out benchmark: a server in C that does only the socket work of
// `lightstreamer-loadtest --serve` in the same shape, for Benchmarks/loadgen.c (or the Swift
// load tool) to measure on the same machine. It answers the load tool's WebSocket handshake,
// `wsok`, `create_session` and its one `add` (items `loadN` read from `LS_group`), and every
// 100 ms takes one timestamp for all items (CLOCK_MONOTONIC ns, as the server's producer
// does) and writes each session one text frame with a `U` line per item of its subscription
// (`U,1,<pos>,<ts>`), from T threads that each own every T-th session. No TLCP engine, no
// recovery log, no allocation per update: what is left is formatting the lines and one
// `write` per session and tick, the cost any server pays on this machine's loopback.
//
// Build: gcc -O2 -pthread -o /tmp/fanout-floor Benchmarks/fanout-floor.c
// Run:   /tmp/fanout-floor 19090 2 &   (port, writer threads)
//        /tmp/loadgen --connect-port 19090 --sessions 5000 --seconds 20
// It prints the writers' CPU (utime + stime) per delivered update every 5 s. A session whose
// client left is closed; a frame that does not fit in the socket's buffer is counted, not sent.
// A third argument P (1 to 100, default 1) spreads the items over the period as
// `lightstreamer-loadtest --serve --phases P` does: items load0...load99 in P groups of
// consecutive numbers, one group every 100 ms / P, each session written with its group (the
// group of its first item, as the load tools give each session consecutive items).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

#define MAX_SESSIONS 200000
#define MAX_ITEMS 100
#define MAX_THREADS 16
#define LOAD_ITEMS 100  // the load tools' default item count, which the phases divide

typedef struct { int fd; int count; int phase; int items[MAX_ITEMS]; } Session;

static Session *sessions;
static int session_count, threads = 1, phases = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cond = PTHREAD_COND_INITIALIZER;
static long tick_number;
static int tick_phase;
static int64_t tick_ts;
static long written_updates[MAX_THREADS], dropped[MAX_THREADS];

// An unmasked server text frame around `text` (payloads under 64 KiB).
static size_t server_frame(unsigned char *out, const char *text, size_t n) {
  size_t h = 0; out[h++] = 0x81;
  if (n < 126) out[h++] = (unsigned char)n; else { out[h++] = 126; out[h++] = (unsigned char)(n >> 8); out[h++] = (unsigned char)n; }
  memcpy(out + h, text, n);
  return h + n;
}

static int send_text(int fd, const char *text) {
  unsigned char out[256]; size_t n = strlen(text);
  if (n > 200) return -1;
  return write_all(fd, out, server_frame(out, text, n));
}

// Reads exactly n bytes before `deadline` (CLOCK_MONOTONIC ns): a client that sends its
// handshake byte by byte cannot hold the accepting thread for longer.
static int recv_all(int fd, void *p, size_t n, int64_t deadline) {
  char *c = p; size_t got = 0;
  while (got < n) {
    int64_t left = deadline - now_ns();
    if (left <= 0) return -1;
    struct timeval tv = { .tv_sec = left / 1000000000, .tv_usec = (left % 1000000000) / 1000 };
    if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;  // zero would mean no timeout
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t r = recv(fd, c + got, n - got, 0);
    if (r <= 0) { if (r < 0 && errno == EINTR) continue; return -1; }
    got += (size_t)r;
  }
  return 0;
}

// Reads one masked client frame into `text`.
static int read_frame(int fd, char *text, size_t cap, int64_t deadline) {
  unsigned char h[14]; size_t n;
  if (recv_all(fd, h, 2, deadline)) return -1;
  if (!(h[1] & 0x80)) return -1;  // client frames are masked (RFC 6455 §5.1)
  n = h[1] & 0x7f;
  if (n == 126) { if (recv_all(fd, h + 2, 2, deadline)) return -1; n = ((size_t)h[2] << 8) | h[3]; }
  else if (n == 127) return -1;
  if (n + 1 > cap || recv_all(fd, h + 4, 4, deadline)) return -1;
  if (n && recv_all(fd, text, n, deadline)) return -1;
  for (size_t i = 0; i < n; i++) text[i] ^= h[4 + i % 4];
  text[n] = 0;
  return 0;
}

// The handshake and the three requests the load tool sends; the session's items from LS_group.
static int open_session(int fd, Session *s) {
  // The whole exchange within 10 s.
  int64_t deadline = now_ns() + 10000000000LL;
  char req[4096]; size_t got = 0;
  while (got < 4 || memcmp(req + got - 4, "\r\n\r\n", 4) != 0) {
    if (got >= sizeof req - 1 || recv_all(fd, req + got, 1, deadline)) return -1;
    got++;
  }
  // Any key works for the load tools, which do not check the accept value.
  const char *reply = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n\r\n";
  if (write_all(fd, reply, strlen(reply))) return -1;
  char text[4096];
  for (int k = 0; k < 3; k++) {
    if (read_frame(fd, text, sizeof text, deadline)) return -1;
    if (!strncmp(text, "wsok", 4)) { if (send_text(fd, "WSOK\r\n")) return -1; }
    else if (!strncmp(text, "create_session", 14)) { if (send_text(fd, "CONOK,S1,50000,5000,*\r\n")) return -1; }
    else if (!strncmp(text, "control", 7)) {
      const char *g = strstr(text, "LS_group=");
      if (!g) return -1;
      s->count = 0;
      for (const char *p = g + 9; (p = strstr(p, "load")) && s->count < MAX_ITEMS; p += 4) s->items[s->count++] = atoi(p + 4);
      if (send_text(fd, "SUBOK,1,10,1\r\n")) return -1;
    } else return -1;
  }
  return 0;
}

// Writes the sessions i ≡ id (mod threads) one frame each per tick.
static void *writer(void *arg) {
  int id = (int)(intptr_t)arg; long seen = 0;
  unsigned char out[MAX_ITEMS * 40 + 16]; char text[MAX_ITEMS * 40];
  for (;;) {
    pthread_mutex_lock(&lock);
    while (tick_number == seen) pthread_cond_wait(&tick_cond, &lock);
    seen = tick_number; int64_t ts = tick_ts; int count = session_count, phase = tick_phase;
    pthread_mutex_unlock(&lock);
    for (int i = id; i < count; i += threads) {
      Session *s = &sessions[i];
      if (s->fd < 0 || s->phase != phase) continue;
      size_t n = 0;
      for (int k = 0; k < s->count; k++) {
        int w = snprintf(text + n, sizeof text - n, "U,1,%d,%lld\r\n", k + 1, (long long)ts);
        if (w < 0 || (size_t)w >= sizeof text - n) break;  // never: 100 lines of at most 30 bytes
        n += (size_t)w;
      }
      size_t len = server_frame(out, text, n);
      ssize_t w = write(s->fd, out, len);
      if (w == (ssize_t)len) written_updates[id] += s->count;
      else if (w < 0 && errno != EAGAIN && errno != EINTR) { close(s->fd); s->fd = -1; }  // the client left
      else dropped[id]++;
    }
  }
  return NULL;
}

static void *ticker(void *arg) {
  (void)arg;
  int64_t next = now_ns();
  for (;;) {
    next += 100000000 / phases;
    int64_t wait = next - now_ns();
    if (wait > 0) { struct timespec t = { .tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000 }; nanosleep(&t, NULL); }
    pthread_mutex_lock(&lock);
    tick_phase = (int)(tick_number % phases); tick_number++; tick_ts = now_ns();
    pthread_cond_broadcast(&tick_cond);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void *reporter(void *arg) {
  (void)arg;
  long last = 0; double cpu0 = process_cpu_seconds();
  for (;;) {
    sleep(5);
    long total = 0, drops = 0;
    for (int i = 0; i < threads; i++) { total += written_updates[i]; drops += dropped[i]; }
    double cpu = process_cpu_seconds();
    if (total > last)
      printf("fanout-floor: %d sessions, %.0f updates/s, %.2f µs CPU per update, %ld frames not written whole\n",
             session_count, (total - last) / 5.0, (cpu - cpu0) * 1e6 / (double)(total - last), drops);
    fflush(stdout);
    last = total; cpu0 = cpu;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 19090;
  threads = argc > 2 ? atoi(argv[2]) : 1;
  phases = argc > 3 ? atoi(argv[3]) : 1;
  if (port <= 0 || port > 65535 || threads < 1 || threads > MAX_THREADS || phases < 1 || phases > LOAD_ITEMS) {
    fprintf(stderr, "usage: fanout-floor [PORT] [THREADS 1...%d] [PHASES 1...%d]\n", MAX_THREADS, LOAD_ITEMS);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a client that left makes write fail with EPIPE instead
  struct rlimit rl; getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);
  sessions = calloc(MAX_SESSIONS, sizeof *sessions);
  if (!sessions) { perror("calloc"); return 1; }
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  if (l < 0 || bind(l, (void *)&a, sizeof a) || listen(l, 4096)) { perror("listen"); return 1; }
  pthread_t t;
  for (int i = 0; i < threads; i++) if (pthread_create(&t, NULL, writer, (void *)(intptr_t)i)) { perror("pthread_create"); return 1; }
  if (pthread_create(&t, NULL, ticker, NULL) || pthread_create(&t, NULL, reporter, NULL)) { perror("pthread_create"); return 1; }
  for (;;) {
    int fd = accept(l, NULL, NULL);
    if (fd < 0) { if (errno == EINTR || errno == ECONNABORTED) continue; perror("accept"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_mutex_lock(&lock);
    int slot = session_count < MAX_SESSIONS ? session_count : -1;
    pthread_mutex_unlock(&lock);
    Session s = { .fd = fd };
    if (slot < 0 || open_session(fd, &s)) { close(fd); continue; }
    int first = s.count > 0 ? s.items[0] : 0;
    s.phase = first >= 0 && first < LOAD_ITEMS ? first * phases / LOAD_ITEMS : 0;
    // Writes never block a writer thread: a frame that does not fit is counted and skipped.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    pthread_mutex_lock(&lock);
    sessions[slot] = s; session_count = slot + 1;
    pthread_mutex_unlock(&lock);
  }
}
