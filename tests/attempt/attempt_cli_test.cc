// `aura attempt …` and `aura judge` black-box: the real binary on a lab it set up itself.
// A learner's whole attempt command by command, refusals with their exit status and the log
// unchanged, judge mode's verdicts, the issued receipt verified (and refused after an edit), and
// projections rebuilt twice from real attempts giving identical answers.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "app/lab/folders.h"
#include "app/lab/views.h"
#include "engine/attempt/attempt_state.h"
#include "tests/app/learner_secrets.h"
#include "tests/attempt/engine_lab.h"
#include "tests/cli/cli_util.h"

using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

// A lab whose t0 copy is signed and loaded by `aura setup`.
struct CliLab {
  Lab lab;
  CliLab() {
    copy_t0_package(lab / "scenarios");
    CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  }
  CliResult ok(std::vector<std::string> args) const { return lab.ok(std::move(args)); }
  std::string head_hash() const {
    auto hash = lab.head().str("head_hash");
    REQUIRE(hash.has_value());
    return *hash;
  }
};

}  // namespace

TEST_CASE("aura attempt: a learner's attempt, command by command") {
  CliLab s;
  CliResult r =
      s.ok({"attempt", "start", "t0-config-drift", "--learner", "bob", "--seed", "4", "--json"});
  CHECK(r.out.find("Competing hypotheses") != std::string::npos);
  Json started(r.last_line());
  REQUIRE(started.ok());
  const std::string id = *started.str("attempt");
  CHECK(*started.str("phase") == "observe");

  // A probe before the prediction: refused, exit 1, the reason on stderr, the log unchanged.
  const std::string before = s.head_hash();
  r = s.lab.aura({"attempt", "probe", id,
                  R"({"call":"file.read","params":{"path":"/fleet/inventory.conf"}})", "--learner",
                  "bob"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no prediction yet") != std::string::npos);
  CHECK(s.head_hash() == before);
  // Usage errors exit 2.
  r = s.lab.aura({"attempt", "predict", id, "--learner", "bob"});
  CHECK(r.exit_code == 2);

  s.ok({"attempt", "predict", id, "--learner", "bob", "--hypothesis", "stale-override", "--expect",
        "web2's host vars name a pruned release", "--confidence", "60"});
  r = s.ok({"attempt", "probe", id,
            R"({"call":"file.read","params":{"path":"/fleet/host_vars/web2.conf"}})", "--learner",
            "bob", "--json"});
  CHECK(r.out.find("app_root") != std::string::npos);
  CHECK(*Json(r.last_line()).str("evidence") == "ev-1");

  // The gold IR from the manifest, written out as a learner's file.
  const std::string manifest = read_file(s.lab / "scenarios" / "t0-config-drift" / "manifest.json");
  auto parsed = aura::scenario::parse_manifest(manifest);
  REQUIRE(parsed.ok());
  write_file(s.lab / "fix.json", parsed->find_judge("gold")->ir_json);
  write_file(s.lab / "broken.json", R"({"v":1,"hypothesis":"stale-override"})");
  r = s.lab.aura({"attempt", "submit", id, (s.lab / "broken.json").string(), "--learner", "bob"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("$.") != std::string::npos);  // the JSON path of what failed

  s.ok({"attempt", "submit", id, (s.lab / "fix.json").string(), "--learner", "bob"});
  // The apply ends with the supervisor's readback, printed; the next step acknowledges it by
  // its seq, and the acknowledgement names it.
  r = s.ok({"attempt", "apply", id, "--learner", "bob", "--json"});
  CHECK(r.out.find("the supervisor read back what each action left:") != std::string::npos);
  CHECK(r.out.find("    read back: web2 /fleet/host_vars/web2.conf app_root=(unset)") !=
        std::string::npos);
  uint64_t readback = 0;
  REQUIRE(Json(r.last_line()).root()["readback"]["seq"].get_uint64().get(readback) ==
          simdjson::SUCCESS);
  CHECK(*Json(r.last_line()).u64("actions") == 2);
  const std::string seq = std::to_string(readback);
  CHECK(r.out.find("(ack.readback at seq " + seq + ")") != std::string::npos);
  CHECK(r.out.find("  aura attempt ack " + id + " --learner bob --readback " + seq) !=
        std::string::npos);
  r = s.ok({"attempt", "ack", id, "--learner", "bob", "--note", "converged", "--readback", seq});
  CHECK(r.out.find("acknowledged: the readback above (ack.readback at seq " + seq +
                   ") is confirmed") != std::string::npos);
  r = s.ok({"attempt", "verify", id, "--learner", "bob"});
  CHECK(r.out.find("the live world recovered") != std::string::npos);
  r = s.ok({"attempt", "gate", id, "--learner", "bob", "--json"});
  CHECK(*Json(r.last_line()).str("verdict") == "VERIFIED");
  const fs::path receipt = s.lab / "receipt.json";
  s.ok({"attempt", "receipt", id, "--learner", "bob", "--out", receipt.string()});
  s.ok({"receipt", "verify", receipt.string(), "--replay"});
  s.ok({"attempt", "reflect", id, "--learner", "bob", "--text", "fix the source of truth"});
  r = s.ok({"attempt", "show", id, "--json"});
  CHECK(r.out.find("\"phase\":\"done\"") != std::string::npos);
}

TEST_CASE("aura judge: gold VERIFIED with a receipt that holds; bad RECOVERED_UNPROVEN") {
  CliLab s;
  CliResult r = s.ok({"judge", "t0-config-drift", "--seed", "9", "--out",
                      (s.lab / "receipts").string(), "--json"});
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.boolean("ok") == true);
  CHECK(r.out.find("case gold: VERIFIED, expected VERIFIED") != std::string::npos);
  CHECK(r.out.find("case bad: RECOVERED_UNPROVEN, expected RECOVERED_UNPROVEN") !=
        std::string::npos);
  const auto receipts = files_with_suffix(s.lab / "receipts", ".receipt.json");
  REQUIRE(receipts.size() == 1);  // only gold earns one
  r = s.ok({"receipt", "verify", receipts[0].string(), "--replay"});
  CHECK(r.out.find("ok: the receipt holds, and replays from the log") != std::string::npos);

  // One character of the signed envelope changed: verify fails and names the signature.
  std::string envelope = read_file(receipts[0]);
  const size_t at = envelope.find("\"payload\":\"") + 20;
  envelope[at] = envelope[at] == 'A' ? 'B' : 'A';
  write_file(receipts[0], envelope);
  r = s.lab.aura({"receipt", "verify", receipts[0].string()});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("FAIL  signature") != std::string::npos);
}

TEST_CASE("aura judge: on first use it sets the lab up; a short name names the scenario") {
  Lab lab(Lab::Keys::kNone);
  copy_t0_package(lab / "scenarios");
  REQUIRE_FALSE(std::filesystem::exists(lab.keys()));
  CliResult r = lab.ok({"judge", "T0", "--seed", "2", "--case", "gold", "--scenarios",
                        (lab / "scenarios").string(), "--json"});
  CHECK(r.out.find("first use: setting up the lab in " + lab.data().string()) != std::string::npos);
  CHECK(r.out.find("loaded   t0-config-drift") != std::string::npos);
  CHECK(r.out.find("case gold: VERIFIED, expected VERIFIED") != std::string::npos);
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(*j.str("scenario") == "t0-config-drift");
  CHECK(std::filesystem::exists(lab.keys()));
  // Set up now: no second set-up; an unknown or ambiguous name is refused naming what is loaded.
  r = lab.ok({"judge", "t0-config-drift", "--seed", "2", "--case", "gold"});
  CHECK(r.out.find("first use") == std::string::npos);
  r = lab.aura({"judge", "O7"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no scenario \"O7\" is loaded; loaded: t0-config-drift") != std::string::npos);
}

TEST_CASE("aura judge: first use is decided by the data folder, not by an existing keys folder") {
  Lab lab;  // keys made by 'aura keys init'; no data folder yet
  copy_t0_package(lab / "scenarios");
  REQUIRE(std::filesystem::exists(lab.keys()));
  REQUIRE_FALSE(std::filesystem::exists(lab.data() / "log"));
  CliResult r = lab.ok({"judge", "T0", "--seed", "2", "--case", "gold", "--scenarios",
                        (lab / "scenarios").string()});
  CHECK(r.out.find("first use: setting up the lab in " + lab.data().string()) != std::string::npos);
  CHECK(r.out.find("kept the existing lab signing key") != std::string::npos);
  CHECK(r.out.find("loaded   t0-config-drift") != std::string::npos);
  CHECK(r.out.find("case gold: VERIFIED, expected VERIFIED") != std::string::npos);
}

TEST_CASE("aura projections: rebuilt twice from real attempts, the answers are identical") {
  CliLab s;
  s.ok({"judge", "t0-config-drift", "--seed", "2"});
  CliResult r = s.ok({"attempt", "start", "t0-config-drift", "--learner", "carol", "--json"});
  const std::string open_id = *Json(r.last_line()).str("attempt");
  s.ok({"attempt", "abandon", open_id, "--learner", "carol", "--reason", "later"});

  const CliResult incremental = s.ok({"attempt", "list", "--json"});
  const std::string incremental_show = s.ok({"attempt", "show", open_id, "--json"}).last_line();
  s.ok({"projections", "rebuild"});
  const CliResult first = s.ok({"attempt", "list", "--json"});
  const std::string first_show = s.ok({"attempt", "show", open_id, "--json"}).last_line();
  const std::string first_scenarios = s.ok({"scenario", "list", "--json"}).last_line();
  s.ok({"projections", "rebuild"});
  const CliResult second = s.ok({"attempt", "list", "--json"});
  CHECK(first.last_line() == second.last_line());
  CHECK(incremental.last_line() == first.last_line());
  CHECK(first_show == s.ok({"attempt", "show", open_id, "--json"}).last_line());
  CHECK(incremental_show == first_show);
  CHECK(first_scenarios == s.ok({"scenario", "list", "--json"}).last_line());
  CHECK(first.last_line().find("RECOVERED_UNPROVEN") != std::string::npos);
  CHECK(first.last_line().find("VERIFIED") != std::string::npos);
}

TEST_CASE("aura attempt catalog: the probes, actions, target terms and checks, nothing hidden") {
  CliLab s;
  CliResult r = s.ok({"attempt", "start", "t0-config-drift", "--seed", "3", "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  const std::string manifest = read_file(s.lab / "scenarios" / "t0-config-drift" / "manifest.json");
  auto m = aura::scenario::parse_manifest(manifest);
  REQUIRE(m.ok());

  r = s.ok({"attempt", "catalog", id});
  for (const std::string& part : std::vector<std::string>{
           "probe budget 12: 0 spent, 12 left", "hypotheses (predict one with --hypothesis ID):",
           "  stale-process: ", "  file.read (cost 1): read a file",
           "      path: absolute path under /, at most 256 bytes", "  fleet.effective (cost 2)",
           "  vars.unset: remove a key from the nodes' host vars",
           "      node: target of kind node: role web, selector host-vars-root-without-page, "
           "selector nodes-serving-no-page, or {\"literal\":...}",
           "      key: one of app_root, log_level, port, server_name, workers",
           "      path: target of kind path: selector release-page, or {\"literal\":...}",
           "      mode: mode, 3 or 4 octal digits within 0777",
           "  journal.undo: ", "  role web (kind node, at most 3): ",
           "  selector host-vars-root-without-page (kind node, at most 3): ",
           "  selector release-page (kind path, at most 1): ", "  postcondition fleet-healthy: ",
           "  invariant fleet-converged: ",
           "next: read the briefing and the hypotheses, then predict",
           "  aura attempt predict " + id + " --hypothesis ID --expect TEXT"}) {
    CHECK_MESSAGE(r.out.find(part) != std::string::npos, part);
  }
  // Only what a learner may see, in words and in JSON.
  for (const std::string& hidden : hidden_strings(*m)) {
    CAPTURE(hidden);
    CHECK(r.out.find(hidden) == std::string::npos);
  }
  r = s.ok({"attempt", "catalog", id, "--json"});
  Json catalog(r.last_line());
  REQUIRE(catalog.ok());
  CHECK(catalog.boolean("ok") == true);
  CHECK(*catalog.u64("remaining") == 12);
  for (const std::string& hidden : hidden_strings(*m))
    CHECK(r.out.find(hidden) == std::string::npos);

  // After a probe of cost 2 the budget left says so.
  s.ok({"attempt", "predict", id, "--hypothesis", "bad-release", "--expect", "a broken page"});
  s.ok({"attempt", "probe", id, R"({"call":"fleet.diff"})"});
  r = s.ok({"attempt", "catalog", id, "--json"});
  CHECK(*Json(r.last_line()).u64("remaining") == 10);
  CHECK(r.out.find("probe budget 12: 2 spent, 10 left") != std::string::npos);

  // A catalog of no attempt, or of something that is not an attempt id.
  r = s.lab.aura({"attempt", "catalog", "0123456789abcdef"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no attempt 0123456789abcdef\nnext: find the attempt, or start one\n  aura "
                   "attempt list\n") != std::string::npos);
  r = s.lab.aura({"attempt", "catalog", "O2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not an attempt ID") != std::string::npos);
}

TEST_CASE("aura attempt: every command ends with the next step, refusals too, and say why") {
  CliLab s;
  CliResult r = s.ok({"attempt", "start", "T0", "--learner", "eve", "--seed", "6", "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  CHECK(r.out.find("  aura attempt predict " + id + " --learner eve --hypothesis ID") !=
        std::string::npos);
  CHECK(Json(r.last_line()).str("next")->find("predict") != std::string::npos);

  // A refusal naming an unknown name lists the valid ones, then the next step.
  r = s.lab.aura({"attempt", "predict", id, "--learner", "eve", "--hypothesis", "stale-overide",
                  "--expect", "x", "--json"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("hypothesis \"stale-overide\" is not one of the scenario's (did you mean "
                   "stale-override?); its hypotheses: stale-override, bad-release, "
                   "stale-process") != std::string::npos);
  CHECK(r.err.find("\nnext: read the briefing") != std::string::npos);
  Json refused(r.last_line());
  CHECK(refused.boolean("ok") == false);
  CHECK(*refused.str("phase") == "observe");
  CHECK(refused.str("next")->find("predict") != std::string::npos);
  // A usage error too (exit 2).
  r = s.lab.aura({"attempt", "predict", id, "--learner", "eve"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("next: read the briefing") != std::string::npos);

  s.ok({"attempt", "predict", id, "--learner", "eve", "--hypothesis", "stale-override", "--expect",
        "web2's host vars"});
  r = s.lab.aura({"attempt", "probe", id, "--learner", "eve",
                  R"({"call":"fleet.effective","params":{"node":{"role":"web2"}}})"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no target term named \"web2\" (did you mean web?); the terms of kind node: "
                   "role web, selector host-vars-root-without-page, selector "
                   "nodes-serving-no-page, or {\"literal\":\"web2\"}") != std::string::npos);
  CHECK(r.err.find("next: probe the system (12 of 12 budget left") != std::string::npos);

  // The bad fix, in learn mode, to its verdict; every step says what comes next.
  const std::string manifest = read_file(s.lab / "scenarios" / "t0-config-drift" / "manifest.json");
  auto m = aura::scenario::parse_manifest(manifest);
  REQUIRE(m.ok());
  r = s.ok({"attempt", "probe", id, "--learner", "eve", m->find_judge("bad")->probe_calls_json[0]});
  CHECK(r.out.find("next: probe the system (11 of 12 budget left") != std::string::npos);
  write_file(s.lab / "bad.json", m->find_judge("bad")->ir_json);
  const std::vector<std::pair<std::vector<std::string>, std::string>> steps = {
      {{"submit", id, (s.lab / "bad.json").string()}, "  aura attempt apply " + id},
      {{"apply", id}, "  aura attempt ack " + id},
      {{"ack", id}, "  aura attempt verify " + id},
      {{"verify", id}, "  aura attempt gate " + id},
      {{"gate", id}, "  aura attempt reflect " + id},
  };
  for (const auto& [args, next] : steps) {
    CAPTURE(args[0]);
    std::vector<std::string> full = {"attempt"};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), {"--learner", "eve", "--json"});
    r = s.ok(full);
    CHECK(r.out.find("\nnext: ") != std::string::npos);
    CHECK(r.out.find(next + " --learner eve") != std::string::npos);
    CHECK(Json(r.last_line()).has("next"));
  }
  // No receipt for RECOVERED_UNPROVEN, and the refusal says why.
  r = s.lab.aura({"attempt", "receipt", id, "--learner", "eve"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("aura attempt receipt: attempt " + id +
                   ": verdict RECOVERED_UNPROVEN; receipts are issued only for VERIFIED") !=
        std::string::npos);
  CHECK(r.err.find("next: the verdict is RECOVERED_UNPROVEN; receipts are issued only for "
                   "VERIFIED: reflect on what the gate showed") != std::string::npos);
  s.ok({"attempt", "reflect", id, "--learner", "eve", "--text", "the twin was not fixed"});
  r = s.ok({"attempt", "show", id, "--json"});
  CHECK(r.out.find("next: this attempt is done: start a new one") != std::string::npos);
  CHECK(r.out.find("  aura attempt start t0-config-drift --learner eve") != std::string::npos);
  CHECK(Json(r.last_line()).str("next")->find("start a new one") != std::string::npos);
  r = s.ok({"attempt", "list"});
  CHECK(r.out.find("next: ") != std::string::npos);
}

TEST_CASE("aura attempt gate: a failed property says its check and what was seen, never where") {
  CliLab s;
  const std::string manifest = read_file(s.lab / "scenarios" / "t0-config-drift" / "manifest.json");
  auto m = aura::scenario::parse_manifest(manifest);
  REQUIRE(m.ok());
  const aura::scenario::JudgeCase* bad = m->find_judge("bad");
  REQUIRE(bad != nullptr);
  // Judge mode runs every property, so the twin's and the control's findings are shown too.
  CliResult r = s.ok({"attempt", "start", "t0-config-drift", "--mode", "judge", "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  s.ok({"attempt", "predict", id, "--hypothesis", "stale-override", "--expect", "web2's file"});
  s.ok({"attempt", "probe", id, bad->probe_calls_json[0]});
  write_file(s.lab / "bad.json", bad->ir_json);
  s.ok({"attempt", "submit", id, (s.lab / "bad.json").string()});
  s.ok({"attempt", "apply", id});
  s.ok({"attempt", "ack", id});
  s.ok({"attempt", "verify", id});
  r = s.ok({"attempt", "gate", id, "--json"});
  INFO(r.out);
  const auto description = [&](const std::string& check) {
    const aura::scenario::CheckSpec* c = m->find_check(check);
    REQUIRE(c != nullptr);
    return c->description;
  };
  // The hand edit holds where the learner made it and nowhere the same cause sits elsewhere:
  // each failing property names the check that refused it, in the manifest's public words,
  // and what the grader counted.
  CHECK(r.out.find("  twin: fail\n    fleet-healthy: " + description("fleet-healthy") +
                   " -- observed: did not hold on 1 of 1 hidden twin world (the same fault at "
                   "another spot) after your fix was applied; it held on the primary\n") !=
        std::string::npos);
  CHECK(r.out.find("  primary: fail\n    fleet-converged: " + description("fleet-converged") +
                   " -- observed: did not hold on 1 of 1 fresh primary world after your fix was "
                   "applied\n") != std::string::npos);
  CHECK(r.out.find("  control: fail\n    fleet-converged: ") != std::string::npos);
  CHECK(r.out.find("  reversal: pass\n") != std::string::npos);
  CHECK(r.out.find("verdict: RECOVERED_UNPROVEN") != std::string::npos);
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(r.last_line().find(R"({"property":"twin","check":"fleet-healthy","description":")") !=
        std::string::npos);
  // Nothing of the hidden worlds: their recipes and descriptions, the checks' parameters, the
  // judge's texts, and what the twin and control are made of (which node drifted there, and to
  // what; the control's legitimate differences).
  std::vector<std::string> hidden = hidden_strings(*m);
  for (const char* layout : {"web3", "hotfix-7", "canary", "8081", "/nodes/", "/fleet/"})
    hidden.emplace_back(layout);
  // The human lines: the JSON's result keeps the grader's reasons for tools.
  const std::string shown = r.out.substr(0, r.out.rfind('\n', r.out.size() - 2));
  for (const std::string& h : hidden) {
    CAPTURE(h);
    CHECK(shown.find(h) == std::string::npos);
  }
  CHECK(shown.find("twin-1") == std::string::npos);  // not even the twin's world id

  // The attempt's state (what `attempt show`, the API and a CLI beside the daemon read) keeps
  // the findings, folded from gate.property: the same words, no more.
  auto log = aura::app::open_reader(s.lab.data());
  REQUIRE(log.ok());
  auto folded = aura::attempt::replay_attempt(**log, id);
  REQUIRE(folded.ok());
  const std::string state = aura::app::attempt_view_json(*folded);
  INFO(state);
  CHECK(state.find(R"("findings":[{"property":"primary","check":"fleet-converged",)") !=
        std::string::npos);
  CHECK(state.find(R"({"property":"twin","check":"fleet-healthy","description":")" +
                   description("fleet-healthy") +
                   R"(","observed":"did not hold on 1 of 1 hidden twin world)") !=
        std::string::npos);
  for (const std::string& h : hidden) {
    CAPTURE(h);
    CHECK(state.find(h) == std::string::npos);
  }
  CHECK(state.find("twin-1") == std::string::npos);
}
