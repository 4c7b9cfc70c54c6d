#include "workers/sandbox/ns_entry.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/common/file_io.h"
#include "workers/sandbox/linux_caps.h"
#include "workers/sandbox/namespaces.h"
#include "workers/sandbox/network.h"

namespace aura::sandbox {
namespace {

EntryStatus fail_errno(EntryStep step) { return EntryStatus::failed(step, errno); }

// `src` as descriptor `target`, without close-on-exec. dup2 onto itself would leave the flag, so
// a descriptor already at its number has it cleared instead.
bool place(int src, int target) {
  if (src == target) return ::fcntl(target, F_SETFD, 0) == 0;
  return ::dup2(src, target) == target;
}

}  // namespace

const char* entry_step_name(EntryStep step) {
  switch (step) {
    case EntryStep::kNone:
      return "no step";
    case EntryStep::kSync:
      return "wait for the supervisor";
    case EntryStep::kCgroupNamespace:
      return "unshare the cgroup namespace";
    case EntryStep::kPrivateRoot:
      return "make mounts private";
    case EntryStep::kStageTmpfs:
      return "mount the stage tmpfs";
    case EntryStep::kChdirStage:
      return "enter the stage folder";
    case EntryStep::kBecomeRoot:
      return "become root of the user namespace";
    case EntryStep::kParentDeathSignal:
      return "set the parent-death signal";
    case EntryStep::kMountPlan:
      return "build the root";
    case EntryStep::kPivotRoot:
      return "pivot_root";
    case EntryStep::kDetachOldRoot:
      return "detach the old root";
    case EntryStep::kHostname:
      return "sethostname";
    case EntryStep::kLoopback:
      return "bring lo up";
    case EntryStep::kSetsid:
      return "setsid";
    case EntryStep::kStdio:
      return "set up stdio";
    case EntryStep::kCloseFds:
      return "close inherited fds";
    case EntryStep::kCoreLimit:
      return "set RLIMIT_CORE";
    case EntryStep::kLinuxCaps:
      return "drop Linux capabilities";
    case EntryStep::kSeccomp:
      return "install the seccomp filter";
    case EntryStep::kExec:
      return "execve";
    case EntryStep::kSendLayers:
      return "hand the layers to the host";
  }
  return "setup";
}

std::string describe(const EntryStatus& s, const MountPlan* plan) {
  std::string what = entry_step_name(s.step);
  if (s.step == EntryStep::kMountPlan && plan != nullptr && s.index >= 0 &&
      size_t(s.index) < plan->steps.size())
    what += ": " + plan->steps[size_t(s.index)].describe();
  return what + ": " + file_io::errno_text(s.err);
}

EntryStatus wait_for_go(int sync_fd) {
  char byte;
  if (::read(sync_fd, &byte, 1) != 1) return fail_errno(EntryStep::kSync);
  return {};
}

EntryStatus unshare_cgroup_namespace() {
  if (::unshare(CLONE_NEWCGROUP) != 0) return fail_errno(EntryStep::kCgroupNamespace);
  return {};
}

EntryStatus make_mounts_private() {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return fail_errno(EntryStep::kPrivateRoot);
  return {};
}

EntryStatus mount_stage(const char* stage, const char* stage_data) {
  // Still the host's uid 0 here (unmapped inside), so the stage folder is reachable even under a
  // 0700 state folder; the tmpfs's root belongs to the namespace's root (uid=0 in its options).
  if (::mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, stage_data) != 0)
    return fail_errno(EntryStep::kStageTmpfs);
  if (::chdir(stage) != 0) return fail_errno(EntryStep::kChdirStage);
  return {};
}

EntryStatus become_root() {
  if (const int err = become_namespace_root(); err != 0)
    return EntryStatus::failed(EntryStep::kBecomeRoot, err);
  return {};
}

EntryStatus set_parent_death_signal() {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return fail_errno(EntryStep::kParentDeathSignal);
  return {};
}

EntryStatus build_root(const MountPlan& plan) {
  ::umask(0);
  int err = 0;
  if (const int failed = apply_mount_plan(plan, &err); failed >= 0)
    return EntryStatus::failed(EntryStep::kMountPlan, err, failed);
  return {};
}

EntryStatus send_layers(int socket_fd) {
  // The working folder is the stage (mount_stage), the root is built in it. The root goes as a
  // clone of its mount alone (open_tree without AT_RECURSIVE: detached, with nothing mounted on
  // it, now or later): the root tmpfs as a layer, never what a mount in the node would show.
  const int fds[2] = {::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC),
                      int(::syscall(SYS_open_tree, AT_FDCWD, "root",
                                    unsigned(OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)))};
  if (fds[0] < 0 || fds[1] < 0) return fail_errno(EntryStep::kSendLayers);
  char byte = 'L';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  __builtin_memcpy(CMSG_DATA(c), fds, sizeof fds);
  if (::sendmsg(socket_fd, &msg, MSG_NOSIGNAL) != 1) return fail_errno(EntryStep::kSendLayers);
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(socket_fd);
  return {};
}

