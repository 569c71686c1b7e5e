#!/usr/bin/env bash
# What clients that stop reading cost: BINARY --serve (a build of lightstreamer-loadtest, two
# event-loop threads) with READERS reading sessions and MUTED sessions of the C load generator's
# --mute kind (the same subscription, 10 MERGE items at 10 updates/s, a 4 KiB receive buffer,
# never read past the handshake). Every 5 s it prints the server's RSS, the kernel's memory for
# TCP (/proc/net/sockstat, all sockets of the machine: mostly the server's send queues towards
# the muted sessions) and the updates the server folded away in the last 5 s (a session held
# behind a full socket keeps each item's latest row); then the load generator's line for the
# readers (delivered rate, latency p50/p99/p99.9 from the `ts` the producer wrote).
# Usage: LOADGEN=/tmp/loadgen Benchmarks/slow-readers.sh BINARY [MUTED] [SECONDS] [READERS]
#   (defaults 3000, 60, 100; LOADGEN: a build of Benchmarks/loadgen.c, gcc -O2)
#   SERVE_FLAGS="...": more options for the --serve process.
set -euo pipefail
bin=$1; muted=${2:-3000}; secs=${3:-60}; readers=${4:-100}
loadgen=${LOADGEN:-/tmp/loadgen}
port=19094
log=$(mktemp); drv=$(mktemp)
trap 'rm -f "$log" "$drv"' EXIT
tcp_mib() { awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") printf "%.1f", $(i + 1) * 4096 / 1048576 }' /proc/net/sockstat; }
echo "kernel TCP memory before: $(tcp_mib) MiB"
# shellcheck disable=SC2086 # SERVE_FLAGS holds several options.
"$bin" --serve --port "$port" --server-threads 2 ${SERVE_FLAGS:-} > "$log" 2>&1 &
server=$!
sleep 2
"$loadgen" --connect-port "$port" --sessions "$readers" --mute "$muted" --seconds "$secs" > "$drv" 2>&1 &
client=$!
# One line per --serve window: its time, RSS and folded updates, with the kernel's TCP memory
# read as the window's line comes.
seen=0; start=$(date +%s)
while kill -0 "$client" 2>/dev/null; do
  n=$(grep -c "µs per update" "$log" || true)
  if [ "$n" -gt "$seen" ]; then
    seen=$n
    grep "µs per update" "$log" | tail -1 \
      | sed 's/.*sessions \([0-9]*\), RSS \([0-9.]*\) MiB.*, \([0-9]*\) conflated\/s.*/\1 \2 \3/' \
      | { read -r s rss folded
          printf "%4ds: %s sessions, server RSS %s MiB, kernel TCP %s MiB, folded %s/s\n" \
            $(($(date +%s) - start)) "$s" "$rss" "$(tcp_mib)" "$folded"; }
  fi
  sleep 0.5
done
wait "$client" || true
kill "$server"; wait "$server" 2>/dev/null || true
echo "readers: $(tail -1 "$drv")"
