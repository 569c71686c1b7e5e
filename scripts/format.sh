#!/usr/bin/env bash
# Formats the Swift sources with the toolchain's swift-format and the repository's .swift-format
# (4-space indentation, 140 columns, existing line breaks kept, imports ordered).
# Usage: scripts/format.sh          rewrite the files in place
#        scripts/format.sh --check  change nothing; fail if a file is not formatted (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Sources Benchmarks/Benchmarks Fuzz/Package.swift Fuzz/Sources)
if [ "${1:-}" = "--check" ]; then
  swift format lint --strict --parallel --recursive "${paths[@]}"
else
  swift format format --in-place --parallel --recursive "${paths[@]}"
fi
