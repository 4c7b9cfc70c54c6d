#include "workers/caps/probe_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace aura::caps {

namespace {

// The one report a child writes: fixed size, so a short read means the child died first.
struct Report {
  int32_t err;
  char step[56];
};

void write_report(int fd, const StepResult& r) {
  Report rep{};
  rep.err = r.err;
  for (size_t i = 0; i + 1 < sizeof(rep.step) && r.step[i] != '\0'; ++i) rep.step[i] = r.step[i];
  ssize_t n;
  do {
    n = ::write(fd, &rep, sizeof(rep));
  } while (n < 0 && errno == EINTR);
}

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : int(left.count());
}

// Waits for `pid` (a process group leader) to exit without reaping it (its pid, and so its
// group id, stay taken), kills whatever is left in its group, then reaps it. At the deadline the
// group is killed first. Returns the wait status; sets `timed_out` when the deadline struck.
int reap_group(pid_t pid, std::chrono::steady_clock::time_point deadline, bool& timed_out) {
  while (!timed_out) {
    siginfo_t info{};
    const int w = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (w == 0 && info.si_pid == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (remaining_ms(deadline) == 0) {
      timed_out = true;
    } else {
      ::usleep(1000);
    }
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(name ? name : "errno " + std::to_string(err)) + " (" + std::strerror(err) +
         ")";
}

ChildOutcome run_in_child(const std::function<StepResult()>& step, int timeout_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {false, "pipe2: " + errno_text(errno)};
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return {false, "fork: " + errno_text(e)};
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);  // the parent kills the whole group at the deadline
    write_report(fds[1], step());
    ::_exit(0);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Report rep{};
  size_t got = 0;
  bool timed_out = false;
  while (got < sizeof(rep)) {
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&rep) + got, sizeof(rep) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end without a whole report
    got += size_t(n);
  }
  ::close(fds[0]);
  const int status = reap_group(pid, deadline, timed_out);
  if (timed_out) return {false, "timed out after " + std::to_string(timeout_ms) + " ms"};
  if (got < sizeof(rep)) {
    if (WIFSIGNALED(status)) {
      return {false, "probe child killed by signal " + std::to_string(WTERMSIG(status))};
    }
    return {false, "probe child exited without a report"};
  }
  rep.step[sizeof(rep.step) - 1] = '\0';
  if (rep.err < 0) return {false, std::string(rep.step)};
  if (rep.err != 0) return {false, std::string(rep.step) + ": " + errno_text(rep.err)};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {false, "probe child ended abnormally after reporting success"};
  }
  return {true, ""};
}

CommandOutcome run_command(const std::vector<std::string>& argv, int timeout_ms) {
  CommandOutcome out;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = "pipe2: " + errno_text(errno);
    return out;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = "fork: " + errno_text(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  bool timed_out = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.output.size() < kMaxCommandOutputBytes) {
      out.output.append(buf, std::min(size_t(n), kMaxCommandOutputBytes - out.output.size()));
    }
  }
  ::close(fds[0]);
  const int status = reap_group(pid, deadline, timed_out);
  out.timed_out = timed_out;
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

}  // namespace aura::caps
