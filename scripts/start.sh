#!/usr/bin/env bash
# Installs what is missing, builds, and runs the lab on its embedded default: the data folder
# ./var/aura and the keys folder ./var/keys (created on first use; AURA_DATA and AURA_KEYS name
# others). Ends with the lab running (aura serve) at the URL it prints; arguments are passed to
# `aura serve` (`--port 0`, `--user NAME`, ...; AURA_FRONT_USER names the front's user too). The
# judge walkthrough is in the README's command section. tests/ops/check_start.py runs this very
# script as a new machine meets it (a front user that does not exist yet, empty folders).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${AURA_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build"
# Only what the lab runs (the CLI, the runner, the service manager and app the worlds run, the
# world holder), not the tests.
ninja -C "$build" aura workers/runner/aura-runner workers/services/aura-svcman \
  workers/services/aura-app workers/aura-holder
# The browser lab (ui/dist), which aura serve serves at the URL it prints.
./scripts/build-ui.sh
# The lab as a service: the engine daemon (root; sets the lab up on first use: keys, the bundled
# scenarios signed and loaded, capabilities measured) and the unprivileged HTTP front, which
# makes its user when the machine has none, and prints the lab's URL once the daemon answered it
# as that user. Ctrl-C stops both; the daemon ends every world it started.
exec "$build/aura" serve --data "${AURA_DATA:-var/aura}" --keys "${AURA_KEYS:-var/keys}" "$@"
