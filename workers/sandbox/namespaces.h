// The run's namespaces: which ones clone() makes, and the user namespace's id maps, which the
// supervisor writes from outside (root inside maps to an unprivileged range outside).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>

#include "engine/common/status.h"

namespace aura::sandbox {

// user, mount, PID, network, IPC and UTS namespaces. The cgroup namespace is unshared by the
// child once the supervisor has moved it into the run's cgroup, so that group is its root.
inline constexpr unsigned long kCloneNamespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

// Writes /proc/<pid>/setgroups ("deny" unless `allow_setgroups`) and uid_map/gid_map
// "0 <base> <count>". A world node allows setgroups: its service manager sets each service's
// supplementary groups, all of them ids of the node's own range.
// REQUIRES: `pid` is a child made with CLONE_NEWUSER that has not yet exec'd.
Status write_id_maps(pid_t pid, uint32_t base, uint32_t count, bool allow_setgroups = false);

// Child side, no allocation: become root of the user namespace (kuid = base outside).
// Returns 0 or errno.
int become_namespace_root();

}  // namespace aura::sandbox