EntryStatus pivot_into_root() {
  if (::chdir("root") != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0)
    return fail_errno(EntryStep::kPivotRoot);
  if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0)
    return fail_errno(EntryStep::kDetachOldRoot);
  return {};
}

EntryStatus set_hostname(const char* name, size_t len) {
  if (::sethostname(name, len) != 0) return fail_errno(EntryStep::kHostname);
  return {};
}

EntryStatus loopback_up() {
  if (const int err = bring_loopback_up(); err != 0)
    return EntryStatus::failed(EntryStep::kLoopback, err);
  return {};
}

EntryStatus new_session() {
  if (::setsid() < 0) return fail_errno(EntryStep::kSetsid);
  return {};
}

EntryStatus set_stdio(int stdout_fd, int stderr_fd, int pass_fd) {
  // Read-only unless /dev/null stands in for an output too.
  const int mode = stdout_fd < 0 || stderr_fd < 0 ? O_RDWR : O_RDONLY;
  const int null_fd = ::open("/dev/null", mode | O_CLOEXEC);
  if (null_fd < 0 || !place(null_fd, 0) || !place(stdout_fd < 0 ? null_fd : stdout_fd, 1) ||
      !place(stderr_fd < 0 ? null_fd : stderr_fd, 2))
    return fail_errno(EntryStep::kStdio);
  if (pass_fd >= 0 && !place(pass_fd, 3)) return fail_errno(EntryStep::kStdio);
  return {};
}

EntryStatus close_fds(unsigned first, int keep_fd) {
  if (keep_fd >= 0 && unsigned(keep_fd) > first) {
    if (::syscall(SYS_close_range, first, unsigned(keep_fd - 1), 0u) != 0)
      return fail_errno(EntryStep::kCloseFds);
    first = unsigned(keep_fd) + 1;
  }
  if (::syscall(SYS_close_range, first, ~0u, 0u) != 0) return fail_errno(EntryStep::kCloseFds);
  return {};
}

EntryStatus no_core_dumps() {
  // A host whose core_pattern pipes to a handler would run it, as host root, for a crashing
  // process inside. Hard limit too: raising it needs CAP_SYS_RESOURCE in the initial namespace.
  const struct rlimit none = {0, 0};
  if (::setrlimit(RLIMIT_CORE, &none) != 0) return fail_errno(EntryStep::kCoreLimit);
  return {};
}

EntryStatus confine(uint64_t keep, const sock_fprog* seccomp) {
  if (const int err = drop_linux_caps(keep); err != 0)
    return EntryStatus::failed(EntryStep::kLinuxCaps, err);
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, seccomp, 0, 0) != 0)
    return fail_errno(EntryStep::kSeccomp);
  return {};
}

EntryStatus run_entry(const EntryPlan& p) {
#define AURA_ENTRY_STEP(call)      \
  do {                             \
    const EntryStatus s_ = (call); \
    if (!s_.ok()) return s_;       \
  } while (0)
  if (p.sync_fd >= 0) AURA_ENTRY_STEP(wait_for_go(p.sync_fd));
  if (p.new_cgroup_namespace) AURA_ENTRY_STEP(unshare_cgroup_namespace());
  AURA_ENTRY_STEP(make_mounts_private());
  AURA_ENTRY_STEP(mount_stage(p.stage, p.stage_data));
  AURA_ENTRY_STEP(become_root());
  if (p.parent_death_signal) AURA_ENTRY_STEP(set_parent_death_signal());
  AURA_ENTRY_STEP(build_root(*p.mounts));
  if (p.layers_fd >= 0) AURA_ENTRY_STEP(send_layers(p.layers_fd));
  AURA_ENTRY_STEP(pivot_into_root());
  ::umask(022);
  AURA_ENTRY_STEP(set_hostname(p.hostname, p.hostname_len));
  if (p.loopback) AURA_ENTRY_STEP(loopback_up());
  AURA_ENTRY_STEP(new_session());
  AURA_ENTRY_STEP(set_stdio(p.stdout_fd, p.stderr_fd, p.pass_fd));
  AURA_ENTRY_STEP(close_fds(p.pass_fd >= 0 ? 4u : 3u, p.keep_fd));
  if (p.no_core_dumps) AURA_ENTRY_STEP(no_core_dumps());
  if (p.confine) AURA_ENTRY_STEP(confine(p.linux_caps, p.seccomp));
#undef AURA_ENTRY_STEP
  return {};
}

void fail_entry(int error_fd, const EntryStatus& s) {
  [[maybe_unused]] ssize_t n = ::write(error_fd, &s, sizeof s);
  ::_exit(127);
}

}  // namespace aura::sandbox
