// The O1 scenario (scenarios/o1-fleet-drift) end to end on real worlds: a control node's
// ansible-playbook configures three nginx web nodes over SSH. Black-box through the real binary:
// judge mode on seed 0, a learner's gold attempt command by command to a receipt that replays
// (seed 4, variant 1), the bad hand edit in a learner's attempt (no receipt), and plausible wrong
// fixes each refused, in learn mode, by the property meant to refuse them. The other two
// world variants (seeds 1 and 2) are built in this process by the nodes driver, as the gate builds
// them: every world, its selectors resolved, gold applied on each and bad on a primary, graded by
// the checks the gate would run there. Needs root, nginx, ansible and openssh
// (scripts/install-deps.sh).
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/crypto/ed25519.h"
#include "engine/gate/gate_runner.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/signed_note.h"
#include "engine/writer/evidence_writer.h"
#include "tests/attempt/package_lab.h"
#include "tests/cli/cli_util.h"
#include "tests/support/log_lab.h"
#include "tests/support/temp_dir.h"
#include "workers/drivers.h"

using namespace aura::testing;
namespace fs = std::filesystem;
namespace gate = aura::gate;
namespace scenario = aura::scenario;
namespace world = aura::world;

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

// The O1 package's worlds built in this process by the nodes driver, as the gate builds them
// (a signed copy of the package, a scratch log for the runs' evidence). Worlds of one driver may
// be used from several threads at once, one thread per world.
struct O1Worlds {
  LogLab lab;
  aura::writer::RunTokens tokens;
  TempDir dir;
  world::WorldHost host;
  fs::path package;
  scenario::Manifest manifest;
  std::unique_ptr<world::WorldDriver> driver;

  O1Worlds() {
    const char* src = std::getenv("AURA_O1_PACKAGE");
    REQUIRE_MESSAGE(src != nullptr, "AURA_O1_PACKAGE is not set (run through meson)");
    // Worlds mount the package's layers from stage entries named after its folder: unique here.
    package = dir / ("o1-" + dir.path().filename().string().substr(10));
    fs::copy(src, package, fs::copy_options::recursive);
    auto signed_package = aura::sign_package(
        package, aura::NoteSigner("aura.publisher/test", aura::Ed25519KeyPair::generate()));
    REQUIRE_MESSAGE(signed_package.ok(), signed_package.status().message());
    auto m = scenario::parse_manifest(read_file(package / "manifest.json"));
    REQUIRE_MESSAGE(m.ok(), m.status().message());
    manifest = std::move(m).value();
    host.log = lab.log.get();
    host.blobs = &*lab.blobs;
    host.tokens = &tokens;
    host.state_dir = dir / "state";
    host.forbidden = {lab.data()};
    driver = aura::workers::make_driver("nodes", host);
    REQUIRE(driver != nullptr);
  }

  aura::intervention::Intervention judge_ir(const char* name, int seed) const {
    const scenario::JudgeCase* c = manifest.find_judge(name);
    REQUIRE(c != nullptr);
    aura::intervention::IrContext ctx{&manifest, {"ev-1", "ev-2"}};
    auto parsed = aura::intervention::parse_intervention(c->for_seed(uint64_t(seed)).ir_json, ctx);
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
    return std::move(parsed).value();
  }
};

// What one world of a seed showed. Filled on a worker thread (no doctest assertion there); the
// test checks it on its own thread.
struct WorldRun {
  std::string error;                         // the host could not build or run something
  std::string stale_nodes_error;             // nodes-root-missing matched nothing: why
  std::vector<std::string> stale_nodes;      // what nodes-root-missing resolved to
  std::vector<std::string> override_nodes;   // what nodes-root-differs resolved to
  std::string override_nodes_error;          // why it matched nothing, if it did not
  std::vector<std::string> no_page_nodes;    // what nodes-serving-no-page resolved to
  std::string no_page_error;                 // why it matched nothing, if it did not
  std::vector<std::string> canary;           // what the canary role resolved to
  std::map<std::string, bool> before;        // fleet-serves (and canary-kept) before any fix
  std::vector<gate::ActionRecord> fix;       // the fix's actions, as the gate records them
  std::map<std::string, std::string> after;  // each required check after the fix: "" or why not
};

