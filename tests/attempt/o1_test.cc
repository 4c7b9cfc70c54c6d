// The O1 scenario (scenarios/o1-fleet-drift) end to end on real worlds, black-box through the
// real binary: a control node's ansible-playbook configures three nginx web nodes over SSH.
// Judge mode on three seeds (one per world variant), a learner's gold attempt command by
// command to a receipt that replays, the bad hand edit in a learner's attempt (no receipt), and
// plausible wrong fixes each refused by the property meant to refuse them. Needs root, nginx,
// ansible and openssh (scripts/install-deps.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/attempt/package_lab.h"
#include "tests/cli/cli_util.h"

using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kO1 = "o1-fleet-drift";
constexpr const char* kCheckProbe =
    R"({"call":"ansible.check","params":{"node":{"role":"control"}}})";

struct O1Lab : PackageLab {
  O1Lab() : PackageLab("AURA_O1_PACKAGE", kO1, "stale-override", kCheckProbe) {}
};

// An IR citing ev-1 with these actions (JSON array text), the scenario's checks and a rollback
// that undoes the control node's journal and converges again.
std::string ir(const std::string& actions) {
  return R"({"v":1,"hypothesis":"stale-override","claim":"A host_vars override pins one web node's app_root to a folder that is gone, so nginx there answers 404.","evidence":["ev-1"],"falsifier":"If the failing node's root existed, this would be wrong.","actions":)" +
         actions +
         R"(,"postconditions":["fleet-serves"],"invariants":["converge-holds"],"rollback":[{"call":"journal.undo","params":{"node":{"role":"control"}}},{"call":"ansible.run","params":{"node":{"role":"control"}}}]})";
}

constexpr const char* kConverge = R"({"call":"ansible.run","params":{"node":{"role":"control"}}})";

std::string unset(const std::string& path_target) {
  return R"({"call":"vars.unset","params":{"node":{"role":"control"},"path":)" + path_target +
         R"(,"key":"app_root"}})";
}

}  // namespace

