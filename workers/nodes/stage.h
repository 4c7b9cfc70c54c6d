// What a node mounts read-only from the host (the package folder, the lab's tools) is reached by
// the node's own uids, which the host sees as unprivileged: every folder above it must be
// searchable by others, and it readable. A checkout in a 0700 home folder is not. Such an input
// is staged: copied once to /run/aura-stage/<name>-<key>/, a root-owned 0711 folder (key: a
// digest of every file's path, mode, size, inode and mtime, so a rebuilt tool or an edited
// package gets a new copy, and an unchanged one is reused). /run is a tmpfs, emptied at boot.
#pragma once

#include <string>

#include "engine/common/status.h"

namespace aura::workers::nodes {

inline constexpr const char* kStageRoot = "/run/aura-stage";

// `path` itself when the node's uids can reach it; else the staged copy (a folder's copy, or
// the copy of a file inside a folder of its own). Files and folders only: a symlink, FIFO or
// device anywhere under `path` is refused.
Result<std::string> reachable_by_nodes(const std::string& path);

}  // namespace aura::workers::nodes
