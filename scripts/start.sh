#!/usr/bin/env bash
# Installs what is missing, builds, and runs the lab on its embedded default:
# the data folder ./var/aura and the keys folder ./var/keys (created on first use).
# Until the browser lab (aura serve) exists, this runs `aura demo` on that log and
# prints what it did.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${AURA_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build"
ninja -C "$build"
"$build/aura" setup --data var/aura --keys var/keys
exec "$build/aura" demo --data var/aura --keys var/keys "$@"
