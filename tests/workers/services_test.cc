// The O2 worlds' service manager and service, for real (as root): units are parsed strictly;
// aura-svcman runs aura-app under the unit's uid, gid and groups (read back from /proc), keeps
// its log and status, restarts it after a kill, reports a working directory its user cannot
// enter, a missing environment file and a config it cannot read as clear log lines, and leaves
// no process behind when it stops.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"
#include "workers/services/unit.h"

using namespace aura;
using namespace aura::services;
namespace fs = std::filesystem;

namespace {

std::string bin(const char* var) {
  const char* p = std::getenv(var);
  REQUIRE_MESSAGE(p != nullptr, var << " is not set (run through meson)");
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  std::ofstream(p) << text;
  REQUIRE(::chmod(p.c_str(), mode) == 0);
  REQUIRE(::chown(p.c_str(), uid, gid) == 0);
}

// Polls `cond` every 20 ms until it holds, or the hang guard (aura::testing::kHangGuard) passes.
bool eventually(const std::function<bool()>& cond) {
  return aura::testing::wait_until(cond, std::chrono::milliseconds(20));
}

std::string http_get(const fs::path& sock) {
  const int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, sock.c_str());
  if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(c);
    return {};
  }
  const std::string req = "GET / HTTP/1.0\r\n\r\n";
  (void)::send(c, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[1024];
  ssize_t n;
  while ((n = ::recv(c, buf, sizeof buf, 0)) > 0) out.append(buf, size_t(n));
  ::close(c);
  return out;
}

// A world-like tree: etc/app.conf (0640 app:app), var (the state folder), run (the socket).
struct SvcLab {
  aura::testing::TempDir dir;
  pid_t manager = -1;
  static constexpr uid_t kApp = 4242;
  static constexpr gid_t kExtra = 4343;

  SvcLab() {
    for (const char* d : {"units", "state", "etc", "var", "run"}) fs::create_directory(dir / d);
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    REQUIRE(::chown((dir / "var").c_str(), kApp, kApp) == 0);
    REQUIRE(::chown((dir / "run").c_str(), kApp, kApp) == 0);
    put(dir / "etc" / "app.conf",
        "socket=" + (dir / "run" / "app.sock").string() + "\nstate_dir=" + (dir / "var").string() +
            "\ngreeting=hello from app\nsecret=s3cret\n",
        0640, kApp, kApp);
  }
  ~SvcLab() { stop(); }

  void unit(const std::string& name, const std::string& extra) {
    put(dir / "units" / (name + ".unit"),
        "exec=" + bin("AURA_APP_BIN") + " --config " + (dir / "etc" / "app.conf").string() +
            "\nuser=" + std::to_string(kApp) + "\ngroup=" + std::to_string(kApp) +
            "\nrestart=always\nrestart_delay_ms=50\n" + extra,
        0644);
  }
  void start() {
    manager = ::fork();
    REQUIRE(manager >= 0);
    if (manager == 0) {
      const std::string b = bin("AURA_SVCMAN_BIN");
      ::execl(b.c_str(), b.c_str(), "run", "--units", (dir / "units").c_str(), "--state",
              (dir / "state").c_str(), nullptr);
      ::_exit(127);
    }
  }
  int stop() {
    if (manager <= 0) return -1;
    ::kill(manager, SIGTERM);
    int status = 0;
    ::waitpid(manager, &status, 0);
    manager = -1;
    return status;
  }
  std::string status(const std::string& name) const {
    return slurp(dir / "state" / (name + ".status"));
  }
  std::string log(const std::string& name) const { return slurp(dir / "state" / (name + ".log")); }
  pid_t pid(const std::string& name) const {
    const std::string s = status(name);
    const size_t at = s.find("\"pid\":");
    return at == std::string::npos ? -1 : pid_t(std::atoi(s.c_str() + at + 6));
  }
};

std::string proc_field(pid_t pid, const std::string& field) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  return {};
}

}  // namespace

