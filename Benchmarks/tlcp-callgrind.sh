#!/usr/bin/env bash
# Instructions per TLCP codec operation, counted by valgrind's callgrind (repeatable whatever
# else the machine is doing). Usage: Benchmarks/tlcp-callgrind.sh
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product tlcp-ops >&2
bin=$(swift build -c release --show-bin-path)/tlcp-ops
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 | awk '/refs:/ {gsub(",", "", $NF); print $NF}'; }
for op in parse split-stream split-message ari-frame ari-decode ari-decode-tokens apply apply-json apply-patch apply-text encode encode-diffs encode-json encode-text encode-patch parse-wide encode-wide request; do
  n=20000; [ "$op" = request ] && n=5000; [ "${op#split-}" != "$op" ] || [ "$op" = ari-frame ] && n=2000; [ "${op%-wide}" != "$op" ] && n=200
  total=$(count "$op" "$n"); base=$(count "$op" 0)
  echo "$op: $(( (total - base) / n )) instructions per operation"
done
