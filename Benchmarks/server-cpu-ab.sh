#!/usr/bin/env bash
# Server CPU per delivered update, for A/B comparisons of two builds of lightstreamer-loadtest.
# Usage: Benchmarks/server-cpu-ab.sh BINARY [SESSIONS] [SECONDS]   (defaults 1000 and 25)
#   DRIVER=path: the lightstreamer-loadtest build that drives the load (default BINARY), so that
#   two servers are measured by the same load tool. A build of Benchmarks/loadgen.c (the same
#   sessions and final line, in C, at about 60 % of the Swift tool's CPU) works here too.
#   SERVER_THREADS=n: the server's event-loop threads (the --serve default is 1).
#   SERVE_FLAGS="...": more options for the --serve process (e.g. --per-item-updates).
#   DRIVER_FLAGS="...": more options for the load tool (e.g. --rate 20 beside SERVE_FLAGS="--rate
#   20", or the C load generator's --mute N: slow readers, Benchmarks/slow-readers.sh).
#   SERVER_CPUS=list, DRIVER_CPUS=list: run the server, or the load tool, on those CPUs only
#   (`taskset -c`, e.g. SERVER_CPUS=0 DRIVER_CPUS=1). Unpinned, the kernel tends to wake the
#   load tool on the CPU of the server thread that wrote to it, and the two then take turns on
#   one core while the other idles; the latency measured then includes the load tool's turns
#   (BENCHMARKS.md, "The load tool on its own core").
# Starts BINARY --serve on port 19090, runs BINARY as the driver (SESSIONS WebSocket sessions x
# 10 items x 10 updates/s), and averages the "µs per update" the --serve process printed for its
# 5-second windows after the first (connect and warm-up), keeping windows where at least 90 % of
# the offered rate went out. Then prints the server's RSS at each window and the driver's line:
# delivered rate, latency p50/p99/p99.9 (from the `ts` the producer wrote, same clock) and the
# driver's own CPU, and the server's write-type system calls per second.
# Alternate the two binaries several times: single runs on a shared machine spread by ±15 %.
set -euo pipefail
bin=$1; n=${2:-1000}; secs=${3:-25}
log=$(mktemp); drv=$(mktemp)
trap 'rm -f "$log" "$drv" "$sysw"' EXIT
# shellcheck disable=SC2086 # SERVE_FLAGS and DRIVER_FLAGS hold several options.
${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} "$bin" --serve --port 19090 ${SERVER_THREADS:+--server-threads "$SERVER_THREADS"} ${SERVE_FLAGS:-} > "$log" 2>&1 &
server=$!
sleep 2
# Write-type system calls of the server per second over 5 s in the middle of the run
# (/proc/PID/io `syscw`: writev to sockets, plus the eventfd writes that wake an event loop).
sysw=$(mktemp)
( sleep $((secs / 2)); a=$(awk '/syscw/ {print $2}' /proc/$server/io); sleep 5
  b=$(awk '/syscw/ {print $2}' /proc/$server/io); echo $(( (b - a) / 5 )) > "$sysw" ) &
# shellcheck disable=SC2086
${DRIVER_CPUS:+taskset -c "$DRIVER_CPUS"} "${DRIVER:-$bin}" --connect-port 19090 --sessions "$n" --seconds "$secs" ${DRIVER_FLAGS:-} > "$drv" 2>&1
sleep 1
kill "$server"; wait "$server" 2>/dev/null || true
awk -v n="$n" '/µs per update/ {
    for (i = 1; i <= NF; i++) { if ($i == "updates/s,") u = $(i - 1); if ($i == "µs") v = $(i - 1) }
    c++; if (c > 1 && u > n * 90) { s += v; k++ } }
  END { if (k) printf "%.2f µs CPU per update over %d windows; ", s / k, k; else printf "no steady window; " }' "$log"
printf "server RSS per 5 s window %s MiB; " "$(grep "µs per update" "$log" | sed 's/.*RSS \([0-9.]*\) MiB.*/\1/' | paste -sd/)"
wait || true
printf "write syscalls %s/s; " "$(cat "$sysw")"
tail -1 "$drv" | sed 's/.*delivered/delivered/'
