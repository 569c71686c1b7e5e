#!/usr/bin/env bash
# Instructions per delivered update by function, through the same path as
# Benchmarks/server-callgrind.sh (FanOutBench, no sockets): runs server-ops under callgrind for
# TICKS ticks and for 0 ticks, annotates both (self cost per function) and prints the
# difference divided by the U lines of the TICKS run, largest first, so that set-up and
# warm-up cancel out.
# Usage: Benchmarks/server-callgrind-functions.sh [TICKS] [SESSIONS] [TOP]   (defaults 10, 1000,
#   40)   SERVER_OPS=path measures another build.   BATCHED=1: each tick reaches the engine as
#   one batch (default 0, item by item, as in server-callgrind.sh).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=Benchmarks/server-ops-binary.sh
. ./server-ops-binary.sh
ticks=${1:-10}; sessions=${2:-1000}; top=${3:-40}
work=$(mktemp -d)
trap 'rm -rf "$work" "$server_ops_bin"' EXIT
for t in "$ticks" 0; do
  valgrind --tool=callgrind --callgrind-out-file="$work/$t.out" "$server_ops_bin" "$t" "$sessions" 100 10 "${BATCHED:-0}" \
    > "$work/$t.log" 2>&1
  # "count (percent) file:function [object]" -> "count<TAB>function"
  callgrind_annotate --threshold=100 "$work/$t.out" 2>/dev/null \
    | awk '/file:function/ {f = 1; next} f && /\(/ {gsub(",", "", $1); c = $1; $1 = ""; $2 = ""; print c "\t" $0}' \
    | sed 's/ \[.*//; s/^\([0-9]*\)\t *[0-9.]*%) */\1\t/' > "$work/$t.txt"
done
lines=$(awk '/U lines in/ {print $1}' "$work/$ticks.log")
python3 - "$work/$ticks.txt" "$work/0.txt" "$lines" "$top" <<'PY'
import sys
def load(path):
    d = {}
    for line in open(path):
        count, name = line.rstrip("\n").split("\t", 1)
        d[name] = d.get(name, 0) + int(count)
    return d
run, base, lines, top = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rows = sorted(((run.get(k, 0) - base.get(k, 0)) / lines, k) for k in set(run) | set(base))
print("%.0f instructions per update over %d updates; by function (self):" % (sum(r[0] for r in rows), lines))
for value, name in sorted(rows, reverse=True)[:top]:
    print("%7.1f  %s" % (value, name[:170]))
PY
