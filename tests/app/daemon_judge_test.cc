// O2 in Judge Mode through the daemon (e2e): the bad fix is held at RECOVERED_UNPROVEN with no
// receipt, the gold fix on fresh worlds earns a receipt that anyone may fetch and that replays
// from the daemon's log; the run's progress stream shows every property with the world it ran
// on and the check that decided it, and never the judge's probes or IR.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <set>
#include <thread>

#include "engine/events/event_types.h"
#include "tests/app/daemon_proc.h"
#include "tests/cli/cli_util.h"

using namespace aura;
using aura::testing::DaemonProc;
using aura::testing::member;
using aura::testing::quoted;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST_CASE("O2 judged through the daemon") {
  DaemonProc d;
  auto queued = d.call("judge.enqueue", R"({"scenario":"O2"})");
  REQUIRE(queued.status == 202);
  const std::string run = member(queued.body_json, "run");
  // Follow the run's stream until it ends (a hang guard of 20 minutes, not a bar).
  auto c = rpc::Client::connect(d.socket);
  REQUIRE(c.ok());
  rpc::Request sr;
  sr.op = "judge.events";
  sr.request_id = rpc::new_request_id();
  sr.args_json = "{\"run\":" + quoted(run) + ",\"after_seq\":0}";
  REQUIRE(c->call(sr, 10s)->status == 200);
  std::set<std::string> properties_with_world;
  bool saw_probe_or_ir = false;
  auto deadline = std::chrono::steady_clock::now() + 20min;
  while (std::chrono::steady_clock::now() < deadline) {
    auto f = c->next_frame(60s);
    if (!f.ok() || !f->has_value()) break;
    if ((*f)->kind != rpc::Kind::kEvent) continue;
    const std::string& body = (*f)->body;
    const std::string type = member(body, "type");
    if (type == events::kProbeRequested || type == events::kInterventionSubmitted)
      saw_probe_or_ir = true;
    if (type == events::kGateFact) {
      const std::string data = member(body, "data");
      CHECK(!member(data, "world").empty());
      CHECK(!member(data, "check").empty());
      properties_with_world.insert(member(data, "property"));
    }
  }
  CHECK(!saw_probe_or_ir);
  CHECK(properties_with_world.count("twin") == 1);
  auto got = d.call("judge.get", "{\"run\":" + quoted(run) + "}");
  REQUIRE(member(got.body_json, "state") == "done");
  const std::string& j = got.body_json;
  CHECK(j.find(R"("case":"bad")") != std::string::npos);
  CHECK(j.find(R"("verdict":"RECOVERED_UNPROVEN")") != std::string::npos);
  CHECK(j.find(R"("verdict":"VERIFIED")") != std::string::npos);
  CHECK(j.find(R"("as_expected":false)") == std::string::npos);
  const size_t at = j.find(R"("receipt_sha256":")");
  REQUIRE(at != std::string::npos);
  CHECK(j.find(R"("receipt_sha256":")", at + 1) == std::string::npos);  // the gold case's only
  auto receipt = d.call("receipt.get", "{\"sha256\":" + quoted(j.substr(at + 18, 64)) + "}");
  REQUIRE(receipt.status == 200);
  auto checked = d.call("receipt.verify", "{\"receipt\":" + receipt.body_json + "}");
  CHECK(checked.body_json.find(R"("offline":{"ok":true)") != std::string::npos);
  CHECK(checked.body_json.find(R"("replay":{"ok":true)") != std::string::npos);
  auto proof = d.call("proof");
  CHECK(member(member(proof.body_json, "last_verify"), "ok") == "true");
  CHECK(d.stop() == 0);
}

TEST_CASE("a daemon stopped during a judge run waits out its grace, then ends the run with it") {
  // O1: its judge run takes about a minute here (O2's a few seconds), far longer than the grace.
  DaemonProc d({"--stop-grace", "2"});
  auto queued = d.call("judge.enqueue", R"({"scenario":"O1"})");
  REQUIRE(queued.status == 202);
  const std::string run = member(queued.body_json, "run");
  // Until the run's first gate has started (its worlds are being built): a hang guard.
  auto deadline = std::chrono::steady_clock::now() + 10min;
  bool gating = false;
  while (!gating && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
    auto got = d.call("judge.get", "{\"run\":" + quoted(run) + "}");
    REQUIRE(member(got.body_json, "state") != "done");
    gating = got.body_json.find("\"property\":") != std::string::npos;
  }
  REQUIRE(gating);
  const auto asked = std::chrono::steady_clock::now();
  ::kill(d.pid, SIGTERM);
  int st = 0;
  pid_t got = 0;
  while ((got = ::waitpid(d.pid, &st, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - asked < 5min) {  // hang guard
    std::this_thread::sleep_for(100ms);
  }
  REQUIRE(got == d.pid);
  d.pid = -1;
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  // Ended by the grace, not by the run finishing: the log says so. (What its worlds left is
  // checked by the tier's leftovers check after the run.)
  const std::string log = d.log_text();
  CHECK_MESSAGE(log.find("still running after the 2 s grace") != std::string::npos, log);
}

TEST_CASE("aura judge on a data folder a daemon holds goes to the daemon's queue") {
  DaemonProc d;
  const std::vector<std::string> where = {"--data", (d.dir / "data").string(), "--keys",
                                          (d.dir / "keys").string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    return testing::run_aura(args, {.timeout = testing::kJudgeHangGuard});
  };
  // Options the daemon's runs do not take are refused, naming them; nothing is queued.
  auto refused = with({"judge", "O2", "--seed", "3"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--seed") != std::string::npos);
  CHECK(d.call("judge.list").body_json.find("\"run\"") == std::string::npos);

  auto r = with({"judge", "O2", "--json"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("queued there") != std::string::npos);
  CHECK(r.out.find("case bad: RECOVERED_UNPROVEN, expected RECOVERED_UNPROVEN -- as expected") !=
        std::string::npos);
  CHECK(r.out.find("case gold: VERIFIED, expected VERIFIED -- as expected") != std::string::npos);
  const std::string json = r.last_line();
  const std::string gold = member(json, "gold");
  CHECK(member(gold, "verdict") == "VERIFIED");
  CHECK(member(gold, "receipt_sha256").size() == 64);
  CHECK(fs::exists(member(gold, "receipt")));
  // The run is the daemon's: listed in its queue, with the same receipt.
  CHECK(d.call("judge.list").body_json.find(member(gold, "receipt_sha256")) != std::string::npos);
}
