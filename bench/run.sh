#!/usr/bin/env bash
# `make bench`: runs every benchmark program of a build and rewrites the generated section of
# bench/RESULTS.md from their JSON output (bench/summarize.py). Curated sections stay as they are.
set -euo pipefail
build=${1:-build/release}
here=$(cd "$(dirname "$0")" && pwd)
out="$build/bench-results"
mkdir -p "$out"
rm -f "$out"/*.json

for program in "$build"/bench/*_bench; do
  [ -x "$program" ] || continue
  name=$(basename "$program")
  echo "== $name"
  "$program" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
             --benchmark_format=console
done

python3 "$here/summarize.py" "$out" "$here/RESULTS.md"
echo "bench: wrote $here/RESULTS.md"