TEST_CASE("o1: judge mode gives gold VERIFIED and bad RECOVERED_UNPROVEN on three seeds") {
  O1Lab s;
  for (int seed : {0, 1, 2}) {  // the seed picks the variant: node names, paths, which node drifts
    INFO("seed " << seed);
    CliResult r = s.ok({"judge", kO1, "--seed", std::to_string(seed), "--json"},
                       {.timeout = kJudgeHangGuard});
    CHECK(r.out.find("case gold: VERIFIED, expected VERIFIED") != std::string::npos);
    CHECK(r.out.find("case bad: RECOVERED_UNPROVEN, expected RECOVERED_UNPROVEN") !=
          std::string::npos);
    // The hand edit recovers the primary, is undone by the next converge, and misses the twin.
    CHECK(r.out.find("primary: fail (check converge-holds failed at after_apply") !=
          std::string::npos);
    CHECK(r.out.find("twin: fail (check fleet-serves failed at after_apply on world twin-1)") !=
          std::string::npos);
    const std::string line = r.last_line();
    const size_t bad = line.find(R"("bad":{"case":"bad")");
    const size_t gold = line.find(R"("gold":{"case":"gold")");
    REQUIRE(bad != std::string::npos);
    REQUIRE(gold != std::string::npos);
    CHECK(line.find(R"("recovered":true)", bad) < gold);
    CHECK(line.find(R"("verdict":"RECOVERED_UNPROVEN")", bad) < gold);
    CHECK(line.find(R"("verdict":"VERIFIED")", gold) != std::string::npos);
    for (const char* p : {"primary", "twin", "control", "repeat", "reversal"}) {
      CHECK_MESSAGE(line.find(std::string(R"({"property":")") + p + R"(","status":"pass")", gold) !=
                        std::string::npos,
                    p);
    }
    const size_t at = line.find(R"("receipt":")", gold) + 11;
    const std::string path = line.substr(at, line.find('"', at) - at);
    REQUIRE(fs::exists(path));
    if (seed == 0) {
      r = s.ok({"receipt", "verify", path, "--replay"});
      CHECK(r.out.find("ok: the receipt holds, and replays from the log") != std::string::npos);
    }
  }
}

TEST_CASE("o1: a learner's gold fix earns a receipt that replays; the hand edit earns none") {
  O1Lab s;
  // Seed 4 is variant 1: fleet docs, control node "deploy", app-c drifted.
  CliResult r = s.ok({"attempt", "start", kO1, "--seed", "4", "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  s.ok({"attempt", "predict", id, "--hypothesis", "stale-override", "--expect",
        "one node's app_root points at a folder that is gone"});
  r = s.ok({"attempt", "probe", id, kCheckProbe});  // ev-1: nothing to change: source = fleet
  CHECK(r.out.find("changed=0") != std::string::npos);
  r = s.ok(
      {"attempt", "probe", id,
       R"({"call":"file.read","params":{"node":{"role":"control"},"path":"/srv/ansible/host_vars/app-c.yml"}})"});
  CHECK(r.out.find("app_root: /var/www/docs/r1841") != std::string::npos);
  r = s.ok(
      {"attempt", "probe", id,
       R"({"call":"file.stat","params":{"node":{"selector":"stale-app-root-nodes"},"path":"/var/www/docs/r1841"}})"});
  CHECK(r.out.find("No such file") != std::string::npos);
  write_file(s.lab / "fix.json",
             ir("[" + unset(R"({"selector":"stale-app-root-override"})") + "," + kConverge + "]"));
  CHECK(s.recover_and_gate(id, s.lab / "fix.json") == "VERIFIED");
  const fs::path receipt = s.lab / "receipt.json";
  s.ok({"attempt", "receipt", id, "--out", receipt.string()});
  s.ok({"receipt", "verify", receipt.string(), "--replay"});
  // It binds the programs the worlds ran: the lab's, the web server, the Ansible tree.
  s.check_bound(receipt, {"/aura/bin/aura-runner", "/aura/bin/aura-svcman", "/usr/sbin/nginx",
                          "/usr/bin/ansible-playbook", "/usr/lib/python3/dist-packages/ansible/"});
  s.ok({"attempt", "reflect", id, "--text", "remove the stale override and converge"});

  // A fresh attempt on the same seed, the bad hand edit: recovered, unproven, no receipt.
  r = s.ok({"attempt", "start", kO1, "--seed", "4", "--json"});
  const std::string bad = *Json(r.last_line()).str("attempt");
  s.ok({"attempt", "predict", bad, "--hypothesis", "stale-override", "--expect", "404 on app-c"});
  s.ok({"attempt", "probe", bad, kCheckProbe});
  write_file(
      s.lab / "bad.json",
      ir(R"([{"call":"file.write","params":{"node":{"literal":"app-c"},"path":"/etc/nginx/conf.d/site.conf","content":"server { listen 80; root /var/www/docs/live; index index.html; }"}},{"call":"nginx.reload","params":{"node":{"literal":"app-c"}}}])"));
  s.ok({"attempt", "submit", bad, (s.lab / "bad.json").string()});
  s.ok({"attempt", "apply", bad});
  s.ok({"attempt", "ack", bad});
  // A reset puts the world back as it started (app-c answers 404 again); the IR is applied anew.
  r = s.ok({"attempt", "reset", bad, "--reason", "try it on a clean world"});
  CHECK(r.out.find("the old one destroyed") != std::string::npos);
  r = s.ok(
      {"attempt", "probe", bad,
       R"({"call":"file.read","params":{"node":{"literal":"app-c"},"path":"/etc/nginx/conf.d/site.conf"}})"});
  CHECK(r.out.find("root /var/www/docs/r1841;") != std::string::npos);
  CHECK(s.recover_and_gate(bad, s.lab / "bad.json") == "RECOVERED_UNPROVEN");
  s.no_receipt(bad);
  s.ok({"attempt", "abandon", bad, "--reason", "test done"});
}

TEST_CASE("o1: plausible wrong fixes are refused by the property meant to refuse them") {
  O1Lab s;
  // Seed 0: web2's override is stale in the primary, web3's in the twin; the control world's
  // web1 is a canary with a legitimate override.
  s.expect_refused(
      {
          {"removing every app_root override, the canary's too",
           "[" + unset(R"({"selector":"app-root-override"})") + "," + kConverge + "]",
           "RECOVERED_UNPROVEN",
           R"("property":"control","status":"fail","reason":"check canary-kept failed)"},
          {"the right change on a literal host_vars file: what fails on the twin",
           "[" + unset(R"({"literal":"/srv/ansible/host_vars/web2.yml"})") + "," + kConverge + "]",
           "RECOVERED_UNPROVEN",
           R"("property":"twin","status":"fail","reason":"check fleet-serves failed)"},
          {"converging again without fixing the source of truth",
           std::string("[") + kConverge + "]", "NOT_RECOVERED",
           R"("property":"primary","status":"fail","reason":"check fleet-serves failed)"},
          {"a hand edit on every drifted node, found by selector: undone by the next converge",
           R"([{"call":"file.write","params":{"node":{"selector":"stale-app-root-nodes"},"path":"/etc/nginx/conf.d/site.conf","content":"server { listen 80; root /srv/site/current; index index.html; }"}},{"call":"nginx.reload","params":{"node":{"selector":"stale-app-root-nodes"}}}])",
           "RECOVERED_UNPROVEN",
           R"("property":"primary","status":"fail","reason":"check converge-holds failed)"},
      },
      0, ir);
}
