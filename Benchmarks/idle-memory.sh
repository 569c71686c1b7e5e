#!/usr/bin/env bash
# Memory per idle WebSocket session: starts BINARY --serve (a build of lightstreamer-loadtest),
# reads its VmRSS, opens N idle sessions from a second process (create_session, no
# subscription; held 8 s), reads VmRSS again while they are open and prints the difference per
# session. Alternate two binaries a few times to compare builds.
# Usage: Benchmarks/idle-memory.sh BINARY [N]   (default 5000)
#   CLIENT=browser: the sessions come from Benchmarks/browserlike-websockets.py (a browser's
#   792-byte upgrade request) instead of the load tool.
#   CONNECT_BATCH=n: the load tool opens n connections at a time (default 200).
set -euo pipefail
bin=$1; n=${2:-5000}; port=$((21000 + RANDOM % 10000))
log=$(mktemp); drv=$(mktemp)
"$bin" --serve --port "$port" > "$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$drv"' EXIT
sleep 2
before=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
# Line-buffered: the driver's "holding" line must show while the sessions are open.
if [ "${CLIENT:-}" = browser ]; then
  python3 "$(dirname "$0")/browserlike-websockets.py" "$port" "$n" 8 > "$drv" 2>&1 &
else
  stdbuf -oL "$bin" --connect-port "$port" --sessions 0 --idle-sessions "$n" ${CONNECT_BATCH:+--connect-batch "$CONNECT_BATCH"} > "$drv" 2>&1 &
fi
driver=$!
for _ in $(seq 300); do grep -q "holding" "$drv" && break; sleep 0.2; done
sleep 3
during=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
wait "$driver" || true
echo "$(basename "$bin"): RSS ${before} KiB before, ${during} KiB with $n idle sessions: $(( (during - before) * 1024 / n )) bytes per session"
