// Each namespace kind is unshared in a forked child, as a runner's setup really does it, and
// then used once (a uid map written, / made private, a process made pid 1, a hostname set).
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "workers/caps/probe_child.h"
#include "workers/caps/probes.h"

namespace aura::caps {

namespace {

// Writes `text` to `path` in one write. Allocation-free (runs after fork).
int write_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = ::write(fd, text, std::strlen(text));
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

// "0 <id> 1\n" into `out` without allocating.
void id_map_line(char (&out)[32], unsigned id) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = char('0' + id % 10);
    id /= 10;
  } while (id != 0);
  int i = 0;
  out[i++] = '0';
  out[i++] = ' ';
  while (n > 0) out[i++] = digits[--n];
  out[i++] = ' ';
  out[i++] = '1';
  out[i++] = '\n';
  out[i] = '\0';
}

StepResult user_step() {
  char uid_map[32], gid_map[32];
  id_map_line(uid_map, ::geteuid());
  id_map_line(gid_map, ::getegid());
  if (::unshare(CLONE_NEWUSER) != 0) return {errno, "unshare(CLONE_NEWUSER)"};
  if (int e = write_file("/proc/self/setgroups", "deny")) return {e, "write /proc/self/setgroups"};
  if (int e = write_file("/proc/self/uid_map", uid_map)) return {e, "write /proc/self/uid_map"};
  if (int e = write_file("/proc/self/gid_map", gid_map)) return {e, "write /proc/self/gid_map"};
  if (::getuid() != 0) return {-1, "uid inside the new user namespace is not 0 after mapping"};
  return {};
}

StepResult mount_step() {
  if (::unshare(CLONE_NEWNS) != 0) return {errno, "unshare(CLONE_NEWNS)"};
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return {errno, "mount --make-rprivate /"};
  }
  return {};
}

StepResult pid_step() {
  if (::unshare(CLONE_NEWPID) != 0) return {errno, "unshare(CLONE_NEWPID)"};
  const pid_t child = ::fork();
  if (child < 0) return {errno, "fork into the new pid namespace"};
  if (child == 0) ::_exit(::getpid() == 1 ? 0 : 1);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return {errno, "waitpid"};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {-1, "the first process of the new pid namespace is not pid 1"};
  }
  return {};
}

StepResult net_step() {
  if (::unshare(CLONE_NEWNET) != 0) return {errno, "unshare(CLONE_NEWNET)"};
  return {};
}

StepResult ipc_step() {
  if (::unshare(CLONE_NEWIPC) != 0) return {errno, "unshare(CLONE_NEWIPC)"};
  return {};
}

StepResult uts_step() {
  if (::unshare(CLONE_NEWUTS) != 0) return {errno, "unshare(CLONE_NEWUTS)"};
  static constexpr char kName[] = "aura-caps-probe";
  if (::sethostname(kName, sizeof(kName) - 1) != 0) return {errno, "sethostname"};
  return {};
}

StepResult cgroup_step() {
  if (::unshare(CLONE_NEWCGROUP) != 0) return {errno, "unshare(CLONE_NEWCGROUP)"};
  return {};
}

}  // namespace

std::vector<Capability> measure_namespaces() {
  struct Kind {
    const char* name;
    StepResult (*step)();
    const char* done;  // what success means
  };
  static constexpr Kind kKinds[] = {
      {"ns_user", user_step, "unshared in a child; uid and gid 0 inside mapped to the caller's"},
      {"ns_mount", mount_step, "unshared in a child; / made recursively private"},
      {"ns_pid", pid_step, "unshared in a child; its first child is pid 1"},
      {"ns_net", net_step, "unshared in a child"},
      {"ns_ipc", ipc_step, "unshared in a child"},
      {"ns_uts", uts_step, "unshared in a child; hostname set inside"},
      {"ns_cgroup", cgroup_step, "unshared in a child"},
  };
  std::vector<Capability> out;
  for (const Kind& k : kKinds) {
    const ChildOutcome o = run_in_child(k.step);
    out.push_back({k.name, o.ok, o.ok ? k.done : o.reason});
  }
  return out;
}

}  // namespace aura::caps
