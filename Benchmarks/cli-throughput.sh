#!/usr/bin/env bash
# Updates per CPU-second of `lightstreamer subscribe` (JSON and table output), against a fake
# server (Benchmarks/tlcp-replay-server.py) that streams canned TLCP over a WebSocket as fast as
# the socket takes it, so that the client is the bottleneck and its CPU is what is measured.
# CPU = user + system time of the CLI process (GNU time), divided by the updates it printed
# (checked by counting the lines that reach the reader); max RSS from the same report.
# Usage: Benchmarks/cli-throughput.sh [BINARY] [UPDATES] [ITEMS]
# CALLGRIND=1: count the CLI's instructions per printed update with valgrind instead (repeatable).
# TRANSPORT=HTTP-STREAMING: the CLI takes that transport (`--transport`; default: the client's
#   first choice, WS-STREAMING).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$(swift build -c release --show-bin-path)/lightstreamer}
n=${2:-1000000}
items=${3:-10}
port=$((20000 + RANDOM % 20000))
ready=$(mktemp)
python3 Benchmarks/tlcp-replay-server.py "$port" > "$ready" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$ready"' EXIT
for _ in $(seq 50); do grep -q listening "$ready" && break; sleep 0.1; done
grep -q listening "$ready" || { echo "the replay server did not start on port $port" >&2; exit 1; }
list=$(seq -s, -f "item%g" 1 "$items")
fields="stock_name,last_price,time,pct_change,bid_quantity,bid,ask,ask_quantity,min,max"
transport=(); [ -n "${TRANSPORT:-}" ] && transport=(--transport "$TRANSPORT")
for output in json table; do
  flag=""; [ "$output" = json ] && flag="--json"
  report=$(mktemp)
  if [ -n "${CALLGRIND:-}" ]; then
    # Instructions instead of CPU time (valgrind gives up on this toolchain's DWARF: a copy without it).
    stripped=$(mktemp); objcopy --strip-debug "$bin" "$stripped"
    lines=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$report" "$stripped" subscribe --server "http://127.0.0.1:$port" \
              --adapter-set BENCH --items "$list" --fields "$fields" --count "$n" --timeout 600 ${transport[@]+"${transport[@]}"} $flag | grep -c '"update"\|^item[0-9]' || true)
    rm -f "$stripped"
    awk -v o="$output" -v l="$lines" '/refs:/ { gsub(",", "", $NF); printf "%-5s %d updates printed, %d instructions per update (whole process)\n", o, l, $NF / l }' "$report"
    rm -f "$report"
    continue
  fi
  lines=$(/usr/bin/time -f "%U %S %M" -o "$report" "$bin" subscribe --server "http://127.0.0.1:$port" --adapter-set BENCH \
            --items "$list" --fields "$fields" --count "$n" --timeout 600 ${transport[@]+"${transport[@]}"} $flag | grep -c '"update"\|^item[0-9]' || true)
  read -r user sys rss < "$report"
  rm -f "$report"
  awk -v o="$output" -v n="$n" -v l="$lines" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    c = u + s; printf "%-5s %d updates printed (%d asked), CPU %.2f s (user %.2f, sys %.2f): %.0f updates per CPU-second, %.2f us per update, max RSS %d MB\n",
      o, l, n, c, u, s, (c > 0 ? l / c : 0), (l > 0 ? c * 1e6 / l : 0), r / 1024 }'
done
