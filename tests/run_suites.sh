#!/usr/bin/env bash
# `make test`: runs the whole release suite, then the concurrency tests again under
# ThreadSanitizer, and closes with one line counting both. Exits non-zero on any failure.
set -uo pipefail
release=${1:-build/release}
tsan=${2:-build/tsan}
jobs=${JOBS:-$(nproc)}
logs=$(mktemp -d)

run_suite() {  # name, build dir, extra ctest args...
  local name=$1 dir=$2
  shift 2
  echo "== $name suite ($dir)"
  (cd "$dir" && ctest --output-on-failure --timeout 900 "$@") 2>&1 | tee "$logs/$name.log"
  return "${PIPESTATUS[0]}"
}

run_suite release "$release" -j "$jobs"
release_rc=$?
run_suite tsan "$tsan" -L concurrency
tsan_rc=$?

count() {  # sums "N tests failed out of M" over both logs: prints "passed failed"
  awk '/tests passed, [0-9]+ tests? failed out of/ {
         for (i = 1; i <= NF; i++) { if ($i == "failed") f += $(i-1); if ($i == "of") t += $(i+1) }
       } END { printf "%d %d\n", t - f, f }' "$logs"/*.log
}
read -r passed failed < <(count)
rm -rf "$logs"
echo
if [ "$release_rc" -ne 0 ] || [ "$tsan_rc" -ne 0 ]; then
  [ "$failed" -gt 0 ] || failed=1
  echo "make test: $passed passed, $failed failed"
  exit 1
fi
echo "make test: $passed passed, $failed failed"
