#!/usr/bin/env bash
# CPU per producer tick (100 ms) of each thread of BINARY --serve (a build of
# lightstreamer-loadtest) with two event-loop threads, under SESSIONS WebSocket sessions x 10
# items x 10 updates/s from DRIVER (default BINARY; a build of Benchmarks/loadgen.c works too):
# /proc/PID/task/*/stat (utime + stime) read 10 s apart, 12 s into the run, divided by the 100
# ticks in between. Prints the driver's line too: its latency and its own CPU, which shares the
# machine's cores with the server's threads during each tick's burst.
# Usage: Benchmarks/thread-cpu-per-tick.sh BINARY [SESSIONS]   (default 1000)
set -euo pipefail
bin=$1; n=${2:-1000}; driver=${DRIVER:-$bin}
port=$((21000 + RANDOM % 10000))
log=$(mktemp); drv=$(mktemp); t0=$(mktemp); t1=$(mktemp)
"$bin" --serve --port "$port" --server-threads 2 > "$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$drv" "$t0" "$t1"' EXIT
sleep 2
"$driver" --connect-port "$port" --sessions "$n" --seconds 24 > "$drv" 2>&1 &
load=$!
snapshot() {  # "thread-name_tid ticks" for every thread of the server
  for t in /proc/"$server"/task/*; do
    echo "$(tr ' ' _ < "$t/comm")_${t##*/} $(awk '{print $14 + $15}' "$t/stat")"
  done | sort
}
sleep 12
snapshot > "$t0"
sleep 10
snapshot > "$t1"
hz=$(getconf CLK_TCK)
join "$t0" "$t1" | awk -v hz="$hz" '{d = $3 - $2; if (d > 0) printf "%s: %.2f ms CPU per tick\n", $1, d * 1000 / hz / 100}'
wait "$load" || true
tail -1 "$drv"
