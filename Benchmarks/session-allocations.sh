#!/usr/bin/env bash
# Heap allocations per idle WebSocket session opened: runs BINARY --serve (a build of
# lightstreamer-loadtest) under heaptrack twice, opening SMALL and then LARGE idle sessions
# (the load tool, 200 handshakes at a time, no subscription), and prints the difference of the
# two runs' allocation calls over LARGE - SMALL: what accepting, upgrading and creating one
# session allocates, start-up cancelled out. Short-lived allocations made between the objects
# a session keeps are what leaves idle sessions opened in bursts with more RSS than sessions
# opened one after the other (BENCHMARKS.md, "Allocations of a session's creation"). Unlike
# RSS, the count repeats from run to run.
# Usage: Benchmarks/session-allocations.sh BINARY [SMALL] [LARGE]   (defaults 500 and 2500)
set -euo pipefail
bin=$1; small=${2:-500}; large=${3:-2500}
work=$(mktemp -d)
p1=$((21000 + RANDOM % 4000)); p2=$((p1 + 4000))
trap 'pkill -9 -f "$bin --serve --port ($p1|$p2)" 2>/dev/null || true; rm -rf "$work"' EXIT
calls() {  # $1 sessions, $2 port -> allocation calls of the whole run
  local port=$2
  ( heaptrack -o "$work/h$1" "$bin" --serve --port "$port" > "$work/server.log" 2>&1 & )
  sleep 5
  stdbuf -oL "$bin" --connect-port "$port" --sessions 0 --idle-sessions "$1" --idle-hold-seconds 3 > "$work/driver.log" 2>&1
  pkill -9 -f "$bin --serve --port $port"
  sleep 3
  heaptrack_print "$work/h$1.zst" 2>/dev/null | awk '/calls to allocation functions/ && !n++ {print $1}'
}
a=$(calls "$small" "$p1"); b=$(calls "$large" "$p2")
awk -v a="$a" -v b="$b" -v n="$((large - small))" -v name="$(basename "$bin")" 'BEGIN {
  printf "%s: %d allocation calls with %d more sessions: %.1f per session\n", name, b - a, n, (b - a) / n }'
