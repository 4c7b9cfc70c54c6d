#!/usr/bin/env bash
# Installs what is missing, builds, and runs the lab on its embedded default:
# the data folder ./var/aura and the keys folder ./var/keys (created on first use).
# Sets the lab up (keys, bundled scenarios signed and loaded), runs judge mode of O1
# (a drifted nginx fleet managed by Ansible, on real namespace nodes) end to end, verifies
# the receipt its gold fix earned by replaying the log, and prints how to try an attempt
# yourself. Until the browser lab (aura serve) exists, this is the lab's front door.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${AURA_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build"
# Only what the lab runs (the CLI, the runner, the service manager and app the worlds run, the
# world holder), not the tests.
ninja -C "$build" aura workers/runner/aura-runner workers/services/aura-svcman \
  workers/services/aura-app workers/aura-holder
aura() { "$build/aura" "$@" --data var/aura --keys var/keys; }
aura setup
echo
aura judge O1 --out var/receipts
receipt=$(ls -t var/receipts/*.receipt.json | head -n 1)
echo
aura receipt verify "$receipt" --replay | tail -n 1
cat <<TXT

The lab is in ./var/aura (keys in ./var/keys). Try an attempt yourself:
  $build/aura attempt start o1-fleet-drift --data var/aura --keys var/keys
(or t0-config-drift, the tutorial, or o2-service-chain)
then follow what it prints; 'aura attempt --help' lists every step, docs/ATTEMPTS.md explains them.
TXT
