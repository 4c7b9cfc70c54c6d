#include "app/serve/daemon_keeper.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace aura::serve {
namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The keeper's life, in the forked child: nothing here allocates or throws.
[[noreturn]] void keeper_main(int pipe_fd, char* const* argv, int grace_s) {
  pid_t daemon = ::fork();
  if (daemon < 0) ::_exit(125);
  if (daemon == 0) {
    // The daemon: its own process group, default signals, dies with the keeper.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::close(pipe_fd);
    ::execv(argv[0], argv);
    ::_exit(127);
  }
  // The keeper: wait for the front's word (a byte, or the pipe's end) or the daemon's exit.
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(daemon, &status, WNOHANG);
    if (w == daemon) ::_exit(exit_code_of(status));
    pollfd p{pipe_fd, POLLIN, 0};
    int n = ::poll(&p, 1, 500);
    if (n > 0) break;
  }
  ::kill(daemon, SIGTERM);
  for (int waited_ms = 0;; waited_ms += 100) {
    pid_t w = ::waitpid(daemon, &status, WNOHANG);
    if (w == daemon) ::_exit(exit_code_of(status));
    if (waited_ms >= grace_s * 1000) {
      ::kill(daemon, SIGKILL);
      ::waitpid(daemon, &status, 0);
      ::_exit(exit_code_of(status));
    }
    ::usleep(100 * 1000);
  }
}

}  // namespace

Result<DaemonKeeper> DaemonKeeper::start(const DaemonCommand& c) {
  // Everything the children need is built before fork.
  std::vector<std::string> args = {c.exe.string(), "daemon",        "--data",   c.data.string(),
                                   "--keys",       c.keys.string(), "--socket", c.socket.string(),
                                   "--front-user", c.front_user};
  if (!c.scenarios.empty()) {
    args.push_back("--scenarios");
    args.push_back(c.scenarios.string());
  }
  if (!c.operator_token_file.empty()) {
    args.push_back("--operator-token-file");
    args.push_back(c.operator_token_file.string());
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::io(std::string("start the daemon: pipe: ") + std::strerror(errno));
  }
  pid_t keeper = ::fork();
  if (keeper < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::io(std::string("start the daemon: fork: ") + std::strerror(e));
  }
  if (keeper == 0) {
    ::close(fds[1]);
    // The keeper outlives a Ctrl-C: only the pipe tells it to stop.
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    keeper_main(fds[0], argv.data(), int(c.stop_grace.count()));
  }
  ::close(fds[0]);
  return DaemonKeeper(keeper, fds[1]);
}

DaemonKeeper::DaemonKeeper(DaemonKeeper&& o) noexcept
    : keeper_(o.keeper_), pipe_fd_(o.pipe_fd_), status_(o.status_) {
  o.keeper_ = -1;
  o.pipe_fd_ = -1;
}

DaemonKeeper::~DaemonKeeper() { (void)stop(); }

bool DaemonKeeper::exited(int* exit_status) {
  if (!status_ && keeper_ > 0) {
    int st = 0;
    if (::waitpid(keeper_, &st, WNOHANG) == keeper_) status_ = exit_code_of(st);
  }
  if (status_ && exit_status) *exit_status = *status_;
  return status_.has_value();
}

Status DaemonKeeper::stop() {
  if (pipe_fd_ >= 0) {
    ::close(pipe_fd_);
    pipe_fd_ = -1;
  }
  if (keeper_ > 0 && !status_) {
    int st = 0;
    pid_t w;
    do {
      w = ::waitpid(keeper_, &st, 0);
    } while (w < 0 && errno == EINTR);
    status_ = w == keeper_ ? exit_code_of(st) : 1;
  }
  keeper_ = -1;
  return Status::ok();
}

}  // namespace aura::serve
