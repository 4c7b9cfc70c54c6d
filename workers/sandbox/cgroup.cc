#include "workers/sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/common/file_io.h"

namespace aura::sandbox {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;

constexpr uint64_t kFreezeWaitMs = 2000;

Result<std::string> read_text(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(path.string() + ": missing");
    return Status::io("open " + path.string() + ": " + errno_text(err));
  }
  file_io::Fd guard(fd);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("read " + path.string() + ": " + errno_text(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) return Status::io("read " + path.string() + ": over 1 MiB");
  }
  return out;
}

Status write_text(const fs::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::io("open " + path.string() + ": " + errno_text(errno));
  file_io::Fd guard(fd);
  const ssize_t n = ::write(fd, text.data(), text.size());
  if (n < 0)
    return Status::io("write '" + std::string(text) + "' to " + path.string() + ": " +
                      errno_text(errno));
  if (static_cast<size_t>(n) != text.size())
    return Status::io("write " + path.string() + ": short write");
  return Status::ok();
}

uint64_t parse_u64(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The value of `key` in a "key value\n" file such as cpu.stat or pids.events; 0 when absent.
uint64_t keyed_value(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      return parse_u64(line.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return 0;
}

Result<std::vector<pid_t>> read_procs(const fs::path& dir) {
  auto text = read_text(dir / "cgroup.procs");
  if (!text.ok()) return text.status();
  std::vector<pid_t> out;
  std::istringstream in(*text);
  long v;
  while (in >> v) out.push_back(static_cast<pid_t>(v));
  return out;
}

void sleep_ms(long ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1'000'000
  };
  ::nanosleep(&ts, nullptr);
}

uint64_t now_ms() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

// Waits until `dir`'s cgroup.procs is empty (or the folder is gone).
Status wait_empty(const fs::path& dir, uint64_t timeout_ms) {
  const uint64_t until = now_ms() + timeout_ms;
  for (;;) {
    auto procs = read_procs(dir);
    if (!procs.ok()) {
      if (procs.status().code() == ErrorCode::kNotFound) return Status::ok();
      return procs.status();
    }
    if (procs->empty()) return Status::ok();
    if (now_ms() >= until)
      return Status::busy(dir.string() + ": " + std::to_string(procs->size()) +
                          " process(es) left after " + std::to_string(timeout_ms) + " ms");
    sleep_ms(2);
  }
}

Status kill_each(const fs::path& dir) {
  auto procs = read_procs(dir);
  if (!procs.ok()) {
    if (procs.status().code() == ErrorCode::kNotFound) return Status::ok();
    return procs.status();
  }
  for (pid_t p : *procs) {
    if (::kill(p, SIGKILL) != 0 && errno != ESRCH)
      return Status::io("kill " + std::to_string(p) + ": " + errno_text(errno));
  }
  return Status::ok();
}

Status remove_dir(const fs::path& dir) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::ok();
  if (errno == EBUSY) return Status::busy("rmdir " + dir.string() + ": EBUSY (processes left)");
  return Status::io("rmdir " + dir.string() + ": " + errno_text(errno));
}

Status make_dir(const fs::path& dir, bool must_be_new) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::ok();
  if (errno == EEXIST) {
    if (must_be_new) return Status::busy(dir.string() + ": exists");
    return Status::ok();
  }
  return Status::io("mkdir " + dir.string() + ": " + errno_text(errno));
}

// A run id is one group name or a nested one ("<node>/learner"): no empty, "." or ".." part.
Status check_run_id(std::string_view run_id) {
  size_t pos = 0;
  while (pos <= run_id.size()) {
    size_t end = run_id.find('/', pos);
    if (end == std::string_view::npos) end = run_id.size();
    const std::string_view part = run_id.substr(pos, end - pos);
    if (part.empty() || part == "." || part == "..")
      return Status::invalid("cgroup id '" + std::string(run_id) + "': bad component");
    pos = end + 1;
  }
  return Status::ok();
}

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
      return Status::io("mkdir " + dir.string() + ": " + errno_text(err));
    }
  }
}

// Removes the run's folder, then `base` (its `aura/` folder) if no other run uses it, so
// nothing of the sandbox stays in a cgroup tree it does not own (a leftover child folder would
// keep the owner of the enclosing cgroup from removing it). A nested group's enclosing group is
// left alone.
Status remove_run_dir(const fs::path& base, const fs::path& dir) {
  AURA_RETURN_IF_ERROR(remove_dir(dir));
  ::rmdir(base.c_str());  // EBUSY/ENOTEMPTY while other runs exist: fine
  return Status::ok();
}

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

Status set_v1_freezer(const fs::path& dir, std::string_view state, std::string_view what) {
  return write_and_wait(
      dir, "freezer.state", state, "freezer.state",
      [state](std::string_view text) { return text.rfind(state, 0) == 0; }, what);
}

Status set_v2_freeze(const fs::path& dir, bool frozen) {
  return write_and_wait(
      dir, "cgroup.freeze", frozen ? "1" : "0", "cgroup.events",
      [frozen](std::string_view text) { return keyed_value(text, "frozen") == (frozen ? 1 : 0); },
      frozen ? "freeze" : "thaw");
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

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    out.emplace_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Result<std::vector<MountEntry>> read_cgroup_mounts() {
  auto text = read_text("/proc/self/mountinfo");
  if (!text.ok()) return text.status();
  std::vector<MountEntry> out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream left(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    left >> id >> parent >> dev >> root >> mount_point;
    std::istringstream right(line.substr(dash + 3));
    std::string fstype, source, options;
    right >> fstype >> source >> options;
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    out.push_back({root, mount_point, fstype, split(options, ',')});
  }
  return out;
}

// This process's cgroup per v1 controller (e.g. "memory" → "/a/b") and under key "" for v2.
Result<std::map<std::string, std::string>> read_own_cgroups() {
  auto text = read_text("/proc/self/cgroup");
  if (!text.ok()) return text.status();
  std::map<std::string, std::string> out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    const size_t b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      out[""] = path;
      continue;
    }
    for (const auto& c : split(controllers, ',')) out[c] = path;
  }
  return out;
}

// `own` made relative to a mount whose root is `mount_root` (a mount of a sub-tree).
fs::path under_mount(const fs::path& mount_point, const std::string& mount_root,
                     const std::string& own) {
  std::string rel = own;
  if (mount_root != "/" && rel.rfind(mount_root, 0) == 0) rel = rel.substr(mount_root.size());
  while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
  return rel.empty() ? mount_point : mount_point / rel;
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

Result<std::unique_ptr<CgroupTree>> CgroupTree::open_v2(const fs::path& mount) {
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
    return std::unique_ptr<CgroupTree>(
        new CgroupV1(v1["cpu"], v1["cpuacct"], v1["memory"], v1["pids"], v1["freezer"]));
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
    AURA_RETURN_IF_ERROR(CgroupV2::kill_and_wait(path, timeout_ms));
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
  // The registry records a group by its own path; `aura/` above it goes too when empty.
  const fs::path parent = path.parent_path();
  return parent.filename() == "aura" ? remove_run_dir(parent, path) : remove_dir(path);
}

}  // namespace aura::sandbox
