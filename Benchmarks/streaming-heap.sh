#!/usr/bin/env bash
# Live heap per streaming WebSocket session, by allocation site: BINARY --serve (a build of
# lightstreamer-loadtest, two event-loop threads) under heaptrack twice, with 100 reading
# sessions beside SMALL and then LARGE sessions of the C load generator's --mute kind (the same
# subscription, 10 MERGE items at 10 updates/s, never read), killed SECONDS - 5 s in; prints
# what each added session holds (LARGE - SMALL; Benchmarks/heap-by-site.py).
# What the muted sessions are depends on SECONDS: since the server bounds what the kernel keeps
# unsent (`front.maxSocketUnsentBytes`), they are held behind their full sockets a few seconds
# in (SECONDS 25: about 27 KB each, NIO's frames and the log's pages), and closed at about
# 30 s (`maxUndrainedMillis`), their sessions waiting unbound for a recovery (the default 40:
# about 9 KB each). With SERVE_FLAGS="--max-socket-unsent-bytes 0" they stream into the
# kernel instead, and hold their recovery log (the `--serve` window is 2 s, about 200 lines).
# Usage: LOADGEN=/tmp/loadgen Benchmarks/streaming-heap.sh BINARY [SMALL] [LARGE] [SECONDS]
#   (defaults 1000, 3000, 40; LOADGEN: a build of Benchmarks/loadgen.c)   FRAMES=n: sites n
#   frames deep.   SERVE_FLAGS="...": more options for the --serve process.
set -euo pipefail
bin=$1; small=${2:-1000}; large=${3:-3000}; secs=${4:-40}
loadgen=${LOADGEN:-/tmp/loadgen}
# shellcheck source=Benchmarks/heaptrack-serve.sh
. "$(dirname "$0")/heaptrack-serve.sh"
run() {  # $1 muted sessions -> $work/$1.stacks
  # shellcheck disable=SC2086 # SERVE_FLAGS holds several options.
  serve_under_heaptrack "$1" --server-threads 2 ${SERVE_FLAGS:-}
  "$loadgen" --connect-port "$port" --sessions 100 --mute "$1" --seconds "$secs" > "$work/client$1.log" 2>&1 &
  local client=$!
  sleep $((secs - 5))
  finish_run "$1" "$client"
}
run "$small"
run "$large"
per_session_by_site "$small" "$large"
