// cgroup v1: one folder per hierarchy (cgroup_fs.h has what it shares with v2).

#include <signal.h>

#include <algorithm>
#include <sstream>

#include "workers/sandbox/cgroup_fs.h"

namespace aura::sandbox::cgroup_fs {
namespace {

using file_io::errno_text;

Status set_v1_freezer(const fs::path& dir, std::string_view state, std::string_view what) {
  return write_and_wait(
      dir, "freezer.state", state, "freezer.state",
      [state](std::string_view text) { return text.rfind(state, 0) == 0; }, what);
}

// ---------------------------------------------------------------------------------------------
// cgroup v1: one folder per hierarchy. The freezer hierarchy stops the run before it is killed,
// so no process can fork past the kill (v1 has no cgroup.kill).
class CgroupV1 final : public CgroupTree {
 public:
  // Bases (…/<own cgroup>/aura) per role.
  CgroupV1(fs::path cpu, fs::path cpuacct, fs::path memory, fs::path pids, fs::path freezer)
      : cpu_(std::move(cpu)),
        cpuacct_(std::move(cpuacct)),
        memory_(std::move(memory)),
        pids_(std::move(pids)),
        freezer_(std::move(freezer)) {}

  CgroupVersion version() const override { return CgroupVersion::kV1; }

  std::vector<fs::path> paths(std::string_view run_id) const override {
    std::vector<fs::path> out;
    for (const fs::path& base : bases()) out.push_back(base / std::string(run_id));
    return out;
  }

  Status create(std::string_view run_id, const CgroupLimits& limits) override {
    AURA_RETURN_IF_ERROR(check_run_id(run_id));
    const std::string id(run_id);
    for (const fs::path& base : bases())
      AURA_RETURN_IF_ERROR(make_run_dir(base, base / id, [] { return Status::ok(); }));
    AURA_RETURN_IF_ERROR(
        write_text(cpu_ / id / "cpu.cfs_period_us", std::to_string(limits.cpu_period_us)));
    AURA_RETURN_IF_ERROR(
        write_text(cpu_ / id / "cpu.cfs_quota_us", std::to_string(limits.cpu_quota_us)));
    const std::string mem = std::to_string(limits.memory_bytes);
    AURA_RETURN_IF_ERROR(write_text(memory_ / id / "memory.limit_in_bytes", mem));
    // Without this a run could spill past its limit into swap.
    if (::access((memory_ / id / "memory.memsw.limit_in_bytes").c_str(), F_OK) == 0)
      AURA_RETURN_IF_ERROR(write_text(memory_ / id / "memory.memsw.limit_in_bytes", mem));
    AURA_RETURN_IF_ERROR(write_text(pids_ / id / "pids.max", std::to_string(limits.pids_max)));
    return Status::ok();
  }

  Status add_pid(std::string_view run_id, pid_t pid) override {
    for (const fs::path& p : paths(run_id))
      AURA_RETURN_IF_ERROR(write_text(p / "cgroup.procs", std::to_string(pid)));
    return Status::ok();
  }

  void prime_migration() override {
    // The process's own freezer cgroup (the parent of aura/), where a new thread already is;
    // the helper thread exits right after, so nothing is left moved either way.
    [[maybe_unused]] Status s =
        write_text(freezer_.parent_path() / "tasks", std::to_string(::gettid()));
  }

  Result<std::vector<pid_t>> pids(std::string_view run_id) const override {
    return read_procs(freezer_ / std::string(run_id));
  }

  Result<CgroupUsage> usage(std::string_view run_id) const override {
    const std::string id(run_id);
    CgroupUsage u;
    auto cpu = read_text(cpuacct_ / id / "cpuacct.usage");
    if (!cpu.ok()) return cpu.status();
    u.cpu_ns = parse_u64(*cpu);
    auto peak = read_text(memory_ / id / "memory.max_usage_in_bytes");
    if (!peak.ok()) return peak.status();
    u.peak_memory_bytes = parse_u64(*peak);
    u.peak_memory_known = true;
    auto oom = read_text(memory_ / id / "memory.oom_control");
    if (oom.ok()) u.oom_kills = keyed_value(*oom, "oom_kill");
    auto events = read_text(pids_ / id / "pids.events");
    if (events.ok()) u.pids_limit_hits = keyed_value(*events, "max");
    return u;
  }

  Status kill_all(std::string_view run_id, uint64_t timeout_ms) override {
    const fs::path freezer = freezer_ / std::string(run_id);
    if (::access(freezer.c_str(), F_OK) != 0) return Status::ok();
    // Already empty (the usual end of a run): nothing to freeze. A group cannot refill itself
    // once empty, since only its own processes fork into it.
    if (auto procs = read_procs(freezer); procs.ok() && procs->empty()) {
      for (const fs::path& p : paths(run_id)) AURA_RETURN_IF_ERROR(wait_empty(p, timeout_ms));
      return Status::ok();
    }
    // A group that did not freeze is still killed and thawed: returning here would leave its
    // processes frozen for good (they act on SIGKILL only once thawed). Whatever forked past
    // the kill shows in wait_empty().
    const Status frozen = set_v1_freezer(freezer, "FROZEN", "freeze");
    Status killed = kill_each(freezer);
    Status thawed = write_text(freezer / "freezer.state", "THAWED");
    AURA_RETURN_IF_ERROR(killed);
    AURA_RETURN_IF_ERROR(thawed);
    for (const fs::path& p : paths(run_id)) {
      if (Status s = wait_empty(p, timeout_ms); !s.is_ok())
        return frozen.is_ok() ? s : frozen.with_context(s.message());
    }
    return Status::ok();
  }

  Status remove(std::string_view run_id) override {
    AURA_RETURN_IF_ERROR(check_run_id(run_id));
    for (const fs::path& base : bases())
      AURA_RETURN_IF_ERROR(remove_run_dir(base, base / std::string(run_id)));
    return Status::ok();
  }

  Status freeze(std::string_view run_id) override {
    const fs::path dir = freezer_ / std::string(run_id);
    return freeze_or_thaw_back([&dir](bool frozen) {
      return frozen ? set_v1_freezer(dir, "FROZEN", "freeze")
                    : set_v1_freezer(dir, "THAWED", "thaw");
    });
  }

  Status thaw(std::string_view run_id) override {
    return set_v1_freezer(freezer_ / std::string(run_id), "THAWED", "thaw");
  }

 private:
  // The `aura/` folder in each hierarchy, once each (cpu and cpuacct may be co-mounted).
  std::vector<fs::path> bases() const {
    std::vector<fs::path> out;
    for (const fs::path* base : {&cpu_, &cpuacct_, &memory_, &pids_, &freezer_})
      if (std::find(out.begin(), out.end(), *base) == out.end()) out.push_back(*base);
    return out;
  }

  fs::path cpu_, cpuacct_, memory_, pids_, freezer_;
};

}  // namespace

std::unique_ptr<CgroupTree> make_v1(fs::path cpu, fs::path cpuacct, fs::path memory, fs::path pids,
                                    fs::path freezer) {
  return std::make_unique<CgroupV1>(std::move(cpu), std::move(cpuacct), std::move(memory),
                                    std::move(pids), std::move(freezer));
}

}  // namespace aura::sandbox::cgroup_fs
