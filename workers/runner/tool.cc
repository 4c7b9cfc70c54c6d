#include "workers/runner/tool.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "engine/common/file_io.h"

namespace aura::runner {
namespace {

constexpr const char* kToolEnv[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"};

struct Pipe {
  int r = -1, w = -1;
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
};

Status make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_error("pipe", errno);
  p.r = fds[0];
  p.w = fds[1];
  return Status::ok();
}

// Reads what is available from `fd` into `run` (at most cap bytes kept; the rest read and
// dropped so the tool never blocks on a full pipe). False at end of file.
bool drain(int fd, size_t cap, ToolRun& run) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN;
    if (n == 0) return false;
    const size_t keep = std::min(size_t(n), cap - run.output.size());
    run.output.append(buf, keep);
    if (keep < size_t(n)) run.truncated = true;
  }
}

}  // namespace

Result<ToolRun> run_tool(const std::vector<std::string>& argv, size_t cap,
                         std::chrono::milliseconds deadline, const ToolPlace& place) {
  const std::string what = "exec " + argv.at(0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (const char* e : kToolEnv) {
    const std::string_view name(e, std::string_view(e).find('=') + 1);
    bool replaced = false;
    for (const std::string& mine : place.env) replaced = replaced || mine.starts_with(name);
    if (!replaced) env.push_back(const_cast<char*>(e));
  }
  for (const std::string& e : place.env) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  const char* cwd = place.cwd.empty() ? nullptr : place.cwd.c_str();
  Pipe in, out, err;
  AURA_RETURN_IF_ERROR(make_pipe(in));
  AURA_RETURN_IF_ERROR(make_pipe(out));
  AURA_RETURN_IF_ERROR(make_pipe(err));
  const auto end = std::chrono::steady_clock::now() + deadline;
  const pid_t pid = ::fork();
  if (pid < 0) return errno_error(what, "fork", errno);
  if (pid == 0) {
    // The child allocates nothing: on failure it writes its errno to `err` and exits.
    ::setpgid(0, 0);
    if (::dup2(in.r, 0) >= 0 && ::dup2(out.w, 1) >= 0 && ::dup2(out.w, 2) >= 0) {
      ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);  // belt: nothing else inherited
      if (cwd == nullptr || ::chdir(cwd) == 0) ::execve(args[0], args.data(), env.data());
    }
    const int e = errno;
    (void)!::write(err.w, &e, sizeof e);
    ::_exit(127);
  }
  ::close(in.w);
  in.w = -1;
  ::close(out.w);
  out.w = -1;
  ::close(err.w);
  err.w = -1;
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(err.r, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ToolRun run;
  if (got == sizeof exec_errno) {
    ::waitpid(pid, &run.wait_status, 0);
    return errno_error(what, exec_errno);
  }
  ::fcntl(out.r, F_SETFL, O_NONBLOCK);
  const int pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
  file_io::Fd pidfd_guard(pidfd);
  bool open = true, exited = false;
  while (!exited) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &run.wait_status, 0);
      run.timed_out = true;
      break;
    }
    pollfd fds[2] = {{open ? out.r : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    // Without a pidfd (an old kernel) the exit is noticed by polling waitpid.
    const int timeout_ms = int(pidfd >= 0 ? left.count() : std::min<int64_t>(left.count(), 20));
    if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      return errno_error(what, "poll", errno);
    }
    if (open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) open = drain(out.r, cap, run);
    const pid_t w = ::waitpid(pid, &run.wait_status, WNOHANG);
    if (w == pid) exited = true;
  }
  // What the tool wrote before it exited; a daemon it left holding the pipe is not waited for.
  if (open) drain(out.r, cap, run);
  return run;
}

namespace {
std::chrono::seconds g_tool_deadline = kToolDeadline;
}  // namespace

std::chrono::seconds tool_deadline() { return g_tool_deadline; }

Status set_tool_deadline(std::chrono::seconds s) {
  if (s < std::chrono::seconds(1) || s > kToolDeadline)
    return Status::invalid("a tool deadline of " + std::to_string(s.count()) +
                           " s is not within 1.." + std::to_string(kToolDeadline.count()) + " s");
  g_tool_deadline = s;
  return Status::ok();
}

Status report_tool(const std::vector<std::string>& argv, Output& out, const ToolPlace& place) {
  ToolRun run;
  const std::chrono::seconds deadline = tool_deadline();
  AURA_ASSIGN_OR_RETURN(run, run_tool(argv, out.cap(), deadline, place));
  std::string tail;
  if (run.timed_out) {
    tail += "killed: still running after " + std::to_string(deadline.count()) + " s\n";
  }
  const int st = run.wait_status;
  const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  tail += WIFEXITED(st) ? "exit " + std::to_string(WEXITSTATUS(st)) + "\n"
                        : "exit signal " + std::to_string(WTERMSIG(st)) + "\n";
  // The tail survives the cap: the output is cut to leave room for it and a line break.
  const size_t sep = !run.output.empty() && run.output.back() != '\n' ? 1 : 0;
  if (run.output.size() + sep + tail.size() > out.cap()) {
    run.output.resize(out.cap() > tail.size() + 1 ? out.cap() - tail.size() - 1 : 0);
    out.mark_truncated();
  }
  if (!run.output.empty() && run.output.back() != '\n') run.output += "\n";
  if (run.truncated) out.mark_truncated();
  out.append(run.output);
  out.append(tail);
  return ok ? Status::ok() : failure_in_output();
}

}  // namespace aura::runner
