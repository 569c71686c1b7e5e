#!/usr/bin/env bash
# CPU of keepalive PROBEs: starts BINARY --serve (a build of lightstreamer-loadtest), opens N
# idle WebSocket sessions from a second process (DRIVER, a build of lightstreamer-loadtest with
# --idle-hold-seconds, default BINARY; no subscription, the server's default 5 s keepalive,
# held 30 s), and reads the --serve process's CPU time (the sum of its threads'
# /proc/PID/task/*/schedstat, in ns) over 20 s, starting 3 s after they are all open. With nothing else to do, the server's CPU
# is the PROBEs (one per session every 5 s) and the loop's own wake-ups; the script prints
# the CPU per PROBE. Alternate two binaries a few times to compare builds.
# Usage: Benchmarks/idle-probe-cpu.sh BINARY [N]   (default 5000)
#   SERVER_CPUS=list, DRIVER_CPUS=list: run the server, or the load tool, on those CPUs only
#   (`taskset -c`), as in server-cpu-ab.sh.
set -euo pipefail
bin=$1; n=${2:-5000}; port=$((21000 + RANDOM % 10000)); window=20
log=$(mktemp); drv=$(mktemp)
${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} "$bin" --serve --port "$port" > "$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$drv"' EXIT
sleep 2
# Line-buffered: the driver's "holding" line must show while the sessions are open.
${DRIVER_CPUS:+taskset -c "$DRIVER_CPUS"} stdbuf -oL "${DRIVER:-$bin}" --connect-port "$port" --sessions 0 --idle-sessions "$n" --idle-hold-seconds 30 > "$drv" 2>&1 &
driver=$!
for _ in $(seq 300); do grep -q "holding" "$drv" && break; sleep 0.2; done
sleep 3
ticks() { cat /proc/$server/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }
t0=$(ticks); sleep "$window"; t1=$(ticks)
wait "$driver" || true
awk -v t="$((t1 - t0))" -v hz=1000000000 -v n="$n" -v w="$window" -v b="$(basename "$bin")" 'BEGIN {
  cpu = t / hz; probes = n * w / 5
  printf "%s: %d idle sessions, %.2f s CPU in %d s: %.1f µs per PROBE (%.1f %% of a core)\n", b, n, cpu, w, cpu * 1e6 / probes, 100 * cpu / w }'
