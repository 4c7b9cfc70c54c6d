// What live worlds take on the machine, measured, never estimated: a nodes world's memory
// cgroups and the PSS of its processes (inside the nodes, the nodes' keepers on the host, the
// world's holder), a filetree world's files. Read from /proc, the cgroups and the lab's leak
// ledger while the lab runs; the figures are a moment's, so take them while nothing runs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace aura::cli {

struct WorldMemory {
  size_t worlds = 0, cgroups = 0, processes = 0;
  uint64_t cgroup_bytes = 0;  // the memory cgroups' own count: processes, tmpfs, page cache
  uint64_t pss_bytes = 0;     // the processes' proportional set sizes
  uint64_t disk_bytes = 0;    // the worlds' files in the data folder (filetree worlds)
};

// The live nodes worlds of the lab whose data folder is `data`, `worlds` of them: every memory
// cgroup its leak ledger holds unreleased (each is recorded there before it is made) and what
// it counts, and the PSS of the processes in those groups, in their network namespaces (a
// node's keeper runs on the host, outside the node's group) and of the groups' owners (the
// worlds' holders). Taken while no gate, probe or action runs, every such group is a live
// world's node.
WorldMemory nodes_world_memory(const std::filesystem::path& data, size_t worlds);

// The bytes allocated to the files under `dir`, links not followed.
uint64_t disk_bytes(const std::filesystem::path& dir);

// A process's proportional set size (smaps_rollup), 0 when it is gone.
uint64_t pss_bytes(pid_t pid);

}  // namespace aura::cli
