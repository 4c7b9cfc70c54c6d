#!/usr/bin/env bash
# Installs what is missing, builds, and runs the tests. Ends with one plain line
# "N passed, N failed" (doctest cases summed over the test programs run) and exits non-zero
# when anything failed.
#
#   ./scripts/test.sh          every tier: unit, then system and e2e
#   ./scripts/test.sh unit     no root, no namespaces; run in parallel (one program per core)
#   ./scripts/test.sh system   root: namespaces, cgroups, real services; one program at a time
#   ./scripts/test.sh e2e      through the aura binary: judge runs, attempts; one at a time
#
# The tiers are meson suites (tests/meson.build says which program is in which). After system,
# e2e and the whole run, nothing of the lab may be left on the machine (scripts/leftovers.sh),
# which counts as one more case.
set -uo pipefail
cd "$(dirname "$0")/.."

tier=${1:-all}
case "$tier" in
  all | unit | system | e2e) ;;
  *)
    echo "usage: $0 [unit|system|e2e]" >&2
    exit 2
    ;;
esac

./scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
build=${AURA_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" || { echo "0 passed, 1 failed"; exit 1; }
fi
ninja -C "$build" || { echo "0 passed, 1 failed"; exit 1; }
# The browser lab: its unit tests (vitest) run in the unit tier and its end-to-end tests (a real
# chromium against a real aura serve) in e2e, both on the build in ui/dist.
./scripts/build-ui.sh || { echo "0 passed, 1 failed"; exit 1; }

cores=$(nproc 2>/dev/null || echo 2)
[ "$cores" -ge 2 ] || cores=2
status=0
logs=()
# run LOGBASE NUM_PROCESSES MESON_TEST_ARGS...: one meson test run, its log kept for the count.
run() {
  local logbase=$1 processes=$2
  shift 2
  meson test -C "$build" --no-rebuild --print-errorlogs --num-processes "$processes" \
    --logbase "$logbase" "$@" || status=1
  logs+=("$build/meson-logs/$logbase.json")
}

case "$tier" in
  unit) run testlog-unit "$cores" --suite unit ;;
  system) run testlog-system 1 --suite system ;;
  e2e) run testlog-e2e 1 --suite e2e ;;
  all)
    untiered=$(meson test -C "$build" --list --no-suite unit --no-suite system --no-suite e2e \
      2>/dev/null | grep -v '^ninja:' | grep -v '^No suitable tests' || true)
    [ -n "$untiered" ] && echo "test.sh: in no tier (run one at a time): $untiered" >&2
    run testlog-unit "$cores" --suite unit
    # system, e2e and anything in no tier yet, one program at a time
    run testlog "1" --no-suite unit
    ;;
esac

extras=()
if [ "$tier" != unit ]; then
  # Nothing of the lab may be left on the machine (worlds, holders, namespaces).
  ./scripts/leftovers.sh
  extras+=("leftovers=$?")
fi
python3 scripts/count_tests.py "${logs[@]}" "${extras[@]}"
count_status=$?
[ $status -eq 0 ] && [ $count_status -eq 0 ]
