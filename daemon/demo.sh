#!/usr/bin/env bash
# `make demo`: starts sonoflowd on emulated devices with a scripted hand stirring honey for
# ~20 s, serves the live web view (sonoflow-view) and prints its address, shows the figures
# with sonoflow-top, switches AM -> STM -> AM through sonoflowctl on the way, then prints the
# run's summary. DEMO_SECONDS=N runs longer (time to look at the page); DEMO_PNG=FILE also
# saves a picture of the view a quarter of the way in (headless Chromium).
set -euo pipefail
build=${1:-build/release}
seconds=${DEMO_SECONDS:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/sonoflow-demo.XXXXXX)
view="" picture=""
trap 'kill "$daemon" ${view:+"$view"} 2>/dev/null || true; rm -rf "$work"' EXIT

cat >"$work/sonoflow.toml" <<EOF
status.path = "$work/status"
control.socket = "$work/control.sock"
recorder.directory = "$work/sessions"
scene.file = "$here/config/scenes/stir-honey.toml"
fluid.materials_dir = "$here/config/materials"
EOF

cat <<EOF
sonoflow demo: sonoflowd --emulate for ${seconds} s, a scripted hand stirring honey.
What runs: the whole daemon (config validation, 4 pipeline threads with RT fallback, safety
gate, status export, control socket, recorder) on the drivers layer's emulated USB devices
(VirtualTracker stirring a circle, VirtualArray playing 20 kHz FOCI blocks, real host drivers),
the OpenCL particle fluid (honey on PoCL, 675 particles by default: fluid.particles; the first run compiles its kernels)
and the AM optimiser / PRO-STM planner of kernels/haptics.
Watch: loop rates (the fluid holds about 90 Hz on a quiet 2-core VM), contact samples, foci,
hand->array latency, FIFO level, underruns.
EOF
sleep 2

"$build/daemon/sonoflowd" --config "$work/sonoflow.toml" --emulate --run-for "$seconds" \
  --summary "$work/summary.json" 2>"$work/daemon.log" &
daemon=$!
ctl() { "$build/daemon/sonoflowctl" --socket "$work/control.sock" "$@" >>"$work/ctl.log" 2>&1 || true; }
# Ready when the control socket answers (the first start compiles the fluid's OpenCL kernels).
for _ in $(seq 600); do
  "$build/daemon/sonoflowctl" --socket "$work/control.sock" ping >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { echo "sonoflowd did not start:"; cat "$work/daemon.log"; exit 1; }
  sleep 0.1
done
sleep 1

# The web view: the configured port (view.port, 8470), or any free one if that is taken.
"$build/daemon/view/sonoflow-view" --config "$work/sonoflow.toml" >"$work/view.out" 2>"$work/view.log" &
view=$!
sleep 0.5
if ! kill -0 "$view" 2>/dev/null; then
  "$build/daemon/view/sonoflow-view" --config "$work/sonoflow.toml" --port 0 >"$work/view.out" 2>"$work/view.log" &
  view=$!
fi
for _ in $(seq 50); do grep -q serving "$work/view.out" 2>/dev/null && break; sleep 0.1; done
address=$(grep -o 'http://[^ ]*' "$work/view.out" || echo "(sonoflow-view did not start: see its log below)")
echo
echo "  ==> live view: $address"
echo "      (a browser on this machine; from another one: ssh -L 8470:127.0.0.1:8470 this-host)"
echo
if [ -n "${DEMO_PNG:-}" ]; then
  ( sleep $((seconds / 4)); "$build/daemon/view/sonoflow-view" --config "$work/sonoflow.toml" --png "$DEMO_PNG" \
      >>"$work/view.log" 2>&1 ) &
  picture=$!
fi

# Live control on the way: STM a third of the way in, back to AM at two thirds.
( sleep $((seconds / 3)); ctl mode stm; sleep $((seconds / 3)); ctl mode am ) &
switcher=$!

if [ -t 1 ]; then
  "$build/daemon/sonoflow-top" --shm "$work/status" -d 1 -n "$seconds" || true
else
  "$build/daemon/sonoflow-top" --shm "$work/status" -b -d 5 -n $((seconds >= 5 ? seconds / 5 : 1)) || true
fi
wait "$daemon" || { echo "sonoflowd exited with $?"; cat "$work/daemon.log"; exit 1; }
wait "$switcher" ${picture:+"$picture"} || true
kill "$view" 2>/dev/null || true

echo
echo "== daemon log"
cat "$work/daemon.log"
echo "== control"
cat "$work/ctl.log"
echo "== view ($address)"
cat "$work/view.log"
echo "== summary ($work/summary.json)"
python3 - "$work/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ms = lambda ns: f"{ns / 1e6:.2f} ms"
us = lambda ns: f"{ns / 1e3:.0f} us"
print(f"ran {s['duration_ns'] / 1e9:.1f} s, RT {'DEGRADED' if s['degraded'] else 'ok'}")
print(f"{'loop':8} {'ticks':>7} {'misses':>6} {'wake p50':>9} {'wake p99':>9} {'wake max':>9} {'busy p99':>9}")
for l in s['loops']:
    print(f"{l['name']:8} {l['ticks']:7d} {l['overruns']:6d} {us(l['wake_ns']['p50']):>9} "
          f"{us(l['wake_ns']['p99']):>9} {us(l['wake_ns']['max']):>9} {us(l['busy_ns']['p99']):>9}")
a, lat = s['array'], s['latency_ns']
print(f"array: {a['blocks_sent']} blocks, {a['underruns']} underruns, {a['refused_blocks']} refused")
print(f"hand->array latency: p50 {ms(lat['p50'])}, p99 {ms(lat['p99'])}, max {ms(lat['max'])} ({lat['count']} frames)")
f = s['array_final']
print(f"at exit: array {'silent' if f['silent'] else 'NOT SILENT'} (device state {f['state']}), faded cleanly {f['faded_cleanly']}")
EOF
