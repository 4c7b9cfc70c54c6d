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
#include "tests/serve/serve_proc.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

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

// A lab's folders as set-up leaves them: data and keys 0700 root; run/ (the double's socket)
// and the folder itself reachable by the front's user.
void make_folders(const TempDir& dir) {
  ::chmod(dir.path().c_str(), 0755);
  std::filesystem::create_directory(dir / "run");
  ::chmod((dir / "run").c_str(), 0755);
  std::filesystem::create_directory(dir / "data");
  std::filesystem::create_directory(dir / "keys");
  ::chmod((dir / "data").c_str(), 0700);
  ::chmod((dir / "keys").c_str(), 0700);
  // Packages as a source checkout leaves them: readable by anyone.
  std::filesystem::create_directories(dir / "scenarios" / "pkg");
  std::ofstream(dir / "scenarios" / "pkg" / "manifest.json") << "{\"answers\": true}\n";
  ::chmod((dir / "scenarios").c_str(), 0755);
  ::chmod((dir / "scenarios" / "pkg").c_str(), 0755);
  ::chmod((dir / "scenarios" / "pkg" / "manifest.json").c_str(), 0644);
}

// aura serve's flags for the folders make_folders lays out, the double's socket in run/.
std::vector<std::string> front_args(const TempDir& dir) {
  return {"--data",      (dir / "data").string(),
          "--keys",      (dir / "keys").string(),
          "--socket",    (dir / "run" / "daemon.sock").string(),
          "--scenarios", (dir / "scenarios").string(),
          "--port",      "0",
          "--no-daemon"};
}

// Whether `path` names a file in the mount namespace of process `pid` (as root, through
// /proc/PID/root, which resolves in that process's namespace).
bool exists_for(pid_t pid, const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::exists("/proc/" + std::to_string(pid) + "/root" + path.string(), ec);
}

// A user name this machine does not have.
std::string unused_user_name() {
  for (;;) {
    std::string name =
        "aura-t-" + std::to_string(::getpid()) + "-" + std::to_string(::random() % 100000);
    if (::getpwnam(name.c_str()) == nullptr) return name;
  }
}

// Removes the user (and its group) at scope end: a test's made-up user never stays behind.
struct UserRemover {
  std::string name;
  ~UserRemover() {
    if (::getpwnam(name.c_str()) != nullptr) (void)std::system(("userdel " + name).c_str());
  }
};

}  // namespace

