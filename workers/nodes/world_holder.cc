// The holder process of a nodes world (world_parts.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/common/file_io.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/world_parts.h"

namespace aura::workers::nodes {

namespace fs = std::filesystem;
using file_io::errno_text;

void end_holder(Holder& h) {
  if (h.pid > 0 && sandbox::owner_of(h.pid) == h.owner) ::kill(h.pid, SIGKILL);
  if (h.pipe >= 0) ::close(h.pipe);
  if (h.child && h.pid > 0) {
    int st;
    while (::waitpid(h.pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  h = Holder{};
}

// Starts aura-holder (holder_main.cc) with the read end of a fresh pipe as its fd 3. The child
// only makes syscalls before exec: this process may have other threads.
Result<Holder> start_holder(const fs::path& state_dir) {
  std::string program;
  AURA_ASSIGN_OR_RETURN(program, tool_path("aura-holder"));
  const std::string state = state_dir.string();
  const char* argv[] = {"aura-holder", state.c_str(), nullptr};
  int p[2], e[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Status::io("pipe: " + errno_text(errno));
  if (::pipe2(e, O_CLOEXEC) != 0) {
    ::close(p[0]);
    ::close(p[1]);
    return Status::io("pipe: " + errno_text(errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Its own session: a signal to the creator's process group (a test harness's, a shell's)
    // does not reach it, so it can tear the world down after the creator is gone.
    ::setsid();
    // Keeps only stdio, the pipe (as 3) and the exec error pipe (as 4, closed by exec).
    const int pipe_fd = ::fcntl(p[0], F_DUPFD, 10);
    const int err_fd = ::fcntl(e[1], F_DUPFD_CLOEXEC, 10);
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (pipe_fd < 0 || err_fd < 0 || null_fd < 0 || ::dup2(null_fd, 0) < 0 ||
        ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0 || ::dup2(pipe_fd, 3) != 3 ||
        ::dup3(err_fd, 4, O_CLOEXEC) != 4)
      ::_exit(126);
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
    ::execv(program.c_str(), const_cast<char* const*>(argv));
    const int err = errno;
    [[maybe_unused]] ssize_t w = ::write(4, &err, sizeof err);
    ::_exit(127);
  }
  ::close(p[0]);
  ::close(e[1]);
  if (pid < 0) {
    ::close(p[1]);
    ::close(e[0]);
    return Status::io("fork: " + errno_text(errno));
  }
  Holder h;
  h.pid = pid;
  h.pipe = p[1];
  h.child = true;
  int err = 0;
  ssize_t n;
  while ((n = ::read(e[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(e[0]);
  if (n != 0) {
    end_holder(h);
    return Status::unavailable("start " + program + ": " +
                               (n == sizeof err ? errno_text(err) : std::string("failed")));
  }
  h.owner = sandbox::owner_of(pid);
  if (h.owner.empty()) {
    end_holder(h);
    return Status::io("the world's holder process died at start");
  }
  return h;
}

Status NodesWorld::persist() {
  if (holder_.pipe < 0) return Status::ok();  // reopened: it already persists
  if (::write(holder_.pipe, "P", 1) != 1) return Status::io("tell the holder to persist");
  return Status::ok();
}

}  // namespace aura::workers::nodes
