#!/usr/bin/env bash
# Lists what of the lab is left on this machine: processes in a lab cgroup or a world holder,
# the lab's network namespaces and their mounts, and lab cgroups (any folder under an `aura/`
# cgroup folder). Zombies are not counted: they hold nothing but a pid (a machine whose PID 1
# does not reap keeps them). Prints one line per thing left and exits 1 when anything is;
# test.sh runs it after the suite.
set -uo pipefail

left=0
report() {
  echo "leftover: $*"
  left=$((left + 1))
}

for ns in /run/netns/aura-*; do
  [ -e "$ns" ] && report "network namespace $ns"
done

while IFS= read -r dir; do
  report "cgroup $dir"
done < <(find /sys/fs/cgroup -mindepth 2 -type d -path '*/aura/*' 2>/dev/null | sort)

for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = "$$" ] && continue
  stat=$(cat "$p/stat" 2>/dev/null) || continue
  state=${stat##*) }
  state=${state%% *}
  [ "$state" = Z ] && continue
  comm=$(cat "$p/comm" 2>/dev/null)
  if grep -q '/aura/' "$p/cgroup" 2>/dev/null || [ "$comm" = aura-holder ]; then
    report "process $pid ($comm)"
  fi
done

while IFS= read -r line; do
  report "mount $line"
done < <(awk '$5 ~ /^\/run\/netns\/aura-/ || $5 ~ /^\/run\/aura(\/|$)/ {print $5}' /proc/self/mountinfo)

if [ "$left" -gt 0 ]; then
  echo "leftovers: $left things of the lab are left on this machine"
  exit 1
fi
echo "leftovers: none"
