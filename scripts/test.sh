#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test. Ends with one plain line
# "N passed, N failed" (doctest cases summed over all test programs) and exits
# non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
build=${AURA_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" || { echo "0 passed, 1 failed"; exit 1; }
fi
ninja -C "$build" || { echo "0 passed, 1 failed"; exit 1; }

meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 1
status=$?
# Nothing of the lab may be left on the machine after the suite (worlds, holders, namespaces).
./scripts/leftovers.sh
leftovers=$?
python3 scripts/count_tests.py "$build/meson-logs/testlog.json" "leftovers=$leftovers"
count_status=$?
[ $status -eq 0 ] && [ $count_status -eq 0 ]
