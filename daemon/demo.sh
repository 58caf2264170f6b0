#!/usr/bin/env bash
# `make demo`: runs what exists of the pipeline on emulated devices and shows its live status.
set -euo pipefail
build=${1:-build/release}
echo "sonoflow demo: the pipeline is being assembled; nothing runnable yet in $build."
