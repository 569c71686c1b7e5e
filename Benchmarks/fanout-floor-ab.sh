#!/usr/bin/env bash
# The fan-out benchmark's floor beside the server: alternates Benchmarks/fanout-floor.c (the
# same socket work in C, nothing else) and BINARY --serve (through server-cpu-ab.sh), both
# measured by the same load generator, so that the server's latency can be read against what
# the machine's loopback allows in the same hour.
# Usage: Benchmarks/fanout-floor-ab.sh BINARY [SESSIONS] [PAIRS] [THREADS]
#   (defaults 1000, 3, 2: the floor's writer threads and the server's event-loop threads)
#   DRIVER=path: the load generator (default /tmp/loadgen, a build of Benchmarks/loadgen.c).
#   FLOOR=path: a build of fanout-floor.c (default: built into a temporary file).
#   PHASES=P: items updated in P groups spread over each period, in both (the floor's third
#   argument, the server's --phases); default 1, every item at the same moment.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1; n=${2:-1000}; pairs=${3:-3}; threads=${4:-2}; driver=${DRIVER:-/tmp/loadgen}; phases=${PHASES:-1}
log=$(mktemp); floor=${FLOOR:-}; built=""
trap 'rm -f "$log" $built' EXIT
if [ -z "$floor" ]; then floor=$(mktemp); built=$floor; gcc -O2 -pthread -o "$floor" Benchmarks/fanout-floor.c; fi
[ -x "$driver" ] || gcc -O2 -o "$driver" Benchmarks/loadgen.c
for _ in $(seq "$pairs"); do
  "$floor" 19090 "$threads" "$phases" > "$log" 2>&1 &
  f=$!
  sleep 1
  result=$("$driver" --connect-port 19090 --sessions "$n" --seconds 20 | tail -1 | sed 's/.*delivered/delivered/')
  kill "$f"; wait "$f" 2>/dev/null || true
  echo "floor  $n: $result | floor $(tail -1 "$log" | sed 's/.*updates\/s, //')"
  sleep 1
  echo "server $n: $(SERVER_THREADS=$threads DRIVER=$driver SERVE_FLAGS="--phases $phases ${SERVE_FLAGS:-}" Benchmarks/server-cpu-ab.sh "$bin" "$n" 20 | sed 's/server RSS.*write syscalls/write syscalls/')"
  sleep 1
done
