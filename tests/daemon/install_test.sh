#!/usr/bin/env bash
# `make install` puts the daemon, tools, config and systemd files in place: install the build
# into a scratch prefix, check every file is there, and that the installed unit verifies.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in sbin/sonoflowd bin/sonoflowctl bin/sonoflow-top bin/sonoflow-view share/sonoflow/view/index.html \
         share/sonoflow/view/vendor/three.module.js share/sonoflow/sonoflow.toml \
         share/sonoflow/scenes/stir-honey.toml lib/systemd/system/sonoflow.service \
         lib/sysusers.d/sonoflow.conf lib/tmpfiles.d/sonoflow.conf; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
grep -q "^ExecStart=$prefix/sbin/sonoflowd --config $prefix/share/sonoflow/sonoflow.toml" \
  "$prefix/lib/systemd/system/sonoflow.service" || { echo "unit does not point at the install"; exit 1; }
systemd-analyze verify "$prefix/lib/systemd/system/sonoflow.service"
"$prefix/sbin/sonoflowd" --check-config --config "$prefix/share/sonoflow/sonoflow.toml"
