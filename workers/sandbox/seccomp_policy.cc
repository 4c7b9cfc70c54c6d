#include "workers/sandbox/seccomp_policy.h"

#include <errno.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/common/file_io.h"

namespace aura::sandbox {
namespace {

// What an ordinary command (a shell, coreutils, iproute2, an interpreter) needs.
constexpr const char* kAllowed[] = {
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "close",
    "close_range",
    "creat",
    "lseek",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "umask",
    "truncate",
    "ftruncate",
    "fallocate",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "flock",
    "fcntl",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "mknod",
    "mknodat",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "sendfile",
    "copy_file_range",
    "splice",
    "tee",
    "fadvise64",
    "readahead",
    "ioctl",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "signalfd",
    "signalfd4",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    "memfd_create",
    "mmap",
    "munmap",
    "mprotect",
    "mremap",
    "msync",
    "mincore",
    "madvise",
    "brk",
    "mlock",
    "mlock2",
    "munlock",
    "mlockall",
    "munlockall",
    "membarrier",
    "futex",
    "futex_waitv",
    "set_robust_list",
    "get_robust_list",
    "set_tid_address",
    "rseq",
    "arch_prctl",
    "prctl",
    "getrandom",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "rt_sigsuspend",
    "sigaltstack",
    "kill",
    "tkill",
    "tgkill",
    "pidfd_open",
    "pidfd_send_signal",
    "pause",
    "nanosleep",
    "clock_nanosleep",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "alarm",
    "getitimer",
    "setitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "times",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "restart_syscall",
    "getpid",
    "getppid",
    "gettid",
    "getpgid",
    "setpgid",
    "getpgrp",
    "getsid",
    "setsid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "getgroups",
    "setgroups",
    "capget",
    "capset",
    "getrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "sysinfo",
    "uname",
    "getpriority",
    "setpriority",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_setparam",
    "sched_getscheduler",
    "sched_setscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "sched_getattr",
    "sched_setattr",
    "ioprio_get",
    "ioprio_set",
    "socketpair",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "getsockname",
    "getpeername",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "setsockopt",
    "getsockopt",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "get_mempolicy",
    "getcpu",
    // Granted by capability only to a service that declares sys_chroot (sshd's privilege
    // separation); a chroot never leaves the node's mount namespace.
    "chroot",
};

// Refused with EPERM. Each one reaches past the run's own namespaces, changes the machine, or is
// a large kernel attack surface a probe never needs (docs/SANDBOX.md says which is which).
const std::vector<std::string> kDenied = {
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "open_by_handle_at",
    "name_to_handle_at",
    "userfaultfd",
    "personality",
    "clock_settime",
    "clock_adjtime",
    "settimeofday",
    "adjtimex",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "sethostname",
    "setdomainname",
    "vhangup",
    "fanotify_init",
    "lookup_dcookie",
    "pidfd_getfd",
    "mbind",
    "set_mempolicy",
    "migrate_pages",
    "move_pages",
};

const std::vector<std::string> kConditional = {"socket", "clone", "sync", "syncfs"};

// ENOSYS, the default (docs/SANDBOX.md groups them with the reason for each).
const std::vector<std::string> kUnlisted = {
    // obsolete, removed or never implemented on x86_64
    "uselib", "ustat", "sysfs", "_sysctl", "create_module", "get_kernel_syms", "query_module",
    "nfsservctl", "getpmsg", "putpmsg", "afs_syscall", "tuxcall", "security", "vserver",
    "epoll_ctl_old", "epoll_wait_old", "remap_file_pages",
    // segment descriptors: 16/32-bit tricks (x86_64 libc uses arch_prctl)
    "modify_ldt", "set_thread_area", "get_thread_area",
    // kernel AIO: a second I/O path no tool of a world needs
    "io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel", "io_pgetevents",
    // page-reference tricks behind past pipe-buffer bugs
    "vmsplice",
    // acting on other processes, whole filesystems or the machine
    "fanotify_mark", "process_madvise", "process_mrelease", "quotactl_fd",
    "set_mempolicy_home_node",
    // clone3's flags are in memory a filter cannot read: libc falls back to clone
    "clone3",
    // filters and sandboxes of its own: prctl(PR_SET_SECCOMP) can still add a filter
    "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    // memory keys and secret memory no tool needs
    "pkey_mprotect", "pkey_alloc", "pkey_free", "memfd_secret",
    // newer than the kernels this lab runs on (libc falls back where it uses them)
    "cachestat", "fchmodat2", "map_shadow_stack", "futex_wake", "futex_wait", "futex_requeue"};

constexpr uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                     CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP |
                                     0x00000080 /* CLONE_NEWTIME */;

struct Ctx {
  scmp_filter_ctx ctx;
  ~Ctx() {
    if (ctx != nullptr) seccomp_release(ctx);
  }
};

Status rule(scmp_filter_ctx ctx, uint32_t action, const char* name, unsigned count = 0,
            const scmp_arg_cmp* cmp = nullptr) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return Status::ok();  // not a call on this architecture
  const int rc = seccomp_rule_add_array(ctx, action, nr, count, cmp);
  // A refused rule is a bug in this policy, not a feature the machine lacks: never "unavailable".
  if (rc != 0)
    return Status::failed_precondition(std::string("seccomp policy: rule for ") + name + ": " +
                                       file_io::errno_text(-rc));
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& seccomp_denied_syscalls() { return kDenied; }
const std::vector<std::string>& seccomp_conditional_syscalls() { return kConditional; }
const std::vector<std::string>& seccomp_unlisted_syscalls() { return kUnlisted; }
std::vector<std::string> seccomp_allowed_syscalls() {
  return std::vector<std::string>(std::begin(kAllowed), std::end(kAllowed));
}

Result<SeccompProgram> build_seccomp_program() {
  Ctx c{seccomp_init(SCMP_ACT_ERRNO(ENOSYS))};
  if (c.ctx == nullptr) return Status::unavailable("seccomp_init failed");
  if (seccomp_attr_set(c.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0)
    return Status::unavailable("seccomp: cannot set the bad-architecture action");
  for (const char* name : kAllowed) AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ALLOW, name));
  for (const std::string& name : kDenied) {
    if (name == "personality") continue;
    AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EPERM), name.c_str()));
  }
  // personality: querying (0xffffffff) is allowed, any change is refused.
  const scmp_arg_cmp query[] = {SCMP_A0(SCMP_CMP_EQ, 0xffffffffu)};
  const scmp_arg_cmp change[] = {SCMP_A0(SCMP_CMP_NE, 0xffffffffu)};
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ALLOW, "personality", 1, query));
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, change));

  // socket: only the families that stay inside the run's network namespace. AF_VSOCK in
  // particular is not namespaced and reaches the hypervisor's host; AF_PACKET, AF_KEY, AF_ALG,
  // Bluetooth and the rest are kernel surface no probe needs.
  for (const int family : {AF_UNIX, AF_INET, AF_INET6}) {
    const scmp_arg_cmp is[] = {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family))};
    AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ALLOW, "socket", 1, is));
  }
  // AF_NETLINK: routing (addresses, links, routes of the node's own network namespace) and
  // socket diagnostics (ss) only. Kernel uevents, audit, netfilter and the rest fail with
  // EPROTONOSUPPORT, which libraries read as "not here".
  static_assert(NETLINK_ROUTE == 0 && NETLINK_SOCK_DIAG == 4);
  for (scmp_datum_t protocol = 0; protocol <= NETLINK_SOCK_DIAG; ++protocol) {
    const scmp_arg_cmp is[] = {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_NETLINK)),
                               SCMP_A2(SCMP_CMP_EQ, protocol)};
    const bool allowed = protocol == NETLINK_ROUTE || protocol == NETLINK_SOCK_DIAG;
    AURA_RETURN_IF_ERROR(
        rule(c.ctx, allowed ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", 2, is));
  }
  const scmp_arg_cmp other_netlink[] = {
      SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_NETLINK)),
      SCMP_A2(SCMP_CMP_GT, static_cast<scmp_datum_t>(NETLINK_SOCK_DIAG))};
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", 2, other_netlink));
  // sync and syncfs flush every filesystem of the machine (syncfs: the host filesystem under
  // the node's overlay): they succeed and do nothing. fsync of one file is still real.
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(0), "sync"));
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(0), "syncfs"));
  // Every other family fails with EAFNOSUPPORT: libseccomp takes one comparison per argument
  // per rule, so the complement is each value below AF_NETLINK (16) that is not allowed, plus
  // everything above it (compared as 64 bits, so high garbage bits land there too).
  static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10 && AF_NETLINK == 16);
  for (scmp_datum_t family = 0; family < AF_NETLINK; ++family) {
    if (family == AF_UNIX || family == AF_INET || family == AF_INET6) continue;
    const scmp_arg_cmp is[] = {SCMP_A0(SCMP_CMP_EQ, family)};
    AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, is));
  }
  const scmp_arg_cmp above[] = {SCMP_A0(SCMP_CMP_GT, static_cast<scmp_datum_t>(AF_NETLINK))};
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, above));

  // clone: allowed without namespace flags; each namespace flag is refused with EPERM.
  const scmp_arg_cmp no_ns[] = {SCMP_A0(SCMP_CMP_MASKED_EQ, kNamespaceFlags, 0)};
  AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ALLOW, "clone", 1, no_ns));
  for (uint64_t bit = 1; bit != 0; bit <<= 1) {
    if ((kNamespaceFlags & bit) == 0) continue;
    const scmp_arg_cmp has[] = {SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit)};
    AURA_RETURN_IF_ERROR(rule(c.ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, has));
  }
  // clone3 is on no list, so it gets the default ENOSYS (libseccomp refuses a rule that repeats
  // the default action).

  const int fd = ::memfd_create("aura-seccomp", MFD_CLOEXEC);
  if (fd < 0) return Status::unavailable("seccomp: memfd_create: " + file_io::errno_text(errno));
  file_io::Fd guard(fd);
  if (const int rc = seccomp_export_bpf(c.ctx, fd); rc != 0)
    return Status::unavailable("seccomp_export_bpf: " + file_io::errno_text(-rc));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0)
    return Status::unavailable("seccomp: exported program has " + std::to_string(size) + " bytes");
  SeccompProgram program;
  program.instructions.resize(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(fd, program.instructions.data(), static_cast<size_t>(size), 0) != size)
    return Status::unavailable("seccomp: reading the exported program failed");
  return program;
}

}  // namespace aura::sandbox
