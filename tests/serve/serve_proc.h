// `aura serve` as a real process for the system tier: its stdout on a pipe (read up to a line),
// stderr to a file, killed and reaped when the test ends. The front's user is created when missing,
// as `aura setup` would.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace aura::testing {

using namespace std::chrono_literals;

inline constexpr auto kStartGuard = 60s;  // hang guard: the front starts in well under a second

inline std::string aura_bin() {
  const char* b = std::getenv("AURA_BIN");
  REQUIRE_MESSAGE(b != nullptr, "AURA_BIN is not set");
  return b;
}

inline void ensure_front_user() {
  if (::getpwnam("aura-web") != nullptr) return;
  REQUIRE(std::system("useradd --system --no-create-home --shell /usr/sbin/nologin aura-web") == 0);
}

// `aura serve ...` with stdout on a pipe and stderr to a file.
struct Serve {
  pid_t pid = -1;
  int out = -1;
  std::string stdout_text;
  std::filesystem::path err_file;

  // `as_user`: started as that user (uid, gid, no supplementary groups), as a service manager's
  // User= would; otherwise as this process (root).
  Serve(const std::vector<std::string>& args, std::filesystem::path err,
        const passwd* as_user = nullptr)
      : err_file(err) {
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    std::vector<std::string> argv_s = {aura_bin(), "serve"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(p[1], 1);
      int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(e, 2);
      if (as_user != nullptr &&
          (::setgroups(0, nullptr) != 0 ||
           ::setresgid(as_user->pw_gid, as_user->pw_gid, as_user->pw_gid) != 0 ||
           ::setresuid(as_user->pw_uid, as_user->pw_uid, as_user->pw_uid) != 0)) {
        ::_exit(126);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(p[1]);
    out = p[0];
  }
  ~Serve() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out >= 0) ::close(out);
  }

  // Reads stdout until a line starts with `prefix` (its rest), or the end/guard ("").
  std::string line_starting(const std::string& prefix, std::chrono::seconds guard = kStartGuard) {
    auto deadline = std::chrono::steady_clock::now() + guard;
    for (;;) {
      size_t at = stdout_text.find(prefix);
      if (at != std::string::npos) {
        size_t eol = stdout_text.find('\n', at);
        if (eol != std::string::npos)
          return stdout_text.substr(at + prefix.size(), eol - at - prefix.size());
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd pf{out, POLLIN, 0};
      if (::poll(&pf, 1, int(left.count())) <= 0) return "";
      char buf[4096];
      ssize_t n = ::read(out, buf, sizeof buf);
      if (n <= 0) return "";
      stdout_text.append(buf, size_t(n));
    }
  }

  // Waits for the exit (hang guard) and returns its status.
  int wait_exit() {
    int st = 0;
    for (int i = 0; i < 1200; ++i) {
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }

  std::string err() const {
    std::ifstream in(err_file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace aura::testing
