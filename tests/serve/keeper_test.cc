// The embedded default's daemon keeper (app/serve/daemon_keeper.h), with a stand-in program in
// place of `aura daemon`: the daemon's command line, a stop that reaches it as SIGTERM and is
// waited for, and a daemon that exits by itself. Deadlines are hang guards.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "app/serve/daemon_keeper.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::serve;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits (hang guard 60 s) for `p` to exist.
bool appears(const std::filesystem::path& p) {
  for (int i = 0; i < 1200; ++i) {
    if (std::filesystem::exists(p)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// A stand-in daemon: records its arguments, answers SIGTERM by recording it and exiting 3, or
// exits 7 by itself when `exit_at_once`.
std::filesystem::path stand_in(const TempDir& dir, bool exit_at_once) {
  auto p = dir / "daemon.sh";
  std::ofstream(p) << "#!/bin/sh\n"
                   << "echo \"$@\" > " << (dir / "args.tmp").string() << "\n"
                   << "mv " << (dir / "args.tmp").string() << " " << (dir / "args").string() << "\n"
                   << (exit_at_once ? "exit 7\n" : "") << "trap 'echo term > "
                   << (dir / "term").string() << "; exit 3' TERM\n"
                   << "while :; do sleep 0.05; done\n";
  ::chmod(p.c_str(), 0755);
  return p;
}

}  // namespace

TEST_CASE("keeper: starts the daemon with its flags; stop sends SIGTERM and waits for it") {
  TempDir dir;
  DaemonCommand c{stand_in(dir, false), "/d/aura", "/d/keys", "/d/run/daemon.sock", "aura-web"};
  auto k = DaemonKeeper::start(c);
  REQUIRE(k.ok());
  REQUIRE(appears(dir / "args"));
  CHECK(slurp(dir / "args") ==
        "daemon --data /d/aura --keys /d/keys --socket /d/run/daemon.sock --front-user "
        "aura-web\n");
  CHECK(!k->exited());
  CHECK(k->stop().is_ok());
  CHECK(slurp(dir / "term") == "term\n");
  int code = -1;
  CHECK(k->exited(&code));
  CHECK(code == 3);
  CHECK(k->stop().is_ok());  // again: nothing left to do
}

TEST_CASE("keeper: the operator token file is passed on; a daemon that exits is seen") {
  TempDir dir;
  DaemonCommand c{stand_in(dir, true), "d", "k", "s", "u", "/etc/aura/operator.token"};
  auto k = DaemonKeeper::start(c);
  REQUIRE(k.ok());
  REQUIRE(appears(dir / "args"));
  CHECK(slurp(dir / "args") ==
        "daemon --data d --keys k --socket s --front-user u --operator-token-file "
        "/etc/aura/operator.token\n");
  int code = -1;
  for (int i = 0; i < 1200 && !k->exited(&code); ++i) std::this_thread::sleep_for(50ms);
  CHECK(code == 7);
  CHECK(!std::filesystem::exists(dir / "term"));
}