// Builds world `world_id` of `seed` (in a folder named after `label`), resolves the node selector
// and the canary role with probes, runs the checks that say whether it starts broken, applies `fix`
// as the gate does and runs every check the gate requires of a world of `role` for that fix.
WorldRun run_world(O1Worlds& o1, const std::string& label, const std::string& world_id, int seed,
                   const aura::intervention::Intervention& fix, scenario::WorldRole role) {
  WorldRun out;
  const scenario::Manifest& m = o1.manifest;
  auto w = o1.driver->create(o1.package, m, world_id, uint64_t(seed),
                             o1.dir / (label + "-" + std::to_string(seed)));
  if (!w.ok()) {
    out.error = "building " + world_id + ": " + w.status().message();
    return out;
  }
  world::World& world = **w;
  world.bind_attempt("0123456789abcdef");
  auto resolve = [&](const std::string& node, std::vector<std::string>& into) -> std::string {
    auto call = scenario::parse_call(
        R"({"call":"file.stat","params":{"node":)" + node + R"(,"path":"/etc/nginx"}})", m.probes,
        m, "probe");
    if (!call.ok()) return call.status().message();
    auto r = world.probe(*call, 1024);
    if (!r.ok()) return r.status().message();
    into = r->resolved;
    return r->exit_code == 0 ? "" : r->error;
  };
  auto check = [&](const std::string& id) -> std::string {
    const scenario::CheckSpec* spec = m.find_check(id);
    if (spec == nullptr) return "no check " + id;
    auto r = world.check(*spec);
    if (!r.ok()) return "check " + id + ": " + r.status().message();
    return r->ok ? "" : (r->observed.empty() ? "failed" : r->observed);
  };
  do {
    out.stale_nodes_error = resolve(R"({"selector":"nodes-root-missing"})", out.stale_nodes);
    out.override_nodes_error = resolve(R"({"selector":"nodes-root-differs"})", out.override_nodes);
    out.no_page_error = resolve(R"({"selector":"nodes-serving-no-page"})", out.no_page_nodes);
    if (role == scenario::WorldRole::kControl) {
      if (std::string e = resolve(R"({"role":"canary"})", out.canary); !e.empty()) {
        out.error = "resolving the canary: " + e;
        break;
      }
    }
    for (const char* id : {"fleet-serves", "canary-kept"}) {
      if (std::string(id) == "canary-kept" && role != scenario::WorldRole::kControl) continue;
      out.before[id] = check(id).empty();
    }
    out.fix = gate::run_actions(world, fix.actions);
    std::vector<std::string> promised = fix.postconditions;
    promised.insert(promised.end(), fix.invariants.begin(), fix.invariants.end());
    const auto spec = gate::GateSpec::from(m, promised);
    for (const auto* c : gate::required_checks(spec, role)) out.after[c->id] = check(c->id);
  } while (false);
  if (auto s = o1.driver->destroy(std::move(w).value()); !s.is_ok())
    out.error += " destroying " + world_id + ": " + s.message();
  return out;
}

// One world of a seed: where it is built (a folder name), which world, the fix, its role.
struct WorldJob {
  const char* label;
  const char* world;
  const aura::intervention::Intervention* fix;
  scenario::WorldRole role;
};

// Runs every job of `seed`, each on a fresh world, on two threads (as the judge runs its
// properties on this two-core machine); the results in the jobs' order.
std::vector<WorldRun> run_worlds(O1Worlds& o1, int seed, const std::vector<WorldJob>& jobs) {
  std::vector<WorldRun> out(jobs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++)
      out[i] = run_world(o1, jobs[i].label, jobs[i].world, seed, *jobs[i].fix, jobs[i].role);
  };
  std::thread other(work);
  work();
  other.join();
  return out;
}

}  // namespace