TEST_CASE("serve: the front drops to its user with no capability, no_new_privs and seccomp") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the system tier runs as root");
  ensure_front_user();
  TempDir dir;
  make_folders(dir);
  DaemonDouble daemon(dir / "run" / "daemon.sock");

  Serve s(front_args(dir), dir / "serve.err");
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

  // The packages are there for the machine and not for the front, which also cannot open
  // their folder (its check after the drop would have refused to serve).
  const auto manifest = dir / "scenarios" / "pkg" / "manifest.json";
  CHECK(std::filesystem::exists(manifest));
  CHECK(exists_for(::getpid(), manifest));
  CHECK_FALSE(exists_for(s.pid, manifest));
  CHECK(exists_for(s.pid, dir / "run"));  // only the packages are covered

  ::kill(s.pid, SIGTERM);
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("serve: started as its user (a service manager's User=) it serves, confined") {
  REQUIRE(::geteuid() == 0);
  ensure_front_user();
  const passwd* pw = ::getpwnam("aura-web");
  REQUIRE(pw != nullptr);
  TempDir dir;
  make_folders(dir);
  DaemonDouble daemon(dir / "run" / "daemon.sock");
  // Started as its user the front cannot cover the packages: readable ones are refused.
  const std::vector<std::string> readable = {"--data",      (dir / "data").string(),
                                             "--keys",      (dir / "keys").string(),
                                             "--socket",    (dir / "run" / "daemon.sock").string(),
                                             "--scenarios", (dir / "scenarios").string(),
                                             "--port",      "0"};
  Serve open_packages(readable, dir / "open.err", pw);
  CHECK(open_packages.wait_exit() == 1);
  CHECK(open_packages.err().find("can still open " + (dir / "scenarios").string()) !=
        std::string::npos);
  CHECK(open_packages.stdout_text.find("AURA lab:") == std::string::npos);

  ::chmod((dir / "scenarios").c_str(), 0700);
  const std::vector<std::string> args = {"--data",      (dir / "data").string(),
                                         "--keys",      (dir / "keys").string(),
                                         "--socket",    (dir / "run" / "daemon.sock").string(),
                                         "--scenarios", (dir / "scenarios").string(),
                                         "--port",      "0"};

  // Without --no-daemon it still starts none (it could not), and it serves.
  Serve s(args, dir / "serve.err", pw);
  std::string url = s.line_starting("AURA lab: ");
  REQUIRE_MESSAGE(!url.empty(), "no URL; stdout: " << s.stdout_text << " stderr: " << s.err());
  uint16_t port = uint16_t(std::stoi(url.substr(17)));
  auto st = proc_status(s.pid);
  const std::string uid = std::to_string(pw->pw_uid);
  CHECK(st["Uid"] == uid + "\t" + uid + "\t" + uid + "\t" + uid);
  CHECK(st["CapEff"] == "0000000000000000");
  CHECK(st["CapPrm"] == "0000000000000000");
  CHECK(st["CapAmb"] == "0000000000000000");
  CHECK(st["NoNewPrivs"] == "1");
  CHECK(st["Seccomp"] == "2");
  CHECK(http(port, "GET", "/api/v1/health").status == 200);
  ::kill(s.pid, SIGTERM);
  CHECK(s.wait_exit() == 0);

  // With no daemon answering it says it cannot start one, and why.
  TempDir empty;
  ::chmod(empty.path().c_str(), 0755);
  Serve none({"--socket", (empty / "daemon.sock").string(), "--port", "0"}, empty / "serve.err",
             pw);
  CHECK(none.wait_exit() == 1);
  CHECK(none.err().find("started as aura-web, aura serve cannot start one") != std::string::npos);

  // Any other unprivileged user is refused.
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  Serve other(args, dir / "other.err", nobody);
  CHECK(other.wait_exit() == 1);
  CHECK(other.err().find("starts as root") != std::string::npos);
  CHECK(other.err().find("or as aura-web itself") != std::string::npos);
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

TEST_CASE(
    "serve: as root it makes a missing front user (a new machine has none), then drops to it") {
  REQUIRE(::geteuid() == 0);
  const std::string name = unused_user_name();
  REQUIRE(::getpwnam(name.c_str()) == nullptr);
  UserRemover remove_after{name};
  TempDir dir;
  make_folders(dir);
  DaemonDouble daemon(dir / "run" / "daemon.sock");
  std::vector<std::string> args = front_args(dir);
  args.insert(args.end(), {"--user", name});
  Serve s(args, dir / "serve.err");
  std::string url = s.line_starting("AURA lab: ");
  REQUIRE_MESSAGE(!url.empty(), "no URL; stdout: " << s.stdout_text << " stderr: " << s.err());
  CHECK(s.stdout_text.find("created the front's user " + name) != std::string::npos);
  const passwd* pw = ::getpwnam(name.c_str());
  REQUIRE(pw != nullptr);
  CHECK(pw->pw_uid != 0);
  const std::string uid = std::to_string(pw->pw_uid);
  CHECK(proc_status(s.pid)["Uid"] == uid + "\t" + uid + "\t" + uid + "\t" + uid);
  CHECK(http(uint16_t(std::stoi(url.substr(17))), "GET", "/api/v1/health").status == 200);
  ::kill(s.pid, SIGTERM);
  CHECK(s.wait_exit() == 0);
}

TEST_CASE("serve: the same name from $AURA_FRONT_USER; not root, a missing user is named") {
  REQUIRE(::geteuid() == 0);
  const std::string name = unused_user_name();
  TempDir dir;
  DaemonDouble daemon(dir / "daemon.sock");
  // Started as another user (nobody), it cannot make one: it says what would.
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  ::chmod(dir.path().c_str(), 0755);
  ::setenv("AURA_FRONT_USER", name.c_str(), 1);
  Serve s({"--socket", (dir / "daemon.sock").string(), "--port", "0", "--no-daemon"},
          dir / "serve.err", nobody);
  ::unsetenv("AURA_FRONT_USER");
  CHECK(s.wait_exit() == 1);
  CHECK(s.err().find("'" + name + "' does not exist: start aura serve or 'aura setup' as root") !=
        std::string::npos);
  CHECK(::getpwnam(name.c_str()) == nullptr);
}

TEST_CASE("serve: a socket under a 0700 parent, named by an absolute path, is reached") {
  REQUIRE(::geteuid() == 0);
  ensure_front_user();
  TempDir dir;  // 0700, as mkdtemp makes it: the front's user cannot search it
  struct stat st {};
  REQUIRE(::stat(dir.path().c_str(), &st) == 0);
  REQUIRE((st.st_mode & 07777) == 0700);
  std::filesystem::create_directory(dir / "run");
  ::chmod((dir / "run").c_str(), 0755);
  std::filesystem::create_directory(dir / "data", dir.path());
  std::filesystem::create_directory(dir / "keys", dir.path());
  DaemonDouble daemon(dir / "run" / "daemon.sock");
  Serve s(front_args(dir), dir / "serve.err");
  std::string url = s.line_starting("AURA lab: ");
  REQUIRE_MESSAGE(!url.empty(), "no URL; stdout: " << s.stdout_text << " stderr: " << s.err());
  const uint16_t port = uint16_t(std::stoi(url.substr(17)));
  for (int i = 0; i < 3; ++i) CHECK(http(port, "GET", "/api/v1/health").status == 200);
  CHECK(daemon.last("health").has_value());
  ::kill(s.pid, SIGTERM);
  CHECK(s.wait_exit() == 0);
}

TEST_CASE(
    "serve: a socket its user cannot reach: no URL, it exits naming the path and permission") {
  REQUIRE(::geteuid() == 0);
  ensure_front_user();
  TempDir dir;
  make_folders(dir);
  ::chmod((dir / "run").c_str(), 0700);  // root's alone: the front answers root, not its user
  DaemonDouble daemon(dir / "run" / "daemon.sock");
  Serve s(front_args(dir), dir / "serve.err");
  CHECK(s.wait_exit() == 1);
  const std::string err = s.err();
  CHECK_MESSAGE(err.find("cannot reach the engine daemon at " +
                         (dir / "run" / "daemon.sock").string()) != std::string::npos,
                err);
  CHECK_MESSAGE(err.find("no search (x) permission on " + (dir / "run").string() + " (mode 0700") !=
                    std::string::npos,
                err);
  CHECK(s.stdout_text.find("AURA lab:") == std::string::npos);
}
