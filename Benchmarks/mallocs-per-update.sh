#!/usr/bin/env bash
# Heap allocations (calls to libc's malloc) per delivered update, with sockets: starts BINARY
# --serve (a build of lightstreamer-loadtest) with two event-loop threads, drives SESSIONS
# WebSocket sessions x 10 items x 10 updates/s from DRIVER (default BINARY; a build of
# Benchmarks/loadgen.c works too), counts the server's malloc calls over WINDOW seconds after an
# 8-second warm-up with a uprobe (`perf probe`, needs root and a perf with uprobe support), and
# divides by the updates delivered in that window (the driver's delivered rate x WINDOW).
# Unlike CPU time, the count repeats from run to run within about 1 %, so a change of one
# allocation per session write (0.1 per update at 10 updates a write) shows in one run.
# The server runs on glibc's malloc here (LIGHTSTREAMER_MALLOC=system): on mimalloc, which it
# prefers when installed (docs/CONFIG.md, "Memory allocator"), libc's malloc is not called.
# Usage: Benchmarks/mallocs-per-update.sh BINARY [SESSIONS] [WINDOW]   (defaults 1000 and 10)
set -euo pipefail
bin=$1; n=${2:-1000}; window=${3:-10}
driver=${DRIVER:-$bin}
libc=$(ldd "$bin" | awk '/libc\.so\.6/ {print $3}')
perf probe -q -x "$libc" --add malloc 2> /dev/null || true
probes=$(perf probe -l 2> /dev/null || true)
grep -q 'probe_libc:malloc' <<< "$probes" || { echo "no probe_libc:malloc: perf probe failed (root and uprobes needed)" >&2; exit 1; }
port=$((21000 + RANDOM % 10000))
log=$(mktemp); drv=$(mktemp); stat=$(mktemp)
LIGHTSTREAMER_MALLOC=system "$bin" --serve --port "$port" --server-threads 2 > "$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$drv" "$stat"' EXIT
sleep 2
"$driver" --connect-port "$port" --sessions "$n" --seconds $((window + 12)) > "$drv" 2>&1 &
load=$!
sleep 8
perf stat -e probe_libc:malloc -p "$server" -x, -o "$stat" -- sleep "$window" 2> /dev/null
wait "$load" || true
calls=$(awk -F, '/probe_libc:malloc/ {print $1}' "$stat")
rate=$(grep -o 'delivered [0-9]* updates/s' "$drv" | tail -1 | awk '{print $2}')
awk -v c="$calls" -v r="$rate" -v w="$window" -v name="$(basename "$bin")" -v n="$n" 'BEGIN {
  printf "%s: %d sessions, %d malloc calls in %d s, %d updates/s delivered: %.3f per update\n", name, n, c, w, r, c / (r * w) }'
