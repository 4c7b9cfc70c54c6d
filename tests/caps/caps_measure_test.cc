// The capability panel measured for real on this machine (workers/caps). Each claim is checked
// against a fact this test derives itself by another route (util-linux `unshare`, /proc and /sys
// files, PATH), so the test fails if the measurement lies in either direction, and still runs on
// machines that lack a feature.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/scenario/capability_ids.h"
#include "workers/caps/capability.h"
#include "workers/caps/probe_child.h"

using namespace aura::caps;
namespace fs = std::filesystem;

namespace {

const Capability& get(const Measurement& m, std::string_view name) {
  for (const Capability& c : m.capabilities) {
    if (c.name == name) return c;
  }
  FAIL("no capability " << name);
  throw;
}

const Measurement& measured() {
  static const Measurement m = measure_capabilities();
  return m;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a command through /bin/sh with all output discarded; true on exit 0.
bool sh(const std::string& cmd) {
  const int st = std::system((cmd + " >/dev/null 2>&1").c_str());
  return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// A cgroup v1 hierarchy carrying `controller` in /proc/mounts.
bool v1_mounted(const std::string& controller) {
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type, opts, rest;
  while (in >> dev >> dir >> type >> opts && std::getline(in, rest)) {
    if (type != "cgroup") continue;
    std::stringstream o(opts);
    std::string opt;
    while (std::getline(o, opt, ',')) {
      if (opt == controller) return true;
    }
  }
  return false;
}

size_t count_prefixed(const fs::path& dir, std::string_view prefix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().starts_with(prefix)) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("caps: every entry has a name and a reason, in a fixed order without duplicates") {
  const Measurement& m = measured();
  CHECK_FALSE(m.host.empty());
  CHECK_FALSE(m.kernel_release.empty());
  REQUIRE(m.capabilities.size() >= 26);
  for (size_t i = 0; i < m.capabilities.size(); ++i) {
    CAPTURE(m.capabilities[i].name);
    CHECK_FALSE(m.capabilities[i].reason.empty());
    for (size_t j = 0; j < i; ++j) CHECK(m.capabilities[j].name != m.capabilities[i].name);
  }
  CHECK(m.capabilities.front().name == "ns_user");
}

TEST_CASE("caps: the panel measures exactly the capability ids a manifest may require") {
  std::vector<std::string> names;
  for (const Capability& c : measured().capabilities) names.push_back(c.name);
  const std::vector<std::string> ids(std::begin(aura::scenario::kCapabilityIds),
                                     std::end(aura::scenario::kCapabilityIds));
  CHECK(names == ids);
}

TEST_CASE("caps: sched_ext is measured as the kernel has it") {
  const Capability& c = get(measured(), "sched_ext");
  if (!fs::exists("/sys/kernel/sched_ext")) {
    CHECK_FALSE(c.available);
    CHECK(c.reason == "kernel has no sched_ext (no /sys/kernel/sched_ext)");
  } else {
    CHECK(c.available);
  }
}

TEST_CASE("caps: /dev/kvm is available only if a VM can really be created") {
  const Capability& c = get(measured(), "kvm");
  const int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    CHECK_FALSE(c.available);
    CHECK(c.reason == "open /dev/kvm O_RDWR: " + errno_text(e));
    return;
  }
  const int vm = ::ioctl(fd, KVM_CREATE_VM, 0);
  if (vm >= 0) ::close(vm);
  ::close(fd);
  CHECK(c.available == (vm >= 0));
}

TEST_CASE("caps: each namespace kind agrees with util-linux unshare run as a separate program") {
  REQUIRE(sh("command -v unshare"));
  const std::pair<const char*, const char*> kinds[] = {
      {"ns_user", "--user --map-root-user"},
      {"ns_mount", "--mount"},
      {"ns_pid", "--pid --fork"},
      {"ns_net", "--net"},
      {"ns_ipc", "--ipc"},
      {"ns_uts", "--uts"},
      {"ns_cgroup", "--cgroup"},
  };
  for (const auto& [name, flags] : kinds) {
    CAPTURE(name);
    const bool works = sh(std::string("unshare ") + flags + " true");
    const Capability& c = get(measured(), name);
    CHECK(c.available == works);
    if (!works) CHECK(c.reason.find("unshare") != std::string::npos);
  }
}

TEST_CASE("caps: overlayfs is available when the kernel lists it and we may mount") {
  const bool listed = slurp("/proc/filesystems").find("\toverlay\n") != std::string::npos;
  const Capability& c = get(measured(), "overlayfs");
  if (!listed) {
    CHECK_FALSE(c.available);
  } else if (::geteuid() == 0 && get(measured(), "ns_mount").available) {
    CHECK(c.available);
  }
}

TEST_CASE("caps: cgroup v1 controllers agree with /proc/mounts; the summary follows them") {
  bool all_limits = true;
  for (const char* controller : {"cpu", "cpuacct", "cpuset", "memory", "pids", "freezer"}) {
    CAPTURE(controller);
    const Capability& c = get(measured(), std::string("cgroup_v1_") + controller);
    const bool mounted = v1_mounted(controller);
    if (!mounted) {
      CHECK_FALSE(c.available);
      CHECK(c.reason.find("no cgroup v1 hierarchy") != std::string::npos);
    } else if (::geteuid() == 0 &&
               ::access(("/sys/fs/cgroup/" + std::string(controller)).c_str(), W_OK) == 0) {
      CHECK(c.available);
    }
    const std::string_view sv = controller;
    if (sv != "cpuacct" && sv != "cpuset" && !c.available) all_limits = false;
  }
  if (all_limits) CHECK(get(measured(), "cgroups").available);
}

TEST_CASE("caps: cgroup v2 reports its controllers, or that it has none") {
  const Capability& c = get(measured(), "cgroup_v2");
  for (const char* mnt : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    if (!fs::exists(fs::path(mnt) / "cgroup.controllers")) continue;
    std::string line = slurp(fs::path(mnt) / "cgroup.controllers");
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (line.empty()) {
      CHECK_FALSE(c.available);
      CHECK(c.reason == std::string("mounted at ") + mnt + " with no controllers");
    } else if (c.available) {
      CHECK(c.reason.find("controllers: " + line) != std::string::npos);
    }
    return;
  }
  CHECK_FALSE(c.available);
}

TEST_CASE("caps: seccomp is available when the kernel offers filters with errno actions") {
  const bool filters = slurp("/proc/self/status").find("Seccomp_filters:") != std::string::npos;
  const bool errno_action =
      slurp("/proc/sys/kernel/seccomp/actions_avail").find("errno") != std::string::npos;
  if (filters && errno_action) CHECK(get(measured(), "seccomp").available);
  if (!fs::exists("/proc/sys/kernel/seccomp/actions_avail")) {
    CHECK_FALSE(get(measured(), "seccomp").available);
  }
}

TEST_CASE("caps: BPF, BTF and the ring buffer agree with what the kernel exposes") {
  const Capability& btf = get(measured(), "btf");
  CHECK(btf.available == fs::exists("/sys/kernel/btf/vmlinux"));
  // A kernel with the BPF JIT knob has the bpf() syscall; root may load a socket filter.
  if (::geteuid() == 0 && fs::exists("/proc/sys/net/core/bpf_jit_enable")) {
    CHECK(get(measured(), "bpf").available);
    // Ring buffers came with 5.8.
    int major = 0, minor = 0;
    std::sscanf(measured().kernel_release.c_str(), "%d.%d", &major, &minor);
    if (major > 5 || (major == 5 && minor >= 8)) CHECK(get(measured(), "bpf_ringbuf").available);
  }
}

TEST_CASE("caps: a tool is available exactly when the shell finds and runs it") {
  const std::pair<const char*, const char*> tools[] = {
      {"nginx", "nginx -v"},
      {"ansible-playbook", "ansible-playbook --version"},
      {"bwrap", "bwrap --version"},
      {"ssh", "ssh -V"},
      {"sshd", "sshd -V"}};
  for (const auto& [tool, cmd] : tools) {
    CAPTURE(tool);
    const Capability& c = get(measured(), std::string("tool_") + tool);
    const bool found = sh(std::string("command -v ") + tool);
    if (!found) {
      CHECK_FALSE(c.available);
      CHECK(c.reason.find("not found on PATH") != std::string::npos);
    } else {
      CHECK(c.available == sh(cmd));
    }
  }
}

TEST_CASE("caps: a measurement leaves no temp folder, probe cgroup or mount behind") {
  const size_t tmp_before = count_prefixed("/tmp", "aura-caps-");
  const std::string mounts_before = slurp("/proc/self/mountinfo");
  measure_capabilities();
  CHECK(count_prefixed("/tmp", "aura-caps-") == tmp_before);
  CHECK(slurp("/proc/self/mountinfo") == mounts_before);
  for (const char* c : {"cpu", "cpuacct", "cpuset", "memory", "pids", "freezer", "unified"}) {
    CAPTURE(c);
    CHECK(count_prefixed(fs::path("/sys/fs/cgroup") / c, "aura-caps-probe-") == 0);
  }
}

TEST_CASE("caps probe child: a hung step is killed at its deadline; a crash is named") {
  const auto t0 = std::chrono::steady_clock::now();
  const ChildOutcome hung = run_in_child(
      [] {
        ::sleep(120);
        return StepResult{};
      },
      200);
  // Killed at its 200 ms deadline, not waited for: back well before the step's 120 s. The 30 s
  // is a hang guard (a fork, 200 ms and a kill, on a machine half as fast and busy), not a bar.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  CHECK_FALSE(hung.ok);
  CHECK(hung.reason == "timed out after 200 ms");

  const ChildOutcome crashed = run_in_child([] {
    ::raise(SIGKILL);  // uncatchable: no test framework handler runs in the child
    return StepResult{};
  });
  CHECK_FALSE(crashed.ok);
  CHECK(crashed.reason == "probe child killed by signal 9");

  const ChildOutcome failed = run_in_child([] { return StepResult{EPERM, "unshare(X)"}; });
  CHECK_FALSE(failed.ok);
  CHECK(failed.reason == "unshare(X): EPERM (Operation not permitted)");
}
