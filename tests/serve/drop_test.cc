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
}

}  // namespace

TEST_CASE("serve: the front drops to its user with no capability, no_new_privs and seccomp") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the system tier runs as root");
  ensure_front_user();
  TempDir dir;
  make_folders(dir);
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

TEST_CASE("serve: started as its user (a service manager's User=) it serves, confined") {
  REQUIRE(::geteuid() == 0);
  ensure_front_user();
  const passwd* pw = ::getpwnam("aura-web");
  REQUIRE(pw != nullptr);
  TempDir dir;
  make_folders(dir);
  DaemonDouble daemon(dir / "run" / "daemon.sock");
  const std::vector<std::string> args = {"--data",   (dir / "data").string(),
                                         "--keys",   (dir / "keys").string(),
                                         "--socket", (dir / "run" / "daemon.sock").string(),
                                         "--port",   "0"};

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
