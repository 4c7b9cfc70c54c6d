#include "app/serve/privileges.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace aura::serve {
namespace {

Status os_error(std::string_view what) {
  return Status::io(std::string(what) + ": " + std::strerror(errno));
}

int last_cap() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int n = 40;
  in >> n;
  return n;
}

// Step 1 (needs CAP_SETPCAP, so while root): no capability can ever come back through exec or
// the ambient set.
Status drop_bounding_and_ambient() {
  const int last = last_cap();
  for (int cap = 0; cap <= last; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return os_error("drop capability " + std::to_string(cap) + " from the bounding set");
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return os_error("clear the ambient capabilities");
  }
  return Status::ok();
}

// Step 2: groups, gid, uid (real, effective and saved), so none can be regained.
Status become(const UserIds& u) {
  if (::setgroups(0, nullptr) != 0) return os_error("setgroups(0)");
  if (::setresgid(u.gid, u.gid, u.gid) != 0) return os_error("setresgid");
  if (::setresuid(u.uid, u.uid, u.uid) != 0) return os_error("setresuid");
  uid_t r, e, s;
  if (::getresuid(&r, &e, &s) != 0 || r != u.uid || e != u.uid || s != u.uid) {
    return Status::failed_precondition("the uid did not change to " + std::to_string(u.uid));
  }
  return Status::ok();
}

// Step 3: effective, permitted and inheritable sets empty (the uid change cleared them; this
// says so explicitly and checks it).
Status clear_capabilities() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) return os_error("capset to zero");
  if (::syscall(SYS_capget, &hdr, data) != 0) return os_error("capget");
  for (const auto& d : data) {
    if (d.effective || d.permitted || d.inheritable) {
      return Status::failed_precondition("capabilities remain after capset");
    }
  }
  return Status::ok();
}

// Step 4.
Status set_no_new_privs() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return os_error("PR_SET_NO_NEW_PRIVS");
  return Status::ok();
}

// Step 5: a denylist (the front runs Asio, OpenSSL and glibc; an allowlist of their calls would
// be brittle across versions). Refused with EPERM: what a web front never needs. Also clone
// with a namespace flag (EPERM) and clone3 (ENOSYS: its flags are out of a filter's reach; glibc
// then uses clone). A call from another architecture kills the process.
Status install_seccomp() {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return Status::unavailable("seccomp_init failed");
  struct Release {
    scmp_filter_ctx c;
    ~Release() { ::seccomp_release(c); }
  } release{ctx};
  int rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc != 0) return Status::unavailable("seccomp: TSYNC: " + std::string(std::strerror(-rc)));
  for (const std::string& name : front_denied_syscalls()) {
    int nr = ::seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not a call of this architecture
    rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc != 0) {
      return Status::unavailable("seccomp: deny " + name + ": " + std::strerror(-rc));
    }
  }
  for (unsigned long flag : {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                             CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET}) {
    rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    if (rc != 0)
      return Status::unavailable("seccomp: clone rule: " + std::string(std::strerror(-rc)));
  }
  rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc != 0)
    return Status::unavailable("seccomp: clone3 rule: " + std::string(std::strerror(-rc)));
  rc = ::seccomp_load(ctx);
  if (rc != 0) return Status::unavailable("seccomp_load: " + std::string(std::strerror(-rc)));
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& front_denied_syscalls() {
  static const std::vector<std::string> names = {
      // Debugging and reading other processes.
      "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
      "perf_event_open", "bpf", "userfaultfd",
      // Mounts, namespaces, roots.
      "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree",
      "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
      // Escaping the folder checks.
      "open_by_handle_at", "name_to_handle_at",
      // The kernel itself.
      "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
      "create_module", "query_module", "get_kernel_syms", "reboot", "swapon", "swapoff", "acct",
      "syslog", "quotactl", "lookup_dcookie", "iopl", "ioperm", "modify_ldt", "uselib", "vhangup",
      "nfsservctl", "_sysctl",
      // Keys.
      "keyctl", "add_key", "request_key",
      // Identity: the drop is final.
      "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid",
      "setgroups", "capset", "personality",
      // Time and names of the machine.
      "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
      // Device nodes, whole-system notifications, io_uring (it bypasses this filter).
      "mknod", "mknodat", "fanotify_init", "io_uring_setup", "io_uring_enter", "io_uring_register",
      // Running programs: the front starts its daemon before it drops.
      "execve", "execveat"};
  return names;
}