TEST_CASE("services: unit files are parsed strictly, each error naming its line") {
  CHECK(parse_unit("app", "exec=/srv/app --x\nuser=app\n").ok());
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"exec=/srv/app\n", "no user="},
      {"user=app\n", "no exec="},
      {"exec=srv/app\nuser=app\n", "line 1 (exec): not an absolute path"},
      {"exec=/srv/../app\nuser=app\n", "not an absolute path"},
      {"exec=/srv/app  --x\nuser=app\n", "empty argument"},
      {"exec=/srv/app\nuser=app\nuser=root\n", "line 3: user given twice"},
      {"exec=/srv/app\nuser=app\nmagic=1\n", "unknown key \"magic\""},
      {"exec=/srv/app\nuser=app\nrestart=sometimes\n", "must be no, on-failure or always"},
      {"exec=/srv/app\nuser=app\nrestart_delay_ms=1\n", "10..60000"},
      {"exec=/srv/app\nuser=ap p\n", "not a user/group name"},
      {"exec=/srv/app\nuser=app\nworking_directory=var/lib\n", "not an absolute clean path"},
      {"exec=/srv/app\nuser=app\nno equals sign\n", "not key=value"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto u = parse_unit("app", c.text);
    REQUIRE_FALSE(u.ok());
    CHECK_MESSAGE(u.status().message().find(c.error) != std::string::npos, u.status().message());
  }
  CHECK_FALSE(parse_unit("App", "exec=/a\nuser=a\n").ok());
  auto env = parse_environment_file("# c\nA=1\n\nB_2=x=y\n");
  REQUIRE(env.ok());
  CHECK(*env == std::vector<std::string>{"A=1", "B_2=x=y"});
  CHECK_FALSE(parse_environment_file("a=1\n").ok());
  CHECK_FALSE(parse_environment_file("=1\n").ok());
}

TEST_CASE("services: the service runs under the unit's identity, is restarted, and is logged") {
  SvcLab lab;
  lab.unit("app", "supplementary_groups=" + std::to_string(SvcLab::kExtra) +
                      "\nworking_directory=" + (lab.dir / "var").string() + "\n");
  lab.start();
  REQUIRE(eventually(
      [&] { return lab.status("app").find("\"state\":\"running\"") != std::string::npos; }));
  const pid_t first = lab.pid("app");
  REQUIRE(first > 0);
  // The manager reports the service running once it has forked it; the identity is the child's
  // to take before it execs the app. Once the app answers, the process is the app.
  REQUIRE(eventually([&] { return !http_get(lab.dir / "run" / "app.sock").empty(); }));
  REQUIRE(lab.pid("app") == first);
  CHECK(proc_field(first, "Uid").find("4242\t4242\t4242\t4242") != std::string::npos);
  CHECK(proc_field(first, "Gid").find("4242\t4242\t4242\t4242") != std::string::npos);
  CHECK(proc_field(first, "Groups").find("4242 4343") != std::string::npos);
  CHECK(http_get(lab.dir / "run" / "app.sock").find("hello from app (served by uid 4242") !=
        std::string::npos);

  ::kill(first, SIGKILL);
  REQUIRE(eventually([&] {
    const pid_t p = lab.pid("app");
    return p > 0 && p != first && lab.status("app").find("\"restarts\":1") != std::string::npos;
  }));
  CHECK(lab.status("app").find("\"last_exit\":\"signal 9\"") != std::string::npos);
  CHECK(lab.log("app").find("started app pid") != std::string::npos);
  CHECK(lab.log("app").find("app signal 9") != std::string::npos);

  const pid_t second = lab.pid("app");
  CHECK(lab.stop() == 0);
  CHECK(::kill(second, 0) != 0);  // nothing left behind
}

TEST_CASE("services: failures of the identity chain are clear facts in the log") {
  SUBCASE("a working directory the user cannot enter") {
    SvcLab lab;
    fs::create_directory(lab.dir / "locked");
    REQUIRE(::chmod((lab.dir / "locked").c_str(), 0700) == 0);
    lab.unit("app", "working_directory=" + (lab.dir / "locked").string() + "\n");
    lab.start();
    REQUIRE(
        eventually([&] { return lab.log("app").find("Permission denied") != std::string::npos; }));
    CHECK(lab.log("app").find("changing to the working directory") != std::string::npos);
  }
  SUBCASE("a missing environment file") {
    SvcLab lab;
    lab.unit("app", "environment_file=" + (lab.dir / "etc" / "missing.env").string() + "\n");
    lab.start();
    REQUIRE(
        eventually([&] { return lab.log("app").find("failed to start") != std::string::npos; }));
    CHECK(lab.log("app").find("missing.env") != std::string::npos);
  }
  SUBCASE("a config the service's user cannot read") {
    SvcLab lab;
    REQUIRE(::chown((lab.dir / "etc" / "app.conf").c_str(), 0, 0) == 0);
    lab.unit("app", "start_limit=2\n");
    lab.start();
    REQUIRE(eventually(
        [&] { return lab.status("app").find("\"state\":\"failed\"") != std::string::npos; }));
    CHECK(lab.log("app").find("cannot read config") != std::string::npos);
    CHECK(lab.log("app").find("start limit hit") != std::string::npos);
  }
  SUBCASE("a broken unit is refused, not guessed") {
    SvcLab lab;
    put(lab.dir / "units" / "app.unit", "exec=/bin/true\n", 0644);
    lab.start();
    REQUIRE(eventually(
        [&] { return lab.status("app").find("\"state\":\"failed\"") != std::string::npos; }));
    CHECK(lab.log("app").find("no user=") != std::string::npos);
  }
}
