// The capability ids a scenario manifest may require ("requires", docs/formats/manifest.md):
// exactly the names the capability panel measures (workers/caps, docs/CAPABILITIES.md), in the
// panel's order. The engine cannot include the workers that measure them, so the list is kept
// here and tests/caps checks that a real measurement names these and no others.
#pragma once

#include <algorithm>
#include <iterator>
#include <string_view>

namespace aura::scenario {

inline constexpr std::string_view kCapabilityIds[] = {
    "ns_user",
    "ns_mount",
    "ns_pid",
    "ns_net",
    "ns_ipc",
    "ns_uts",
    "ns_cgroup",
    "overlayfs",
    "openat2",
    "seccomp",
    "bpf",
    "btf",
    "bpf_ringbuf",
    "sched_ext",
    "kvm",
    "cgroup_v1_cpu",
    "cgroup_v1_cpuacct",
    "cgroup_v1_cpuset",
    "cgroup_v1_memory",
    "cgroup_v1_pids",
    "cgroup_v1_freezer",
    "cgroup_v2",
    "cgroups",
    "tool_nginx",
    "tool_ansible-playbook",
    "tool_bwrap",
    "tool_ssh",
    "tool_sshd",
};

inline bool is_capability_id(std::string_view name) {
  return std::find(std::begin(kCapabilityIds), std::end(kCapabilityIds), name) !=
         std::end(kCapabilityIds);
}

}  // namespace aura::scenario
