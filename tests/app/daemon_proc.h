// A real `aura daemon` on a fresh lab in a temporary folder, for the daemon's tests, and a
// blocking client call to it.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
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

#include "app/rpc/client.h"
#include "engine/json/json_reader.h"
#include "tests/support/temp_dir.h"

namespace aura::testing {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, name << " is not set (meson sets it)");
  return v;
}

// One daemon on a fresh lab in a temporary folder; stopped (SIGTERM, then waited for) at the end.
struct DaemonProc {
  TempDir dir;
  fs::path socket;
  pid_t pid = -1;

  explicit DaemonProc(std::vector<std::string> extra = {}) {
    socket = dir / "run" / "daemon.sock";
    // A copy of the bundled packages: set-up signs them in place with this lab's publisher key,
    // and another lab signing the same folder would replace its signatures.
    fs::copy(env("AURA_SCENARIOS"), dir / "scenarios", fs::copy_options::recursive);
    std::ofstream(dir / "operator.token") << std::string(40, 'k') << "\n";
    std::vector<std::string> argv = {env("AURA_BIN"),
                                     "daemon",
                                     "--data",
                                     (dir / "data").string(),
                                     "--keys",
                                     (dir / "keys").string(),
                                     "--socket",
                                     socket.string(),
                                     "--scenarios",
                                     (dir / "scenarios").string(),
                                     "--operator-token-file",
                                     (dir / "operator.token").string()};
    for (auto& e : extra) argv.push_back(e);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // The daemon ends with the test, however the test ends.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      std::string log = (dir / "daemon.log").string();
      FILE* f = std::freopen(log.c_str(), "w", stderr);
      (void)f;
      ::execv(a[0], a.data());
      ::_exit(127);
    }
    // First use sets the lab up: wait for health.
    for (int i = 0; i < 1200; ++i) {
      if (call("health").status == 200) return;
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        FAIL("the daemon exited: " << log_text());
      }
      std::this_thread::sleep_for(100ms);
    }
    FAIL("the daemon did not answer health: " << log_text());
  }
  ~DaemonProc() { stop(); }

  int stop() {
    if (pid <= 0) return -1;
    ::kill(pid, SIGTERM);
    int st = 0;
    ::waitpid(pid, &st, 0);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

  std::string log_text() const {
    std::ifstream in(dir / "daemon.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  rpc::Reply call(const std::string& op, const std::string& args = "{}",
                  rpc::AuthKind auth = rpc::AuthKind::kNone, const std::string& secret = "",
                  std::chrono::milliseconds timeout = 120s) {
    auto c = rpc::Client::connect(socket);
    rpc::Reply fail;
    fail.status = 0;
    if (!c.ok()) return fail;
    rpc::Request r;
    r.op = op;
    r.request_id = rpc::new_request_id();
    r.args_json = args;
    r.auth = auth;
    r.secret = secret;
    auto reply = c->call(r, timeout);
    if (!reply.ok()) return fail;
    return *reply;
  }
};

// A member of a reply body (strings come back without quotes).
inline std::string member(const std::string& body, const std::string& name) {
  json::Reader reader;
  auto o = reader.parse_object(body);
  REQUIRE(o.ok());
  auto v = o->optional_value(name);
  if (!v) return "";
  auto s = v->as_string();
  return s.ok() ? std::string(*s) : v->minified();
}

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace aura::testing
