#!/usr/bin/env bash
# Live heap per idle WebSocket session, by allocation site: runs BINARY --serve (a build of
# lightstreamer-loadtest) under heaptrack twice, holding SMALL and then LARGE idle sessions
# (create_session, no subscription), kills it while they are held, and prints what each added
# session holds (the difference of the two runs over LARGE - SMALL: start-up cancels out),
# with Benchmarks/heap-by-site.py. Unlike RSS, which moves with malloc's arenas from run to
# run, this repeats to a few bytes.
# Usage: Benchmarks/idle-heap.sh BINARY [SMALL] [LARGE]   (defaults 2000 and 6000)
#   CLIENT=browser: the sessions come from Benchmarks/browserlike-websockets.py (a browser's
#   792-byte upgrade request) instead of the load tool.   FRAMES=n: sites n frames deep.
#   CONNECT_BATCH=n: the load tool opens n connections at a time (default 200).   WIDTH=n:
#   sites printed n characters wide (default 160).
set -euo pipefail
bin=$1; small=${2:-2000}; large=${3:-6000}
# shellcheck source=Benchmarks/heaptrack-serve.sh
. "$(dirname "$0")/heaptrack-serve.sh"
run() {  # $1 sessions -> $work/$1.stacks
  serve_under_heaptrack "$1"
  if [ "${CLIENT:-}" = browser ]; then
    python3 "$here/browserlike-websockets.py" "$port" "$1" 60 > "$work/client.log" 2>&1 &
  else
    stdbuf -oL "$bin" --connect-port "$port" --sessions 0 --idle-sessions "$1" --idle-hold-seconds 60 ${CONNECT_BATCH:+--connect-batch "$CONNECT_BATCH"} > "$work/client.log" 2>&1 &
  fi
  local client=$!
  for _ in $(seq 600); do grep -q "holding" "$work/client.log" && break; sleep 0.2; done
  sleep 2
  finish_run "$1" "$client"
}
run "$small"
run "$large"
per_session_by_site "$small" "$large"
