// CgroupTree: one interface over cgroup v1 (a hierarchy per controller) and pure cgroup v2,
// chosen at run time. A run's group holds every process of that run; limits are set before the
// first process joins, and kill_all() leaves the group empty or says why it could not.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::sandbox {

struct CgroupLimits {
  uint64_t cpu_quota_us = 100'000;   // CPU time allowed per period (100000/100000 = one CPU)
  uint64_t cpu_period_us = 100'000;  // CFS period
  uint64_t memory_bytes = 256ull << 20;
  uint64_t pids_max = 64;
};

// What the kernel counted for a group; read by the host, never reported by the run.
struct CgroupUsage {
  uint64_t cpu_ns = 0;             // cpuacct.usage (v1) or cpu.stat usage_usec * 1000 (v2)
  uint64_t peak_memory_bytes = 0;  // memory.max_usage_in_bytes (v1) or memory.peak (v2)
  bool peak_memory_known = false;  // false on a v2 kernel without memory.peak
  uint64_t oom_kills = 0;          // memory.oom_control / memory.events oom_kill
  uint64_t pids_limit_hits = 0;    // pids.events "max": forks refused by pids.max
};

enum class CgroupVersion { kV1, kV2 };

// Thread safety: distinct run ids may be used from distinct threads; one run id from one thread.
// A run id may name a nested group ("<node>/learner"): its parent group must exist first (create()
// never makes it), and remove() removes only the nested group.
class CgroupTree {
 public:
  virtual ~CgroupTree() = default;

  // The tree this process can use: cgroup v1 when the cpu, cpuacct, memory, pids and freezer
  // hierarchies are all mounted, else cgroup v2 when its mount offers cpu, memory and pids.
  // Groups are made under this process's own cgroup (in each hierarchy) in a folder `aura/`.
  // kUnavailable names what is missing for each version (fail closed: no partial tree).
  static Result<std::unique_ptr<CgroupTree>> detect();

  // A v2 tree rooted at `mount` (a cgroup2 mount point), under this process's own v2 cgroup.
  // kUnavailable when cpu, memory or pids is not in its cgroup.controllers.
  static Result<std::unique_ptr<CgroupTree>> open_v2(const std::filesystem::path& mount);

  virtual CgroupVersion version() const = 0;

  // Every host path the group for `run_id` occupies (one per v1 hierarchy, one on v2), whether
  // or not it exists now. Used for the leak ledger.
  virtual std::vector<std::filesystem::path> paths(std::string_view run_id) const = 0;

  // Makes the group and sets its limits. kBusy if it already exists.
  virtual Status create(std::string_view run_id, const CgroupLimits& limits) = 0;

  // Moves `pid` into the group (every hierarchy). Its later children are born inside.
  virtual Status add_pid(std::string_view run_id, pid_t pid) = 0;

  // Makes a following add_pid() cheap, without touching any group of a run: on v1 the first
  // migration after an idle spell waits for an RCU grace period (the cgroup migration lock's
  // rcu_sync leaving its fast mode), later ones within about a grace period do not. Moves the
  // calling thread into the cgroup it already belongs to (a no-op migration that pays the
  // wait); called on a helper thread while the run is prepared, so the wait overlaps that work.
  // Nothing on v2 (no per-run migration wait worth hiding). Best effort: a failure only means
  // add_pid() pays the wait itself.
  virtual void prime_migration() {}

  // The pids in the group now (host pid namespace).
  virtual Result<std::vector<pid_t>> pids(std::string_view run_id) const = 0;

  virtual Result<CgroupUsage> usage(std::string_view run_id) const = 0;

  // Kills every process of the group: cgroup.kill where the kernel has it, else freeze, SIGKILL
  // each pid, thaw. Then waits up to `timeout_ms` for the group to be empty (kBusy if not).
  // Zombies whose parent is the caller leave the group when the caller reaps them, so reap
  // direct children before calling with a short timeout.
  virtual Status kill_all(std::string_view run_id, uint64_t timeout_ms) = 0;

  // Removes the group's folders. kBusy while processes remain; ok if already gone.
  virtual Status remove(std::string_view run_id) = 0;

  // Stops every process of the group (and of its nested groups) where it stands, so the host
  // can inspect a state that does not change under it: v1 writes FROZEN to freezer.state and
  // polls until it reads FROZEN, v2 writes 1 to cgroup.freeze and polls cgroup.events until
  // "frozen 1". kBusy when that takes longer than a bounded wait (the group is thawed again).
  virtual Status freeze(std::string_view run_id) = 0;

  // Lets the group run again and waits until the kernel says it is no longer frozen. A group
  // stays frozen while an enclosing group is frozen (kBusy then).
  virtual Status thaw(std::string_view run_id) = 0;
};

// Kills what is in the group at `path` (any version, a single folder) and removes the folder;
// for reaping leftovers found by path. ok if the folder is already gone.
Status kill_and_remove_group_path(const std::filesystem::path& path, uint64_t timeout_ms);

}  // namespace aura::sandbox