Result<UserIds> lookup_front_user(const std::string& name) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || found == nullptr) {
    return Status::not_found("the front's user '" + name +
                             "' does not exist: start aura serve or 'aura setup' as root (either "
                             "creates it), or pass --user NAME");
  }
  if (pw.pw_uid == 0 || pw.pw_gid == 0) {
    return Status::invalid("--user " + name + ": the front never runs as root");
  }
  return UserIds{pw.pw_uid, pw.pw_gid};
}

Status drop_privileges(const UserIds& user) {
  if (::geteuid() != 0) {
    // Started as the user (a service manager's User=): the uid is already final; what is left
    // is any capability it was given, then no_new_privs and the filter. (Its bounding set is
    // the service manager's to empty: that needs CAP_SETPCAP.)
    uid_t r, e, sv;
    if (::getresuid(&r, &e, &sv) != 0 || r != user.uid || e != user.uid || sv != user.uid) {
      return Status::failed_precondition("drop privileges: not root and not the front's user");
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
      return os_error("drop privileges: clear the ambient capabilities");
    }
    AURA_RETURN_IF_ERROR(clear_capabilities().with_context("drop privileges"));
    AURA_RETURN_IF_ERROR(set_no_new_privs().with_context("drop privileges"));
    AURA_RETURN_IF_ERROR(install_seccomp().with_context("drop privileges"));
    return Status::ok();
  }
  AURA_RETURN_IF_ERROR(drop_bounding_and_ambient().with_context("drop privileges"));
  AURA_RETURN_IF_ERROR(become(user).with_context("drop privileges"));
  AURA_RETURN_IF_ERROR(clear_capabilities().with_context("drop privileges"));
  AURA_RETURN_IF_ERROR(set_no_new_privs().with_context("drop privileges"));
  AURA_RETURN_IF_ERROR(install_seccomp().with_context("drop privileges"));
  return Status::ok();
}

Status check_cannot_open(const std::vector<std::filesystem::path>& folders,
                         std::string_view remedy) {
  for (const auto& f : folders) {
    int fd = ::open(f.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      return Status::failed_precondition("after dropping privileges the front can still open " +
                                         f.string() + ": refusing to serve (" +
                                         std::string(remedy) + ")");
    }
  }
  return Status::ok();
}

Status hide_folders(const std::vector<std::filesystem::path>& folders) {
  if (::geteuid() != 0) return Status::failed_precondition("hide folders: not root");
  // A namespace is a thread's: with other threads they would keep the machine's view.
  std::error_code ec;
  size_t threads = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++threads;
  }
  if (ec || threads != 1) {
    return Status::failed_precondition("hide folders: the process must have one thread, not " +
                                       std::to_string(threads));
  }
  if (::unshare(CLONE_NEWNS) != 0) return os_error("hide folders: unshare(CLONE_NEWNS)");
  // Nothing mounted here reaches the machine's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return os_error("hide folders: make / private");
  }
  for (const auto& f : folders) {
    if (f.empty() || !std::filesystem::is_directory(f, ec)) continue;
    if (::mount("aura-hidden", f.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,nr_inodes=1,mode=000") != 0) {
      return os_error("hide folders: cover " + f.string());
    }
  }
  // A working folder under a covered one would still reach what lies beneath.
  if (::chdir("/") != 0) return os_error("hide folders: chdir /");
  return Status::ok();
}

}  // namespace aura::serve
