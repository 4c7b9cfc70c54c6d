// The panel's probes, one file per mechanism (namespace_probes.cc, kernel_probes.cc,
// cgroup_probes.cc, tool_probes.cc). Each returns measured entries in a fixed order.
#pragma once

#include <vector>

#include "workers/caps/capability.h"

namespace aura::caps {

// ns_user, ns_mount, ns_pid, ns_net, ns_ipc, ns_uts, ns_cgroup: unshare in a forked child.
std::vector<Capability> measure_namespaces();
// overlayfs, openat2, seccomp, bpf, btf, bpf_ringbuf, sched_ext, kvm.
std::vector<Capability> measure_kernel_features();
// cgroup_v1_<controller> for cpu, cpuacct, cpuset, memory, pids, freezer; cgroup_v2; and the
// summary `cgroups` (cpu, memory and pids limits plus a way to stop a group, from v1 or v2).
std::vector<Capability> measure_cgroups();

}  // namespace aura::caps
