#!/usr/bin/env bash
# Installs the Debian 12 packages AURA needs, only those missing. Idempotent.
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build cmake
  libboost1.81-dev libboost-json1.81-dev
  librocksdb-dev libsqlite3-dev libsodium-dev libssl-dev
  libsimdjson-dev libbpf-dev libseccomp-dev doctest-dev
  python3 iproute2 clang-format
  nginx ansible bubblewrap
  openssh-server openssh-client
  chromium
)
# chromium: the browser lab's end-to-end tests drive Debian's chromium headless (ui/e2e). Node.js
# 20 and npm (the browser lab's build) come with the machine; checked at the end, never replaced
# by Debian's older nodejs.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Node.js >= 20 and npm for ui/ (npm ci, vite build): present, or a clear reason why not.
check_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install-deps: Node.js 20 and npm are needed to build the browser lab (ui/) and are" \
      "not on this machine" >&2
    return 1
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 20 ]; then
    echo "install-deps: Node.js $(node --version) is too old for ui/ (needs 20 or later)" >&2
    return 1
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  check_node
  exit $?
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}) and not root; run as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Packages with services (nginx, openssh-server) must not start them in the host's namespaces:
# the lab runs nginx and sshd only inside worlds. A policy-rc.d that refuses every start is in
# place for the install unless the machine already has one.
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  guard=/usr/sbin/policy-rc.d
fi
trap '[ -n "$guard" ] && rm -f "$guard"' EXIT
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
check_node
