#!/usr/bin/env bash
# Heap left behind by WebSocket sessions that have ended: runs BINARY --serve (a build of
# lightstreamer-loadtest, sessions ending 2 s after their stream closes) under heaptrack twice,
# opens SMALL and then LARGE idle sessions (the load tool, held 2 s, then closed as the tool
# exits), waits until the server counts no session, kills it and prints what each ended session
# still holds, by allocation site (Benchmarks/heap-by-site.py: the difference of the two runs
# over LARGE - SMALL, start-up cancelled out). No object of a session should be left: what
# remains are collections that grew to hold LARGE sessions at once and keep their capacity
# (NIO's timer heap and task deque, the session dictionary, the epoll event array), some
# 270 bytes per session of the peak, which do not grow as sessions come and go. A WebSocket's
# handler and its write queue held each other until 2026-11-29: 946 bytes per ended session
# then, every WebSocket ever opened (BENCHMARKS.md, "Smaller sessions; closed WebSockets
# freed").
# Usage: Benchmarks/closed-heap.sh BINARY [SMALL] [LARGE]   (defaults 500 and 2500)
set -euo pipefail
bin=$1; small=${2:-500}; large=${3:-2500}
# shellcheck source=Benchmarks/heaptrack-serve.sh
. "$(dirname "$0")/heaptrack-serve.sh"
run() {  # $1 sessions -> $work/$1.stacks
  serve_under_heaptrack "$1" --session-timeout-seconds 2
  "$bin" --connect-port "$port" --sessions 0 --idle-sessions "$1" --idle-hold-seconds 2 > "$work/client.log" 2>&1
  grep -q "idle WS sessions open" "$work/client.log" || { echo "the load tool opened no sessions:" >&2; cat "$work/client.log" >&2; exit 1; }
  # The server prints its session count every 5 s; two lines at 0 in a row, then stop it.
  for _ in $(seq 120); do
    [ "$(grep -o 'sessions [0-9]*' "$work/server.log" | tail -2 | awk '{print $2}' | paste -sd+)" = "0+0" ] && break
    sleep 1
  done
  stop_server
  leaked_stacks "$1"
}
run "$small"
run "$large"
per_session_by_site "$small" "$large"
