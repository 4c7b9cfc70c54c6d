// `aura bench serve` leaves no lab behind (issue 26, item 5): its temporary folder held a whole
// lab, keys included. Black-box through the real binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/cli/cli_util.h"

namespace fs = std::filesystem;
using namespace aura::testing;

namespace {

std::set<fs::path> bench_folders() { return entries_starting("/tmp", "aura-bench-serve-"); }

}  // namespace

TEST_CASE("bench serve: a failed run leaves its front's log alone, never keys or data") {
  if (!fs::exists("/usr/sbin/nginx")) {
    MESSAGE("skipped: the bench's peer needs Debian's nginx");
    return;
  }
  Lab lab(Lab::Keys::kNone);
  // No scenario to start: the front comes up on a fresh lab, then the t0 attempt is refused.
  const fs::path empty = lab.root() / "no-scenarios";
  fs::create_directories(empty);
  const auto before = bench_folders();
  CliResult r = lab.aura({"bench", "serve", "--scenarios", empty.string(), "--seconds", "1",
                          "--rounds", "1", "--connections", "1"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("could not start a t0 attempt") != std::string::npos);
  std::set<fs::path> left;
  for (const auto& p : bench_folders())
    if (!before.contains(p)) left.insert(p);
  REQUIRE(left.size() == 1);
  const fs::path t = *left.begin();
  CHECK(r.err.find("the front's log is kept in " + (t / "serve.log").string()) !=
        std::string::npos);
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(t)) names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"serve.log"});
  fs::remove_all(t);
}
