// cgroup v2: one folder per group (cgroup_fs.h has what it shares with v1).

#include <signal.h>

#include <algorithm>
#include <sstream>

#include "workers/sandbox/cgroup_fs.h"

namespace aura::sandbox::cgroup_fs {
namespace {

using file_io::errno_text;

Status set_v2_freeze(const fs::path& dir, bool frozen) {
  return write_and_wait(
      dir, "cgroup.freeze", frozen ? "1" : "0", "cgroup.events",
      [frozen](std::string_view text) { return keyed_value(text, "frozen") == (frozen ? 1 : 0); },
      frozen ? "freeze" : "thaw");
}

// ---------------------------------------------------------------------------------------------
// cgroup v2: one folder; cgroup.kill (5.14+) kills atomically, else cgroup.freeze, kill, thaw.
class CgroupV2 final : public CgroupTree {
 public:
  explicit CgroupV2(fs::path base) : base_(std::move(base)) {}

  CgroupVersion version() const override { return CgroupVersion::kV2; }

  std::vector<fs::path> paths(std::string_view run_id) const override {
    return {base_ / std::string(run_id)};
  }

  Status create(std::string_view run_id, const CgroupLimits& limits) override {
    AURA_RETURN_IF_ERROR(check_run_id(run_id));
    const fs::path dir = base_ / std::string(run_id);
    AURA_RETURN_IF_ERROR(make_run_dir(base_, dir, [this, &dir] {
      // The "no internal processes" rule: this fails with EBUSY when the supervisor's own
      // cgroup (base_'s parent) holds processes and is not the root; run the supervisor in a
      // delegated leaf whose parent has the controllers enabled.
      Status enable =
          write_text(base_.parent_path() / "cgroup.subtree_control", "+cpu +memory +pids");
      if (!enable.is_ok()) return Status::unavailable("cgroup v2: " + enable.message());
      AURA_RETURN_IF_ERROR(write_text(base_ / "cgroup.subtree_control", "+cpu +memory +pids"));
      // A nested group's enclosing groups pass the controllers on too (the same rule: an
      // enclosing group that holds processes itself cannot).
      fs::path up = base_;
      const fs::path rel = dir.lexically_relative(base_);
      for (auto it = rel.begin(); std::next(it) != rel.end(); ++it) {
        up /= *it;
        if (::access(up.c_str(), F_OK) != 0) break;  // mkdir says which one is missing
        enable = write_text(up / "cgroup.subtree_control", "+cpu +memory +pids");
        if (!enable.is_ok()) return Status::unavailable("cgroup v2: " + enable.message());
      }
      return Status::ok();
    }));
    AURA_RETURN_IF_ERROR(write_text(dir / "cpu.max", std::to_string(limits.cpu_quota_us) + " " +
                                                         std::to_string(limits.cpu_period_us)));
    AURA_RETURN_IF_ERROR(write_text(dir / "memory.max", std::to_string(limits.memory_bytes)));
    if (::access((dir / "memory.swap.max").c_str(), F_OK) == 0)
      AURA_RETURN_IF_ERROR(write_text(dir / "memory.swap.max", "0"));
    AURA_RETURN_IF_ERROR(write_text(dir / "pids.max", std::to_string(limits.pids_max)));
    return Status::ok();
  }

  Status add_pid(std::string_view run_id, pid_t pid) override {
    return write_text(base_ / std::string(run_id) / "cgroup.procs", std::to_string(pid));
  }

  Result<std::vector<pid_t>> pids(std::string_view run_id) const override {
    return read_procs(base_ / std::string(run_id));
  }

