// cgroup hierarchies as the kernel has them mounted (/proc/self/mountinfo), each proven writable
// by making and removing a probe cgroup; cgroup v2's controllers as cgroup.controllers lists them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "workers/caps/probe_child.h"
#include "workers/caps/probes.h"

namespace aura::caps {

namespace {

struct CgroupMount {
  std::string type;  // "cgroup" or "cgroup2"
  std::string mount_point;
  std::vector<std::string> options;  // super options: the v1 controllers are among them
};

// Octal escapes (\040 for a space) in mountinfo paths.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out.push_back(char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

std::vector<CgroupMount> cgroup_mounts() {
  std::vector<CgroupMount> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line, ' ');
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || std::distance(dash, f.end()) < 4) continue;
    const std::string& type = *(dash + 1);
    if (type != "cgroup" && type != "cgroup2") continue;
    out.push_back({type, unescape(f[4]), split(*(dash + 3), ',')});
  }
  return out;
}

// Makes and removes a child cgroup under `dir`; empty when both worked, else what failed.
std::string try_child_cgroup(const std::string& dir) {
  const std::string probe = dir + "/aura-caps-probe-" + std::to_string(::getpid());
  if (::mkdir(probe.c_str(), 0755) != 0) return "mkdir " + probe + ": " + errno_text(errno);
  if (::rmdir(probe.c_str()) != 0) return "rmdir " + probe + ": " + errno_text(errno);
  return "";
}

std::optional<CgroupMount> find_v1(const std::vector<CgroupMount>& mounts,
                                   const std::string& controller) {
  for (const CgroupMount& m : mounts) {
    if (m.type != "cgroup") continue;
    if (std::find(m.options.begin(), m.options.end(), controller) != m.options.end()) return m;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Capability> measure_cgroups() {
  const std::vector<CgroupMount> mounts = cgroup_mounts();
  std::vector<Capability> out;
  std::vector<std::string> v1_ok;
  for (const char* controller : {"cpu", "cpuacct", "cpuset", "memory", "pids", "freezer"}) {
    const std::string name = std::string("cgroup_v1_") + controller;
    const auto m = find_v1(mounts, controller);
    if (!m) {
      out.push_back({name, false,
                     std::string("no cgroup v1 hierarchy with the ") + controller +
                         " controller is mounted"});
      continue;
    }
    const std::string failed = try_child_cgroup(m->mount_point);
    if (!failed.empty()) {
      out.push_back({name, false, failed});
      continue;
    }
    v1_ok.push_back(controller);
    out.push_back(
        {name, true, "mounted at " + m->mount_point + "; a child cgroup was made and removed"});
  }

  std::vector<std::string> v2_controllers;
  bool v2_writable = false;
  const auto v2 = std::find_if(mounts.begin(), mounts.end(),
                               [](const CgroupMount& m) { return m.type == "cgroup2"; });
  if (v2 == mounts.end()) {
    out.push_back({"cgroup_v2", false, "no cgroup2 filesystem is mounted"});
  } else {
    std::ifstream in(v2->mount_point + "/cgroup.controllers");
    std::string line;
    if (!in) {
      out.push_back({"cgroup_v2", false,
                     "mounted at " + v2->mount_point + " but cgroup.controllers cannot be read"});
    } else {
      std::getline(in, line);
      for (const std::string& c : split(line, ' ')) {
        if (!c.empty()) v2_controllers.push_back(c);
      }
      const std::string failed = try_child_cgroup(v2->mount_point);
      v2_writable = failed.empty();
      if (v2_controllers.empty()) {
        out.push_back(
            {"cgroup_v2", false, "mounted at " + v2->mount_point + " with no controllers"});
      } else if (!v2_writable) {
        out.push_back({"cgroup_v2", false, failed});
      } else {
        out.push_back(
            {"cgroup_v2", true, "mounted at " + v2->mount_point + "; controllers: " + line});
      }
    }
  }

  // The limits a runner needs: cpu, memory and pids, and a way to stop every process of a group
  // (v1: the freezer, then kill each; v2: cgroup.kill, which every v2 hierarchy has).
  auto missing = [](const std::vector<std::string>& have, std::initializer_list<const char*> need) {
    std::string m;
    for (const char* n : need) {
      if (std::find(have.begin(), have.end(), n) == have.end())
        m += (m.empty() ? "" : ", ") + std::string(n);
    }
    return m;
  };
  const std::string v1_missing = missing(v1_ok, {"cpu", "memory", "pids", "freezer"});
  const std::string v2_missing = missing(v2_controllers, {"cpu", "memory", "pids"});
  if (v1_missing.empty()) {
    out.push_back(
        {"cgroups", true, "cgroup v1: cpu, memory, pids and freezer hierarchies writable"});
  } else if (v2_missing.empty() && v2_writable) {
    out.push_back({"cgroups", true, "cgroup v2: cpu, memory and pids controllers, writable"});
  } else {
    out.push_back({"cgroups", false,
                   "no cpu, memory and pids limits: cgroup v1 lacks " + v1_missing +
                       "; cgroup v2 " +
                       (v2_missing.empty() ? "is not writable" : "lacks " + v2_missing)});
  }
  return out;
}

}  // namespace aura::caps
