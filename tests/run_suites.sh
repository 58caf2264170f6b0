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

count() {  # sums "N tests failed out of M" and the "(Skipped)" lines over both logs:
           # prints "passed failed skipped" (ctest counts a skipped test as passed)
  awk '/tests passed, [0-9]+ tests? failed out of/ {
         for (i = 1; i <= NF; i++) { if ($i == "failed") f += $(i-2); if ($i == "of") t += $(i+1) }
       }
       / - .* \(Skipped\)$/ { s++ }
       END { printf "%d %d %d\n", t - f - s, f, s }' "$logs"/*.log
}
read -r passed failed skipped < <(count)
rm -rf "$logs"
echo
if [ "$release_rc" -ne 0 ] || [ "$tsan_rc" -ne 0 ]; then
  [ "$failed" -gt 0 ] || failed=1
  echo "make test: $passed passed, $failed failed, $skipped skipped"
  exit 1
fi
# A skipped test (e.g. the umockdev tests without the umockdev preload) proved nothing: say so.
echo "make test: $passed passed, $failed failed, $skipped skipped"
