// Live worlds' memory, measured (world_memory.h).
#include "app/cli/world_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "workers/sandbox/leak_ledger.h"

namespace aura::cli {
namespace fs = std::filesystem;

namespace {

// The network namespace of a process ("net:[4026532...]"), "" when it is gone.
std::string netns_of(pid_t pid) {
  std::error_code ec;
  auto target = fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec);
  return ec ? "" : target.string();
}

uint64_t file_number(const fs::path& p) {
  std::ifstream in(p);
  uint64_t v = 0;
  in >> v;
  return v;
}

}  // namespace

uint64_t pss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Pss:", 0) == 0) return std::strtoull(line.c_str() + 4, nullptr, 10) * 1024;
  }
  return 0;
}

WorldMemory nodes_world_memory(const fs::path& data, size_t worlds) {
  WorldMemory m;
  m.worlds = worlds;
  auto entries = sandbox::LeakLedger(data / "sandbox").entries();
  if (!entries.ok()) return m;
  std::set<pid_t> pids;
  std::set<std::string> netns;
  for (const auto& e : *entries) {
    if (e.released || e.kind != sandbox::ResourceKind::kCgroup) continue;
    const bool v1 = fs::exists(e.path / "memory.usage_in_bytes");
    if (!v1 && !fs::exists(e.path / "memory.current")) continue;
    m.cgroups++;
    m.cgroup_bytes += file_number(e.path / (v1 ? "memory.usage_in_bytes" : "memory.current"));
    std::ifstream procs(e.path / "cgroup.procs");
    for (pid_t p; procs >> p;) {
      pids.insert(p);
      netns.insert(netns_of(p));
    }
    const pid_t owner = pid_t(std::strtol(e.owner.c_str(), nullptr, 10));
    if (owner > 0 && owner != ::getpid()) pids.insert(owner);
  }
  netns.erase("");
  netns.erase(netns_of(::getpid()));  // never the host's
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t p = pid_t(std::stol(name));
    if (netns.contains(netns_of(p))) pids.insert(p);
  }
  for (pid_t p : pids) {
    const uint64_t b = pss_bytes(p);
    if (b == 0) continue;
    m.processes++;
    m.pss_bytes += b;
  }
  return m;
}

uint64_t disk_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) total += uint64_t(st.st_blocks) * 512;
  }
  return total;
}

}  // namespace aura::cli