// Seed 0 in full; the seed picks the variant (node names, paths, which node drifts): variant 1 is
// judged by the learner's attempts below (seed 4), and every variant's worlds by the next case.
TEST_CASE("o1: judge mode gives gold VERIFIED and bad RECOVERED_UNPROVEN") {
  O1Lab s;
  for (int seed : {0}) {
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

// What judging seeds 1 and 2 proved of their variants, without the judge: each world builds; the
// node selector finds the one drifted web node in the primary and the twin (a different one in
// each) and none in the control, whose canary keeps its own release; the primary and the twin
// start broken; gold, applied as the gate applies it, passes every check the gate requires of
// each world (the control's canary kept); and the bad hand edit names the primary's drifted
// node, so it recovers the primary, is undone by the next converge (converge-holds), and never
// reaches the twin's. Repeat and reversal are seed 0's (judge) and variant 1's (the learner's).
TEST_CASE("o1: seeds 1 and 2: every world builds, selectors resolve, gold passes each, bad not") {
  O1Worlds o1;
  using scenario::WorldRole;
  for (int seed : {1, 2}) {
    INFO("seed " << seed);
    const auto gold = o1.judge_ir("gold", seed);
    const auto bad = o1.judge_ir("bad", seed);
    REQUIRE(bad.actions.size() == 2);
    REQUIRE(bad.actions[0].call.name == "file.write");
    const auto* bad_node = std::get_if<scenario::Target>(bad.actions[0].call.find("node"));
    REQUIRE(bad_node != nullptr);
    const std::vector<WorldRun> runs =
        run_worlds(o1, seed,
                   {{"gold-primary", "primary", &gold, WorldRole::kPrimary},
                    {"gold-twin", "twin-1", &gold, WorldRole::kTwin},
                    {"gold-control", "control", &gold, WorldRole::kControl},
                    {"bad-primary", "primary", &bad, WorldRole::kPrimary}});
    const WorldRun &primary = runs[0], &twin = runs[1], &control = runs[2], &bad_primary = runs[3];
    for (const WorldRun* r : {&primary, &twin, &control, &bad_primary})
      REQUIRE_MESSAGE(r->error.empty(), r->error);

    // The primary and the twin: one drifted web node each, not the same one; both start broken.
    CHECK_MESSAGE(primary.stale_nodes_error.empty(), primary.stale_nodes_error);
    CHECK_MESSAGE(twin.stale_nodes_error.empty(), twin.stale_nodes_error);
    REQUIRE(primary.stale_nodes.size() == 1);
    REQUIRE(twin.stale_nodes.size() == 1);
    CHECK(primary.stale_nodes != twin.stale_nodes);
    CHECK(bad_primary.stale_nodes == primary.stale_nodes);  // the same variant, built again
    CHECK_FALSE(primary.before.at("fleet-serves"));
    CHECK_FALSE(twin.before.at("fleet-serves"));
    // The control: nothing drifted, the canary's own override is legitimate, the fleet serves.
    CHECK(control.stale_nodes.empty());
    CHECK_FALSE(control.stale_nodes_error.empty());  // the selector resolved to no node
    REQUIRE(control.canary.size() == 1);
    CHECK(control.before.at("fleet-serves"));
    CHECK(control.before.at("canary-kept"));
    // The node selector of the other hypotheses (the node that differs from its group) resolves
    // in every world: the drifted node in the primary and the twin, the canary in the control.
    for (const WorldRun* r : {&primary, &twin, &control})
      CHECK_MESSAGE(r->override_nodes_error.empty(), r->override_nodes_error);
    CHECK(primary.override_nodes == primary.stale_nodes);
    CHECK(twin.override_nodes == twin.stale_nodes);
    CHECK(control.override_nodes == control.canary);
    // The symptom's selector (the nodes whose nginx root holds no page: the ones answering 404)
    // names the drifted node where the fleet is broken, and nothing in the healthy control.
    CHECK_MESSAGE(primary.no_page_error.empty(), primary.no_page_error);
    CHECK_MESSAGE(twin.no_page_error.empty(), twin.no_page_error);
    CHECK(primary.no_page_nodes == primary.stale_nodes);
    CHECK(twin.no_page_nodes == twin.stale_nodes);
    CHECK(control.no_page_nodes.empty());
    CHECK(control.no_page_error.find("resolved to no node") != std::string::npos);

    // Gold: its path selector names the drifted node's host_vars file in the primary and the twin
    // and nothing in the control (the canary's override stays); every required check passes.
    for (const auto& [what, run] : {std::pair<const char*, const WorldRun*>{"primary", &primary},
                                    {"twin-1", &twin},
                                    {"control", &control}}) {
      INFO("gold on " << what);
      REQUIRE(run->fix.size() == 2);
      CHECK_MESSAGE(run->fix[1].exit_code == 0, run->fix[1].error);  // the converge
      for (const char* id :
           {"fleet-serves", "converge-holds", "served-as-rendered", "source-governs"})
        CHECK_MESSAGE(run->after.count(id) == 1, id);
      for (const auto& [id, why] : run->after) CHECK_MESSAGE(why.empty(), id << ": " << why);
    }
    for (const WorldRun* run : {&primary, &twin}) {
      CHECK(run->fix[0].exit_code == 0);
      REQUIRE(run->fix[0].resolved.size() == 1);
      const std::string& r = run->fix[0].resolved[0];
      CHECK_MESSAGE(r.ends_with(":/srv/ansible/host_vars/" + run->stale_nodes[0] + ".yml"), r);
    }
    CHECK(control.fix[0].exit_code == 1);  // a target that resolves to nothing, not the host's
    CHECK(control.fix[0].resolved.empty());
    CHECK(control.after.count("canary-kept") == 1);

    // Bad: the hand edit is on the primary's drifted node, which is not the twin's; the primary
    // recovers (fleet-serves) and the next converge undoes it (converge-holds fails).
    CHECK(bad_node->name == primary.stale_nodes[0]);
    CHECK(bad_node->name != twin.stale_nodes[0]);
    CHECK(bad_primary.after.at("fleet-serves").empty());
    CHECK_FALSE(bad_primary.after.at("converge-holds").empty());
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
       R"({"call":"file.stat","params":{"node":{"selector":"nodes-root-missing"},"path":"/var/www/docs/r1841"}})"});
  CHECK(r.out.find("No such file") != std::string::npos);
  write_file(s.lab / "fix.json",
             ir("[" + unset(R"({"selector":"host-vars-root-missing"})") + "," + kConverge + "]"));
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
           "[" + unset(R"({"selector":"host-vars-root-differs"})") + "," + kConverge + "]",
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
           R"([{"call":"file.write","params":{"node":{"selector":"nodes-root-missing"},"path":"/etc/nginx/conf.d/site.conf","content":"server { listen 80; root /srv/site/current; index index.html; }"}},{"call":"nginx.reload","params":{"node":{"selector":"nodes-root-missing"}}}])",
           "RECOVERED_UNPROVEN",
           R"("property":"primary","status":"fail","reason":"check converge-holds failed)"},
      },
      0, ir);
}
