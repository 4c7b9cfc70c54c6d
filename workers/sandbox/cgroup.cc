// CgroupTree::detect() picks a version (cgroup_v1.cc, cgroup_v2.cc), and leftovers are reaped
// by path.
#include "workers/sandbox/cgroup.h"

#include <unistd.h>

#include <map>

#include "workers/sandbox/cgroup_fs.h"

namespace aura::sandbox {

using namespace cgroup_fs;

Result<std::unique_ptr<CgroupTree>> CgroupTree::detect() {
  auto mounts = read_cgroup_mounts();
  if (!mounts.ok()) return Status::unavailable("cgroups: " + mounts.status().message());
  auto own = read_own_cgroups();
  if (!own.ok()) return Status::unavailable("cgroups: " + own.status().message());

  // v1: a mount per controller (cpu and cpuacct may share one).
  std::map<std::string, fs::path> v1;
  for (const MountEntry& m : *mounts) {
    if (m.fstype != "cgroup") continue;
    for (const std::string& opt : m.super_options) {
      for (const char* c : {"cpu", "cpuacct", "memory", "pids", "freezer"}) {
        if (opt != c) continue;
        const auto o = own->find(c);
        if (o == own->end()) continue;
        v1[c] = under_mount(m.mount_point, m.root, o->second) / "aura";
      }
    }
  }
  std::string v1_missing;
  for (const char* c : {"cpu", "cpuacct", "memory", "pids", "freezer"})
    if (!v1.count(c)) v1_missing += std::string(v1_missing.empty() ? "" : ",") + c;
  if (v1_missing.empty()) {
    return make_v1(v1["cpu"], v1["cpuacct"], v1["memory"], v1["pids"], v1["freezer"]);
  }

  std::string v2_reason = "no cgroup2 mount";
  for (const MountEntry& m : *mounts) {
    if (m.fstype != "cgroup2") continue;
    auto tree = open_v2(m.mount_point);
    if (tree.ok()) return tree;
    v2_reason = tree.status().message();
  }
  return Status::unavailable("cgroups: v1 lacks " + v1_missing + "; " + v2_reason);
}

Status kill_and_remove_group_path(const fs::path& path, uint64_t timeout_ms) {
  if (::access(path.c_str(), F_OK) != 0) return Status::ok();
  if (::access((path / "freezer.state").c_str(), F_OK) == 0) {
    AURA_RETURN_IF_ERROR(write_text(path / "freezer.state", "FROZEN"));
    sleep_ms(5);
    Status killed = kill_each(path);
    AURA_RETURN_IF_ERROR(write_text(path / "freezer.state", "THAWED"));
    AURA_RETURN_IF_ERROR(killed);
    AURA_RETURN_IF_ERROR(wait_empty(path, timeout_ms));
  } else if (::access((path / "cgroup.events").c_str(), F_OK) == 0) {
    AURA_RETURN_IF_ERROR(v2_kill_and_wait(path, timeout_ms));
  } else {
    // A v1 hierarchy without a freezer: kill until empty.
    const uint64_t until = now_ms() + timeout_ms;
    for (;;) {
      AURA_RETURN_IF_ERROR(kill_each(path));
      auto procs = read_procs(path);
      if (!procs.ok() || procs->empty()) break;
      if (now_ms() >= until) return Status::busy(path.string() + ": processes left");
      sleep_ms(2);
    }
  }
  // The ledger records a group by its own path; `aura/` above it goes too when empty.
  const fs::path parent = path.parent_path();
  return parent.filename() == "aura" ? remove_run_dir(parent, path) : remove_dir(path);
}

}  // namespace aura::sandbox
