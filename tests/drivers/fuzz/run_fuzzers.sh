#!/usr/bin/env bash
# Builds one libFuzzer binary per protocol decoder with clang (-fsanitize=fuzzer,address,
# undefined; separate from the gcc build), seeds each from seed_corpus, and fuzzes them one
# after another for TOTAL seconds in all. Fails on any crash or sanitizer report.
#
# Usage: run_fuzzers.sh <source dir> <work dir> [TOTAL seconds, default 60]
# Exit 77 (ctest: skipped) only when clang or its libFuzzer runtime is missing.
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
total=${3:-60}
cxx=${FUZZ_CXX:-clang++}
targets=(frame recording array_info transducer_page session_opened array_time_pong
         stream_config foci_block drive_block array_status tracker_info tracker_calibration
         tracker_mode tracker_time_pong hand_frame tracker_status)

mkdir -p "$work/obj" "$work/bin" "$work/corpus" "$work/artifacts"
if ! command -v "$cxx" >/dev/null; then
  echo "run_fuzzers: $cxx not found (install clang and libclang-rt-14-dev)"; exit 77
fi
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  > "$work/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer "$work/probe.cpp" -o "$work/probe" 2>/dev/null; then
  echo "run_fuzzers: $cxx cannot link -fsanitize=fuzzer (install libclang-rt-14-dev)"; exit 77
fi

flags=(-std=c++20 -g -O1 -I"$src" -fno-omit-frame-pointer)
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
sources=(drivers/protocol/crc32c.cpp drivers/protocol/frame.cpp drivers/protocol/array_messages.cpp
         drivers/protocol/tracker_messages.cpp drivers/emulator/recorded_hands.cpp)

# Compiles run ${JOBS:-nproc} at a time; any failure fails the script.
jobs_max=${JOBS:-$(nproc)}
run_job() {
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  "$@" &
}
wait_all() { for pid in $(jobs -rp); do wait "$pid"; done; }

# The protocol objects, instrumented once (rebuilt only when a source is newer).
objects=()
for s in "${sources[@]}"; do
  o="$work/obj/$(basename "${s%.cpp}").o"
  if [ ! -f "$o" ] || [ "$src/$s" -nt "$o" ] || [ "$0" -nt "$o" ]; then
    run_job "$cxx" "${flags[@]}" "${san[@]}" -fsanitize=fuzzer-no-link -c "$src/$s" -o "$o"
  fi
  objects+=("$o")
done
wait_all
for t in "${targets[@]}"; do
  bin="$work/bin/fuzz_$t"
  newest_obj=$(ls -t "${objects[@]}" | head -1)
  if [ ! -x "$bin" ] || [ "$src/tests/drivers/fuzz/decoder_fuzz.cpp" -nt "$bin" ] ||
     [ "$newest_obj" -nt "$bin" ]; then
    run_job "$cxx" "${flags[@]}" "${san[@]}" -fsanitize=fuzzer -DFUZZ_"$t" \
      "$src/tests/drivers/fuzz/decoder_fuzz.cpp" "${objects[@]}" -o "$bin"
  fi
done
wait_all
"$cxx" "${flags[@]}" "$src/tests/drivers/fuzz/seed_corpus.cpp" "$src"/drivers/protocol/*.cpp \
  -o "$work/bin/seed_corpus"
"$work/bin/seed_corpus" "$work/corpus"

# TOTAL seconds shared out in whole seconds (libFuzzer's unit), the remainder to the first few.
base=$(( total / ${#targets[@]} ))
extra=$(( total % ${#targets[@]} ))
failed=()
i=0
for t in "${targets[@]}"; do
  seconds=$(( base + (i < extra ? 1 : 0) ))
  [ "$seconds" -ge 1 ] || seconds=1
  i=$((i + 1))
  log="$work/fuzz_$t.log"
  if "$work/bin/fuzz_$t" -max_total_time="$seconds" -seed=1 -print_final_stats=1 \
       -artifact_prefix="$work/artifacts/$t-" -rss_limit_mb=1024 "$work/corpus/$t" \
       >"$log" 2>&1; then
    runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    printf 'fuzz %-20s %8s runs, %s, ok\n' "$t" "${runs:-?}" "$cov"
  else
    echo "fuzz $t FAILED (crash input under $work/artifacts):"
    tail -40 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "run_fuzzers: ${#targets[@]} decoders fuzzed for ${total} s in all, no crash, no sanitizer report"
