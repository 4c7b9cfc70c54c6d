// The tools a scenario needs, found on PATH and run with their version flag: a tool that is
// present but cannot run (a missing library, a broken install) is unavailable too.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "engine/common/text.h"
#include "workers/caps/capability.h"
#include "workers/caps/probe_child.h"

namespace aura::caps {

namespace {

// Ansible's start-up imports many Python modules; give the tools more than the kernel probes.
constexpr int kToolTimeoutMs = 10000;

struct Tool {
  const char* name;
  const char* version_flag;
};

// Who needs each (the packages' "requires", docs/CAPABILITIES.md).
constexpr Tool kTools[] = {
    {"nginx", "-v"},                    // O1's web nodes, O2's node
    {"ansible-playbook", "--version"},  // O1's control node
    {"bwrap", "--version"},             // the baseline of aura bench sandbox
    {"ssh", "-V"},                      // O1's control node: Ansible connects over ssh
    {"sshd", "-V"},                     // O1's web nodes
};

std::string search_path() {
  const char* p = std::getenv("PATH");
  return p && *p ? p : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

// The first executable `name` in `path`'s folders, or empty.
std::string find_on_path(const std::string& name, const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    const size_t colon = path.find(':', start);
    const std::string dir =
        path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

// The first line of a tool's output, bounded and made safe for an event payload (a tool may
// print anything: other encodings, control characters).
std::string first_line(const std::string& s) {
  const size_t nl = s.find('\n');
  std::string line = s.substr(0, nl);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return safe_text(line, 256);
}

}  // namespace

std::vector<Capability> measure_tools() {
  const std::string path = search_path();
  std::vector<Capability> out;
  for (const Tool& t : kTools) {
    const std::string name = std::string("tool_") + t.name;
    const std::string bin = find_on_path(t.name, path);
    if (bin.empty()) {
      out.push_back({name, false, std::string(t.name) + " not found on PATH (" + path + ")"});
      continue;
    }
    const std::string cmd = bin + " " + t.version_flag;
    const CommandOutcome r = run_command({bin, t.version_flag}, kToolTimeoutMs);
    if (!r.error.empty()) {
      out.push_back({name, false, cmd + ": " + r.error});
    } else if (r.timed_out) {
      out.push_back(
          {name, false, cmd + ": timed out after " + std::to_string(kToolTimeoutMs) + " ms"});
    } else if (r.signal != 0) {
      out.push_back({name, false, cmd + ": killed by signal " + std::to_string(r.signal)});
    } else if (r.exit_code != 0) {
      out.push_back(
          {name, false,
           cmd + ": exit status " + std::to_string(r.exit_code) + ": " + first_line(r.output)});
    } else {
      out.push_back({name, true, cmd + ": " + first_line(r.output)});
    }
  }
  return out;
}

}  // namespace aura::caps
