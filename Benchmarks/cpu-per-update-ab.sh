#!/usr/bin/env bash
# Server CPU per delivered update, user and system apart, for alternated builds of
# lightstreamer-loadtest, with the server and the load tool each on its own core.
# Usage: Benchmarks/cpu-per-update-ab.sh SESSIONS ROUNDS BINARY...   (e.g. 1000 4 /tmp/a /tmp/b)
#   DRIVER=path: the lightstreamer-loadtest build that drives the load (default: the first
#   BINARY), so that every server is measured by the same load tool; or a build of
#   Benchmarks/loadgen.c.
# For each round and each BINARY: starts `BINARY --serve` on CPU 0, runs the load tool on CPU 1
# for 30 s (SESSIONS WebSocket sessions x 10 items x 10 updates/s), reads the server's utime and
# stime (/proc/PID/stat) at second 8 and second 28, and prints them per delivered update with
# the load tool's latency line. The kernel accounts CPU time in ticks: the user/system split of
# one run is rough, their sum is the figure to compare. Runs spread by several per cent on this
# VM: alternate the builds, compare means over rounds.
set -euo pipefail
n=$1; rounds=$2; shift 2
driver=${DRIVER:-$1}
port=$((21000 + RANDOM % 10000))
out=$(mktemp); drv=$(mktemp); log=$(mktemp)
trap 'rm -f "$out" "$drv" "$log"' EXIT
hz=$(getconf CLK_TCK)
for _ in $(seq "$rounds"); do
  for bin in "$@"; do
    taskset -c 0 "$bin" --serve --port "$port" > "$log" 2>&1 &
    server=$!
    sleep 2
    ( sleep 6; a=$(awk '{print $14, $15}' "/proc/$server/stat"); sleep 20
      b=$(awk '{print $14, $15}' "/proc/$server/stat"); echo "$a $b" > "$out" ) &
    taskset -c 1 "$driver" --connect-port "$port" --sessions "$n" --seconds 30 > "$drv" 2>&1
    wait $!
    kill "$server"; wait "$server" 2>/dev/null || true
    read -r u1 s1 u2 s2 < "$out"
    rate=$(tail -1 "$drv" | sed 's/.*delivered \([0-9]*\) updates.*/\1/')
    latency=$(tail -1 "$drv" | sed 's/.*latency \(.*\) (.*/\1/')
    awk -v b="$(basename "$bin")" -v u=$((u2 - u1)) -v s=$((s2 - s1)) -v r="$rate" -v hz="$hz" -v l="$latency" 'BEGIN {
      k = 1e6 / hz / (r * 20)
      printf "%-14s user %.3f sys %.3f total %.3f µs per update; %s\n", b, u * k, s * k, (u + s) * k, l }'
  done
done
