// The run's root filesystem as a plan: built (and checked) by the supervisor before clone, then
// carried out step by step by the child, which only issues syscalls on the plan's strings.
// Every step path is relative to the stage folder (the child's working directory then).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace aura::sandbox {

// A host path to show read-only inside the run, at `inside` (absolute).
struct PackageMount {
  std::string host;
  std::string inside;
};

enum class MountStepKind {
  kMkdir,    // mkdir(target, mode)
  kTmpfs,    // mount tmpfs at target with data
  kOverlay,  // mount overlay at target with data (lowerdir=host path, tmpfs upper)
  kBindRo,   // bind source onto target, then remount read-only keeping flags
  kBindDev,  // bind a host device node (null, zero, ...) onto target
  kTouch,    // create an empty file target (a bind target)
  kSymlink,  // symlink(source, target)
  kProc,     // mount a procfs for the run's PID namespace at target
};

struct MountStep {
  MountStepKind kind;
  std::string source;
  std::string target;  // relative to the stage folder
  std::string data;
  unsigned long flags = 0;  // kBindRo: flags to keep on the read-only remount
  unsigned mode = 0755;
  std::string describe() const;
};

// The folder the child pivots into is "root" inside the stage; overlay uppers live beside it
// in "ovl/<n>" so they are never visible from inside.
struct MountPlan {
  std::vector<MountStep> steps;
};

// Plans the root: a tmpfs of `tmpfs_bytes`, each of `lower_paths` (same path inside) and each
// package mount, a minimal /dev, /proc, /tmp and /root. Refuses "/", relative or unnormalised
// paths, paths with ',' ':' or whitespace (overlay option syntax), devices, FIFOs and sockets,
// and any path equal to, inside or containing one of `forbidden` (the data and key folders).
Result<MountPlan> plan_mounts(const std::vector<std::string>& lower_paths,
                              const std::vector<PackageMount>& packages, uint64_t tmpfs_bytes,
                              const std::vector<std::filesystem::path>& forbidden);

// Carries out the plan in the child. Async-signal-safe: no allocation. Returns -1 when every
// step succeeded, else the index of the failed step with its errno in *err.
int apply_mount_plan(const MountPlan& plan, int* err);

}  // namespace aura::sandbox
