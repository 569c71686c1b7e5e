#!/usr/bin/env bash
# Instructions and simulated cache misses per delivered update through the server's update path
# without sockets (FanOutBench: adapter -> ItemEngine -> loop mailbox -> session inbox ->
# SessionStateMachine -> output text; see Sources/LightstreamerServer/Runtime/FanOutBenchmark.swift).
# Counted by valgrind's callgrind with its cache simulation, so the figures are repeatable
# whatever else the machine runs; each is a run of N ticks minus a run of 0 ticks (set-up and
# warm-up cancel out), divided by the U lines the N ticks wrote.
# Usage: Benchmarks/server-callgrind.sh [TICKS] [SESSIONS]   (defaults 10 and 1000: 100 items,
#   10 per session, so 10,000 updates per tick)   SERVER_OPS=path measures another build.
#   BATCHED=1: each tick reaches the engine as one batch (ItemEventListener.update(_:)).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=Benchmarks/server-ops-binary.sh
. ./server-ops-binary.sh
bin=$server_ops_bin
ticks=${1:-10}; sessions=${2:-1000}
run() {  # prints: instructions D1-misses LL-misses lines
  local out; out=$(valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null "$bin" "$1" "$sessions" 100 10 "${BATCHED:-0}" 2>&1)
  local ir d1 ll lines
  ir=$(awk '/ refs:/ && /I/ {gsub(",", "", $NF); print $NF; exit}' <<< "$out")
  d1=$(awk '/D1  misses:/ {gsub(",", "", $4); print $4; exit}' <<< "$out")
  ll=$(awk '/LLd misses:/ {gsub(",", "", $4); print $4; exit}' <<< "$out")
  lines=$(awk '/U lines in/ {print $1}' <<< "$out")
  echo "$ir $d1 $ll $lines"
}
read -r i1 d1 l1 n1 <<< "$(run "$ticks")"
read -r i0 d0 l0 _ <<< "$(run 0)"
awk -v i="$((i1 - i0))" -v d="$((d1 - d0))" -v l="$((l1 - l0))" -v n="$n1" -v s="$sessions" -v t="$ticks" 'BEGIN {
  printf "%d sessions, %d ticks, %d updates: %.0f instructions, %.1f D1 misses, %.1f LL data misses per update\n", s, t, n, i / n, d / n, l / n }'
