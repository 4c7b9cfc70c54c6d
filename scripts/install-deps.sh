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
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
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
