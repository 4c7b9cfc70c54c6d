#include "workers/sandbox/cgroup_fs.h"

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

namespace aura::sandbox::cgroup_fs {

using file_io::errno_text;

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

Status remove_run_dir(const fs::path& base, const fs::path& dir) {
  AURA_RETURN_IF_ERROR(remove_dir(dir));
  ::rmdir(base.c_str());  // EBUSY/ENOTEMPTY while other runs exist: fine
  return Status::ok();
}

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

}  // namespace aura::sandbox::cgroup_fs
