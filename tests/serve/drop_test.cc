// `aura serve` (the real binary, AURA_BIN) as root against the daemon test double: after it
// prints its URL it runs as the front's user with no capability, no_new_privs and a seccomp
// filter (its /proc/<pid>/status says so), still answers through the double, and refuses to
// serve when it could open the data folder. System tier: root, a system user (aura-web, created
// here when missing, as `aura setup` would).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "tests/serve/daemon_double.h"
#include "tests/serve/http_client.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto kStartGuard = 60s;  // hang guard: the front starts in well under a second

std::string aura_bin() {
  const char* b = std::getenv("AURA_BIN");
  REQUIRE_MESSAGE(b != nullptr, "AURA_BIN is not set");
  return b;
}

void ensure_front_user() {
  if (::getpwnam("aura-web") != nullptr) return;
  REQUIRE(std::system("useradd --system --no-create-home --shell /usr/sbin/nologin aura-web") == 0);
}

// `aura serve ...` with stdout on a pipe and stderr to a file.
struct Serve {
  pid_t pid = -1;
  int out = -1;
  std::string stdout_text;
  std::filesystem::path err_file;

  Serve(const std::vector<std::string>& args, std::filesystem::path err) : err_file(err) {
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
  std::string line_starting(const std::string& prefix) {
    auto deadline = std::chrono::steady_clock::now() + kStartGuard;
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

std::map<std::string, std::string> proc_status(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::map<std::string, std::string> m;
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t v = line.find_first_not_of(" \t", colon + 1);
    m[line.substr(0, colon)] = v == std::string::npos ? "" : line.substr(v);
  }
  return m;
}

}  // namespace

TEST_CASE("serve: the front drops to its user with no capability, no_new_privs and seccomp") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the system tier runs as root");
  ensure_front_user();
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);  // the front's user reaches the double's socket
  std::filesystem::create_directory(dir / "run");
  ::chmod((dir / "run").c_str(), 0755);
  std::filesystem::create_directory(dir / "data");
  std::filesystem::create_directory(dir / "keys");
  ::chmod((dir / "data").c_str(), 0700);
  ::chmod((dir / "keys").c_str(), 0700);
  DaemonDouble daemon(dir / "run" / "daemon.sock");

  Serve s({"--data", (dir / "data").string(), "--keys", (dir / "keys").string(), "--socket",
           (dir / "run" / "daemon.sock").string(), "--port", "0", "--no-daemon"},
          dir / "serve.err");
  std::string url = s.line_starting("AURA lab: ");
  REQUIRE_MESSAGE(!url.empty(), "no URL; stdout: " << s.stdout_text << " stderr: " << s.err());
  REQUIRE(url.rfind("http://127.0.0.1:", 0) == 0);
  uint16_t port = uint16_t(std::stoi(url.substr(17)));

  auto st = proc_status(s.pid);
  const passwd* pw = ::getpwnam("aura-web");
  REQUIRE(pw != nullptr);
  const std::string uid = std::to_string(pw->pw_uid);
  CHECK(st["Uid"] == uid + "\t" + uid + "\t" + uid + "\t" + uid);
  CHECK(st["Uid"].rfind("0\t", 0) != 0);
  CHECK(st["Groups"].empty());
  CHECK(st["CapEff"] == "0000000000000000");
  CHECK(st["CapPrm"] == "0000000000000000");
  CHECK(st["CapInh"] == "0000000000000000");
  CHECK(st["CapBnd"] == "0000000000000000");
  CHECK(st["CapAmb"] == "0000000000000000");
  CHECK(st["NoNewPrivs"] == "1");
  CHECK(st["Seccomp"] == "2");

  // It serves, through the double, as its user.
  auto health = http(port, "GET", "/api/v1/health");
  CHECK(health.status == 200);
  CHECK(daemon.last("health").has_value());

  ::kill(s.pid, SIGTERM);
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("serve: a data folder the front could open means it refuses to serve") {
  REQUIRE(::geteuid() == 0);
  ensure_front_user();
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  std::filesystem::create_directory(dir / "data");
  std::filesystem::create_directory(dir / "keys");
  ::chmod((dir / "data").c_str(), 0755);  // readable by anyone: wrong
  ::chmod((dir / "keys").c_str(), 0700);
  DaemonDouble daemon(dir / "daemon.sock");
  Serve s({"--data", (dir / "data").string(), "--keys", (dir / "keys").string(), "--socket",
           (dir / "daemon.sock").string(), "--port", "0", "--no-daemon"},
          dir / "serve.err");
  CHECK(s.wait_exit() == 1);
  CHECK(s.err().find("can still open " + (dir / "data").string()) != std::string::npos);
  CHECK(s.stdout_text.find("AURA lab:") == std::string::npos);
}

TEST_CASE("serve: a missing front user is named, with the command that creates it") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  DaemonDouble daemon(dir / "daemon.sock");
  Serve s({"--socket", (dir / "daemon.sock").string(), "--port", "0", "--no-daemon", "--user",
           "aura-no-such-user"},
          dir / "serve.err");
  CHECK(s.wait_exit() == 1);
  CHECK(s.err().find("'aura-no-such-user' does not exist: run 'aura setup'") != std::string::npos);
}
