// Black-box tests of `aura projections rebuild|status`, `aura scenario list` and
// `aura attempt list|show`: the real binary (AURA_BIN) over a data folder whose log holds the
// synthetic lab story (written in-process through the engine, as the engine itself would).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "engine/log/data_dir.h"
#include "tests/cli/cli_util.h"
#include "tests/projections/lab_test_util.h"

using namespace aura;
using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::StoryLog;

namespace {

// A lab whose data folder holds the story (the log is closed again before returning).
std::string fill(const Lab& lab, int rounds) {
  StoryLog s(lab.data(), rounds);
  s.append_all_of_story();
  return s.story.attempts.front().id;
}

CliResult ok(const Lab& lab, const std::vector<std::string>& args) { return lab.ok(args); }

}  // namespace

TEST_CASE(
    "cli projections: two rebuilds give identical attempt show, attempt list and scenario list "
    "--json outputs") {
  Lab lab;
  const std::string id = fill(lab, 2);
  const uint64_t head = *lab.head().u64("head_seq");

  CliResult first = ok(lab, {"projections", "rebuild", "--json"});
  Json j(first.last_line());
  REQUIRE(j.ok());
  CHECK(j.u64("head_seq") == head);
  CHECK(first.out.find("rebuilt 7 projections from seq 1 to " + std::to_string(head)) !=
        std::string::npos);
  // 2 rounds x 5 attempts that reach the gate x 5 properties.
  CHECK(first.out.find("gate_results=50") != std::string::npos);
  const std::string show1 = ok(lab, {"attempt", "show", id, "--json"}).last_line();
  const std::string list1 = ok(lab, {"attempt", "list", "--json"}).last_line();
  const std::string scen1 = ok(lab, {"scenario", "list", "--json"}).last_line();

  ok(lab, {"projections", "rebuild", "--batch", "5"});
  CHECK(ok(lab, {"attempt", "show", id, "--json"}).last_line() == show1);
  CHECK(ok(lab, {"attempt", "list", "--json"}).last_line() == list1);
  CHECK(ok(lab, {"scenario", "list", "--json"}).last_line() == scen1);

  Json show(show1);
  REQUIRE(show.ok());
  CHECK(show.boolean("ok") == true);
  simdjson::dom::element attempt = show.root()["attempt"];
  CHECK(std::string_view(attempt["attempt"].get_string().value()) == id);
  CHECK(std::string_view(attempt["verdict"].get_string().value()) == "VERIFIED");
  CHECK(attempt["seed"].get_uint64().value() == 18446744073709551557ull);
  CHECK(show.root()["gate_results"].get_array().size() == 5);
  CHECK(show.root()["receipt"].is_object());
  Json scen(scen1);
  REQUIRE(scen.ok());
  CHECK(scen.root()["scenarios"].get_array().size() == 3);
}

TEST_CASE("cli projections: read commands catch up first and print the registry and attempts") {
  Lab lab;
  const std::string id = fill(lab, 1);
  // No rebuild: each read command catches up by itself.
  CliResult scenarios = ok(lab, {"scenario", "list"});
  CHECK(scenarios.out.find("3 scenario package folder(s)") != std::string::npos);
  CHECK(scenarios.out.find("scenarios/unsigned: package.sig.json: missing") != std::string::npos);
  CHECK(scenarios.out.find("perm-drift@1.1.0") != std::string::npos);
  CliResult list = ok(lab, {"attempt", "list"});
  CHECK(list.out.find("6 attempt(s)") != std::string::npos);
  CHECK(list.out.find(id) != std::string::npos);
  CliResult show = ok(lab, {"attempt", "show", id});
  CHECK(show.out.find("attempt " + id) != std::string::npos);
  CHECK(show.out.find("gate results (5)") != std::string::npos);
  CHECK(show.out.find("verdict=VERIFIED") != std::string::npos);
  CHECK(show.out.find("receipt (1)") != std::string::npos);

  CliResult unknown = lab.aura({"attempt", "show", "ffffffffffffffff", "--json"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("no attempt ffffffffffffffff") != std::string::npos);
  CHECK(Json(unknown.last_line()).boolean("ok") == false);
  CliResult bad = lab.aura({"attempt", "show", "../etc"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("is not an attempt ID") != std::string::npos);
  CliResult help = lab.aura({"attempt", "show", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("usage: aura attempt show ATTEMPT") != std::string::npos);
  for (const char* cmd : {"rebuild", "status"}) {
    CliResult h = lab.aura({"projections", cmd, "--help"});
    CHECK(h.exit_code == 0);
    CHECK(h.out.find(std::string("usage: aura projections ") + cmd) != std::string::npos);
  }
}

TEST_CASE(
    "cli projections: status reports each position and refuses a database from another log, "
    "naming the projection") {
  Lab a, b;
  fill(a, 1);
  fill(b, 2);
  CliResult none = a.aura({"projections", "status"});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("no projection has been built") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(a.data() / "projections.sqlite"));

  ok(a, {"projections", "rebuild"});
  CliResult st = ok(a, {"projections", "status", "--json"});
  const uint64_t head = *a.head().u64("head_seq");
  CHECK(st.out.find("attempts       schema 1, at seq " + std::to_string(head) +
                    " (0 behind): serves") != std::string::npos);
  Json sj(st.last_line());
  REQUIRE(sj.ok());
  CHECK(sj.root()["projections"].get_array().size() == 7);

  // b's log with a's projections.
  std::filesystem::copy_file(a.data() / "projections.sqlite", b.data() / "projections.sqlite");
  CliResult refused = b.aura({"projections", "status"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("refuses: projection scenarios was built from another log") !=
        std::string::npos);
  CHECK(refused.out.find("refuses: projection receipts was built from another log") !=
        std::string::npos);
  CliResult list = b.aura({"attempt", "list"});
  CHECK(list.exit_code == 1);
  CHECK(list.err.find("was built from another log") != std::string::npos);
  ok(b, {"projections", "rebuild"});
  ok(b, {"projections", "status"});
}

TEST_CASE("cli projections: the read commands work while another process holds the data folder") {
  Lab lab;
  const std::string id = fill(lab, 1);
  auto holder = DataDir::open_writer(lab.data());  // this process holds the writer lock
  REQUIRE(holder.ok());
  CliResult writer =
      lab.aura({"log", "append", "--stream", "x", "--type", "operator.y", "--payload", "{}"});
  CHECK(writer.exit_code != 0);  // the lock is really held
  ok(lab, {"projections", "rebuild"});
  ok(lab, {"attempt", "show", id});
  ok(lab, {"scenario", "list"});
}