  Result<CgroupUsage> usage(std::string_view run_id) const override {
    const fs::path dir = base_ / std::string(run_id);
    CgroupUsage u;
    auto cpu = read_text(dir / "cpu.stat");
    if (!cpu.ok()) return cpu.status();
    u.cpu_ns = keyed_value(*cpu, "usage_usec") * 1000;
    auto peak = read_text(dir / "memory.peak");
    if (peak.ok()) {
      u.peak_memory_bytes = parse_u64(*peak);
      u.peak_memory_known = true;
    }
    auto events = read_text(dir / "memory.events");
    if (events.ok()) u.oom_kills = keyed_value(*events, "oom_kill");
    auto pids = read_text(dir / "pids.events");
    if (pids.ok()) u.pids_limit_hits = keyed_value(*pids, "max");
    return u;
  }

  Status kill_all(std::string_view run_id, uint64_t timeout_ms) override {
    return kill_and_wait(base_ / std::string(run_id), timeout_ms);
  }

  Status remove(std::string_view run_id) override {
    AURA_RETURN_IF_ERROR(check_run_id(run_id));
    return remove_run_dir(base_, base_ / std::string(run_id));
  }

  Status freeze(std::string_view run_id) override {
    const fs::path dir = base_ / std::string(run_id);
    return freeze_or_thaw_back([&dir](bool frozen) { return set_v2_freeze(dir, frozen); });
  }

  Status thaw(std::string_view run_id) override {
    return set_v2_freeze(base_ / std::string(run_id), false);
  }

  static Status kill_and_wait(const fs::path& dir, uint64_t timeout_ms) {
    if (::access(dir.c_str(), F_OK) != 0) return Status::ok();
    if (auto procs = read_procs(dir); procs.ok() && procs->empty()) return Status::ok();
    if (::access((dir / "cgroup.kill").c_str(), F_OK) == 0) {
      AURA_RETURN_IF_ERROR(write_text(dir / "cgroup.kill", "1"));
    } else {
      // As on v1: killed and thawed even when it did not freeze.
      const Status frozen = set_v2_freeze(dir, true);
      Status killed = kill_each(dir);
      Status thawed = write_text(dir / "cgroup.freeze", "0");
      AURA_RETURN_IF_ERROR(killed);
      AURA_RETURN_IF_ERROR(thawed);
      if (Status s = wait_empty(dir, timeout_ms); !s.is_ok())
        return frozen.is_ok() ? s : frozen.with_context(s.message());
      return Status::ok();
    }
    return wait_empty(dir, timeout_ms);
  }

 private:
  fs::path base_;  // <mount>/<own cgroup>/aura
};

}  // namespace

Status v2_kill_and_wait(const fs::path& dir, uint64_t timeout_ms) {
  return CgroupV2::kill_and_wait(dir, timeout_ms);
}

}  // namespace aura::sandbox::cgroup_fs

namespace aura::sandbox {

Result<std::unique_ptr<CgroupTree>> CgroupTree::open_v2(const std::filesystem::path& mount) {
  using namespace cgroup_fs;
  auto own = read_own_cgroups();
  if (!own.ok()) return own.status();
  const auto it = own->find("");
  if (it == own->end()) return Status::unavailable("cgroup v2: no 0:: line in /proc/self/cgroup");
  const fs::path own_dir = under_mount(mount, "/", it->second);
  auto controllers = read_text(own_dir / "cgroup.controllers");
  if (!controllers.ok()) return Status::unavailable("cgroup v2: " + controllers.status().message());
  const std::vector<std::string> have = split(*controllers, ' ');
  std::string missing;
  for (const char* c : {"cpu", "memory", "pids"}) {
    bool found = false;
    for (std::string h : have) {
      while (!h.empty() && (h.back() == '\n')) h.pop_back();
      if (h == c) found = true;
    }
    if (!found) missing += std::string(missing.empty() ? "" : ",") + c;
  }
  if (!missing.empty())
    return Status::unavailable("cgroup v2 at " + mount.string() + ": controller(s) " + missing +
                               " not in " + (own_dir / "cgroup.controllers").string());
  return std::unique_ptr<CgroupTree>(new CgroupV2(own_dir / "aura"));
}

}  // namespace aura::sandbox
