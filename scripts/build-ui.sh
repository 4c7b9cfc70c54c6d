#!/usr/bin/env bash
# Builds the browser lab (ui/) into ui/dist, which `aura serve` serves: `npm ci` from the committed
# lockfile when ui/node_modules is missing or older than the lockfile, then `npm run build`
# (type check, then vite). Needs Node.js 20 and npm (scripts/install-deps.sh checks them).
set -euo pipefail
cd "$(dirname "$0")/../ui"
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  echo "build-ui: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "build-ui: npm run build"
npm run --silent build
