#!/usr/bin/env bash
# Usage: Fuzz/run.sh FuzzLineParser|FuzzRequestParser|FuzzARILine|FuzzJSONPatch|FuzzHTTPFront|FuzzTrigger|FuzzFormat [seconds]
set -euo pipefail
target=${1:?target}
seconds=${2:-600}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
swift build -c release --product "$target" --scratch-path "$here/.build-fuzz" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library >&2
mkdir -p "corpus-$target" artifacts
extra=()
# The in-process server keeps state between inputs (sessions, channels closing on other
# threads), which LeakSanitizer would report after every input: leaks are not checked there.
if [ "$target" = FuzzHTTPFront ]; then
  extra+=(-detect_leaks=0)
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
"$here/.build-fuzz/release/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -artifact_prefix="$here/artifacts/" -print_final_stats=1 ${extra[@]+"${extra[@]}"} "corpus-$target" "seeds/$target"
