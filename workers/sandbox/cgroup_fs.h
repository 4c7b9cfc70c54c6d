// What cgroup v1 and v2 share (cgroup_v1.cc, cgroup_v2.cc, cgroup.cc): reading and writing
// cgroup files, waiting for a group to empty or freeze, run folders under the `aura/` folder,
// and this process's cgroup mounts. Internal to the sandbox: cgroup.h is the contract.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/common/status.h"
#include "workers/sandbox/cgroup.h"

namespace aura::sandbox::cgroup_fs {

namespace fs = std::filesystem;

inline constexpr uint64_t kFreezeWaitMs = 2000;

Result<std::string> read_text(const fs::path& path);
Status write_text(const fs::path& path, std::string_view text);
uint64_t parse_u64(std::string_view s);
// The value of `key` in a "key value\n" file such as cpu.stat or pids.events; 0 when absent.
uint64_t keyed_value(std::string_view text, std::string_view key);
Result<std::vector<pid_t>> read_procs(const fs::path& dir);
void sleep_ms(long ms);
uint64_t now_ms();
// Waits until `dir`'s cgroup.procs is empty (or the folder is gone).
Status wait_empty(const fs::path& dir, uint64_t timeout_ms);
Status kill_each(const fs::path& dir);
Status remove_dir(const fs::path& dir);
Status make_dir(const fs::path& dir, bool must_be_new);
// A run id is one group name or a nested one ("<node>/learner"): no empty, "." or ".." part.
Status check_run_id(std::string_view run_id);

// Makes the run's folder `dir` (which must be new) under `base` (the `aura/` folder), calling
// `prepare` after `base` exists. remove_run_dir() of a concurrent run may remove `base` between
// the two steps; then the whole sequence is retried. A nested group's enclosing group must
// exist already (kNotFound): it is never made here without its limits.
template <class Prepare>
Status make_run_dir(const fs::path& base, const fs::path& dir, Prepare prepare) {
  for (int attempt = 0;; ++attempt) {
    AURA_RETURN_IF_ERROR(make_dir(base, false));
    Status prepared = prepare();
    if (prepared.is_ok() && ::mkdir(dir.c_str(), 0755) == 0) return Status::ok();
    const int err = errno;
    if (prepared.is_ok() && err == EEXIST) return Status::busy(dir.string() + ": exists");
    const bool base_vanished = ::access(base.c_str(), F_OK) != 0;
    if (!base_vanished || attempt == 3) {
      if (!prepared.is_ok()) return prepared;
      if (err == ENOENT && dir.parent_path() != base)
        return Status::not_found("mkdir " + dir.string() + ": the enclosing group does not exist");
      return Status::io("mkdir " + dir.string() + ": " + file_io::errno_text(err));
    }
  }
}

// Removes the run's folder, then `base` (its `aura/` folder) if no other run uses it, so
// nothing of the sandbox stays in a cgroup tree it does not own (a leftover child folder would
// keep the owner of the enclosing cgroup from removing it). A nested group's enclosing group is
// left alone.
Status remove_run_dir(const fs::path& base, const fs::path& dir);

// Writes `value` to `dir/file`, then polls `dir/state_file` until `reached(its text)`, for at
// most kFreezeWaitMs (kBusy "<dir>: did not <what>"). The value is written again every 10 ms
// while waiting: the v1 freezer kicks each task once per write, and a task that was running
// then and is now asleep waiting on a frozen one (a vfork() parent whose child froze before
// exec, as dash does) stays unfrozen until the next kick, leaving the group FREEZING for good.
// Writing the same value again is a no-op otherwise (and on v2).
template <class Reached>
Status write_and_wait(const fs::path& dir, const char* file, std::string_view value,
                      const char* state_file, Reached reached, std::string_view what) {
  AURA_RETURN_IF_ERROR(write_text(dir / file, value));
  const uint64_t until = now_ms() + kFreezeWaitMs;
  for (uint64_t polls = 1;; ++polls) {
    auto state = read_text(dir / state_file);
    if (!state.ok()) return state.status();
    if (reached(*state)) return Status::ok();
    if (now_ms() >= until) return Status::busy(dir.string() + ": did not " + std::string(what));
    sleep_ms(1);
    if (polls % 10 == 0) AURA_RETURN_IF_ERROR(write_text(dir / file, value));
  }
}

// freeze() for either version: `set(true)` freezes and waits; on failure the group is thawed
// again (best effort) so a half-frozen group is not left behind.
template <class Set>
Status freeze_or_thaw_back(Set set) {
  Status frozen = set(true);
  if (!frozen.is_ok()) (void)set(false);
  return frozen;
}

struct MountEntry {
  std::string root;
  fs::path mount_point;
  std::string fstype;
  std::vector<std::string> super_options;
};

std::vector<std::string> split(std::string_view s, char sep);
Result<std::vector<MountEntry>> read_cgroup_mounts();
// This process's cgroup per v1 controller (e.g. "memory" → "/a/b") and under key "" for v2.
Result<std::map<std::string, std::string>> read_own_cgroups();
// `own` made relative to a mount whose root is `mount_root` (a mount of a sub-tree).
fs::path under_mount(const fs::path& mount_point, const std::string& mount_root,
                     const std::string& own);

// cgroup_v1.cc: the tree over the v1 hierarchies, given each one's base (…/<own cgroup>/aura).
std::unique_ptr<CgroupTree> make_v1(fs::path cpu, fs::path cpuacct, fs::path memory, fs::path pids,
                                    fs::path freezer);
// cgroup_v2.cc: kills every process of the v2 group `dir` and waits up to `timeout_ms` for it
// to be empty.
Status v2_kill_and_wait(const fs::path& dir, uint64_t timeout_ms);

}  // namespace aura::sandbox::cgroup_fs
