#include "workers/nsworld/join.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "workers/sandbox/linux_caps.h"

namespace aura::nsworld {
namespace {

// The seccomp program read from the spec: static, so join_node() allocates nothing.
sock_filter g_filter[kJoinMaxFilter];

bool read_all(int fd, void* buf, size_t n, off_t at) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= size_t(got);
    at += got;
  }
  return true;
}

}  // namespace

int write_join_spec(int fd, uint64_t keep_caps, const sock_filter* filter, size_t count) {
  if (count == 0 || count > kJoinMaxFilter) return EINVAL;
  unsigned char header[kJoinSpecHeaderBytes];
  const uint32_t version = kJoinSpecVersion, n = uint32_t(count);
  std::memcpy(header, &version, 4);
  std::memcpy(header + 4, &n, 4);
  std::memcpy(header + 8, &keep_caps, 8);
  if (::pwrite(fd, header, sizeof header, 0) != ssize_t(sizeof header)) return errno ? errno : EIO;
  const size_t bytes = count * sizeof(sock_filter);
  if (::pwrite(fd, filter, bytes, sizeof header) != ssize_t(bytes)) return errno ? errno : EIO;
  return 0;
}

void join_node(int keep_fd, JoinFailure& f) {
  auto fail = [&f](const char* step, int err) {
    f.step = step;
    f.err = err;
  };
  // Before anything else: nothing of the node may read this process's memory or descriptors
  // (the mm was made by an exec on the host, so its user namespace is the host's: a
  // non-dumpable process can be traced only with CAP_SYS_PTRACE there).
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return fail("make the process non-dumpable", errno);

  unsigned char header[kJoinSpecHeaderBytes];
  if (!read_all(kJoinSpecFd, header, sizeof header, 0)) return fail("read the join spec", EINVAL);
  uint32_t version = 0, count = 0;
  uint64_t keep_caps = 0;
  std::memcpy(&version, header, 4);
  std::memcpy(&count, header + 4, 4);
  std::memcpy(&keep_caps, header + 8, 8);
  if (version != kJoinSpecVersion || count == 0 || count > kJoinMaxFilter)
    return fail("read the join spec", EINVAL);
  if (!read_all(kJoinSpecFd, g_filter, count * sizeof(sock_filter), sizeof header))
    return fail("read the join spec", EINVAL);

  // The network namespace first (the host's user namespace owns it), then the node's user
  // namespace, then the rest, which it owns; then the node's root.
  for (int i = 0; i < kJoinNsCount; ++i)
    if (::setns(kJoinNsFirstFd + i, 0) != 0) return fail("join the node's namespaces", errno);
  if (::fchdir(kJoinRootFd) != 0 || ::chroot(".") != 0 || ::chdir("/") != 0)
    return fail("enter the node's root", errno);
  // Only stdio and the writer from here on.
  if (keep_fd > 3) ::syscall(SYS_close_range, 3u, unsigned(keep_fd - 1), 0u);
  ::syscall(SYS_close_range, unsigned(keep_fd >= 3 ? keep_fd + 1 : 3), ~0u, 0u);

  // The node's root (raw syscalls: see sandbox::become_namespace_root), then non-dumpable again,
  // since the uid change set it to fs.suid_dumpable.
  if (::syscall(SYS_setresgid, 0, 0, 0) != 0 || ::syscall(SYS_setresuid, 0, 0, 0) != 0)
    return fail("become the node's root", errno);
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return fail("make the process non-dumpable", errno);
  // The uid change cleared the parent-death signal the supervisor's fork set.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    return fail("set the parent-death signal", errno);
  if (const int e = sandbox::drop_linux_caps(keep_caps); e != 0)
    return fail("drop Linux capabilities", e);
  sock_fprog prog{static_cast<unsigned short>(count), g_filter};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    return fail("install the seccomp filter", errno);

  const pid_t child = ::fork();
  if (child < 0) return fail("fork into the node's PID namespace", errno);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    // The parent is outside this PID namespace (getppid() is 0); anything else means it died
    // before the signal was armed and this process was reparented to the node's init.
    if (::getppid() != 0) ::_exit(128 + SIGKILL);
    return;
  }
  if (keep_fd >= 0) ::close(keep_fd);  // only the child talks to the writer
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) ::_exit(126);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace aura::nsworld
