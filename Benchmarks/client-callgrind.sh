#!/usr/bin/env bash
# Instructions, heap allocations and CPU time per update through the client's delivery path.
# Instructions are counted by valgrind's callgrind, allocations by memcheck's heap summary (both
# repeatable whatever else the machine is doing); the CPU time is a plain run's getrusage.
# Usage: Benchmarks/client-callgrind.sh [N]   (CLIENT_OPS=path measures another build of client-ops)
#   engine:  one U line -> SessionEngine -> ItemUpdate -> delegate, one thread (EngineDeliveryBench)
#   runtime: batches of 64 lines through the engine queue and the callback queue (ClientDeliveryBench)
set -euo pipefail
cd "$(dirname "$0")"
[ -n "${CLIENT_OPS:-}" ] || swift build -c release --product client-ops >&2
built=${CLIENT_OPS:-$(swift build -c release --show-bin-path)/client-ops}
# valgrind gives up on the DWARF of this toolchain's binaries: a copy without it (symbols stay).
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
objcopy --strip-debug "$built" "$bin"
n=${1:-100000}
instructions() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 | awk '/refs:/ {gsub(",", "", $NF); print $NF}'; }
allocations() { valgrind --tool=memcheck --leak-check=no "$bin" "$1" "$2" 2>&1 | awk '/total heap usage/ {gsub(",", "", $5); print $5}'; }
for op in engine runtime; do
  i=$(( ($(instructions "$op" "$n") - $(instructions "$op" 0)) / n ))
  m=$(awk -v a="$(allocations "$op" "$n")" -v b="$(allocations "$op" 0)" -v n="$n" 'BEGIN { printf "%.2f", (a - b) / n }')
  echo "$op: $i instructions per update, $m mallocs per update"
  "$bin" "$op" 3000000
done
