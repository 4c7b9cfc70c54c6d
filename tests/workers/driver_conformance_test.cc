// The contract every world driver keeps (engine/world/world_driver.h), run against each driver
// this build has: a world built from a package records what it was built from, checks on a
// fresh world give verdicts (not errors), a role resolves in the world, a target or path outside
// the world is refused, an action is journalled and journal.undo restores the bytes and the
// fingerprint, and destroy leaves nothing. A driver takes part through a Subject: its package,
// manifest and host, and the calls of its catalog that play each part. A later driver is one
// more TEST_CASE line at the end (and its Subject). The nodes driver needs root and namespaces,
// and a world takes seconds: each driver builds one world for all the cases.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/crypto/ed25519.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/signed_note.h"
#include "engine/writer/evidence_writer.h"
#include "tests/support/log_lab.h"
#include "tests/support/temp_dir.h"
#include "tests/workers/t0_package.h"
#include "workers/drivers.h"

namespace aura {
namespace {

namespace fs = std::filesystem;

// What the contract needs of one driver: where its package is, and which calls of its catalog
// play each part (JSON as a learner would send them, validated by the real call parser).
struct Subject {
  std::string driver;  // the make_driver name
  fs::path package;
  scenario::Manifest manifest;
  std::optional<world::WorldHost> host;  // for a driver whose worlds run processes
  std::string world = "primary";
  // A probe whose "node" target is a role, and the nodes it resolves to in `world`.
  std::string role_probe;
  std::vector<std::string> role_nodes;
  // The same probe with a literal naming no node of the world.
  std::string outside_probe;
  // A probe reading file `path`, an action writing it, and the action undoing the journal.
  std::string read_probe, write_action, undo_action;
  std::string read_path;
};

scenario::Call parse(const Subject& s, const std::string& json, bool action) {
  auto c = scenario::parse_call(json, action ? s.manifest.actions : s.manifest.probes, s.manifest,
                                "call");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  return std::move(c).value();
}

world::CallOutput run(world::World& w, const Subject& s, const std::string& json, bool action) {
  const scenario::Call c = parse(s, json, action);
  auto out = action ? w.act(c) : w.probe(c, 64 << 10);
  REQUIRE_MESSAGE(out.ok(), out.status().message());
  return std::move(out).value();
}

bool applies(const scenario::CheckSpec& check, scenario::WorldRole role) {
  if (check.roles.empty()) return true;
  for (scenario::WorldRole r : check.roles)
    if (r == role) return true;
  return false;
}

// The contract, case by case, on one fresh world of `s`.
void conform(Subject& s) {
  testing::TempDir dir;
  std::unique_ptr<world::WorldDriver> driver =
      s.host ? workers::make_driver(s.driver, *s.host) : workers::make_driver(s.driver);
  REQUIRE(driver != nullptr);
  CHECK(driver->name() == s.driver);
  REQUIRE(driver->check_manifest(s.manifest).is_ok());
  const fs::path work = dir / "world";
  auto created = driver->create(s.package, s.manifest, s.world, 1, work);
  REQUIRE_MESSAGE(created.ok(), created.status().message());
  std::unique_ptr<world::World> w = std::move(created).value();
  CHECK(w->id() == s.world);
  w->bind_attempt("0123456789abcdef");

  // Built from the package: what it was built from is recorded.
  {
    INFO("build record");
    auto record = w->build_record();
    REQUIRE_MESSAGE(record.ok(), record.status().message());
    CHECK_FALSE(record->profile.empty());
    CHECK_FALSE(record->layers.empty());
  }
  // Checks on a fresh world are verdicts, never errors, and their observations are bounded.
  {
    const scenario::WorldSpec* spec = nullptr;
    for (const auto& ws : s.manifest.worlds)
      if (ws.id == s.world) spec = &ws;
    REQUIRE(spec != nullptr);
    for (const scenario::CheckSpec& check : s.manifest.checks) {
      if (!applies(check, spec->role)) continue;
      INFO("check " << check.id);
      auto r = w->check(check);
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      CHECK(r->observed.size() <= 1024);
    }
  }
  // A role resolves in this world, and the output says to what.
  {
    INFO("role target");
    const world::CallOutput out = run(*w, s, s.role_probe, false);
    CHECK(out.exit_code == 0);
    CHECK(out.resolved == s.role_nodes);
  }
  // A literal naming nothing of this world is the call's result: refused, nothing resolved.
  {
    INFO("literal outside the world");
    const world::CallOutput out = run(*w, s, s.outside_probe, false);
    CHECK(out.exit_code != 0);
    CHECK_FALSE(out.error.empty());
    CHECK(out.resolved.empty());
  }
  // A path that is not normalised (it would climb out of the world) is never read, even when a
  // call that skipped the call parser carries it.
  {
    INFO("path escaping the world");
    scenario::Call c = parse(s, s.read_probe, false);
    bool replaced = false;
    for (auto& [name, value] : c.params) {
      if (name != "path") continue;
      value = std::string("/srv/../../../etc/shadow");
      replaced = true;
    }
    REQUIRE(replaced);
    auto out = w->probe(c, 64 << 10);
    if (out.ok()) {
      CHECK(out->exit_code != 0);
      CHECK(out->output.find("root:") == std::string::npos);
    }
  }
  // An action is journalled first: journal.undo restores the bytes and the fingerprint.
  {
    INFO("journal then undo");
    const std::string before = run(*w, s, s.read_probe, false).output;
    CHECK_FALSE(before.empty());
    auto fp0 = w->fingerprint();
    REQUIRE_MESSAGE(fp0.ok(), fp0.status().message());
    CHECK(fp0->size() == 64);
    const world::CallOutput wrote = run(*w, s, s.write_action, true);
    CHECK(wrote.exit_code == 0);
    CHECK(run(*w, s, s.read_probe, false).output == "conformance");
    auto fp1 = w->fingerprint();
    REQUIRE(fp1.ok());
    CHECK(*fp1 != *fp0);
    const world::CallOutput undone = run(*w, s, s.undo_action, true);
    CHECK(undone.exit_code == 0);
    CHECK(run(*w, s, s.read_probe, false).output == before);
    auto fp2 = w->fingerprint();
    REQUIRE(fp2.ok());
    CHECK(*fp2 == *fp0);
  }
  // Destroy removes the world's folder; destroying again (discard) is fine.
  REQUIRE(driver->destroy(std::move(w)).is_ok());
  CHECK_FALSE(fs::exists(work));
  CHECK(driver->discard(work).is_ok());
}

scenario::Manifest manifest_at(const fs::path& package) {
  auto m = scenario::parse_manifest(testing::slurp(package / "manifest.json"));
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  return std::move(m).value();
}

// filetree: the t0-config-drift package as committed.
Subject filetree_subject() {
  Subject s;
  s.driver = "filetree";
  s.package = testing::t0_package_dir();
  s.manifest = manifest_at(s.package);
  s.role_probe = R"({"call":"fleet.effective","params":{"node":{"role":"web"}}})";
  s.role_nodes = {"web1", "web2", "web3"};
  s.outside_probe = R"({"call":"fleet.effective","params":{"node":{"literal":"web9"}}})";
  s.read_path = "/srv/www/current/index.html";
  s.read_probe = R"({"call":"file.read","params":{"path":")" + s.read_path + R"("}})";
  // t0's file.write names its path as a target of kind path: a selector or a literal.
  s.write_action = R"({"call":"file.write","params":{"path":{"literal":")" + s.read_path +
                   R"("},"content":"conformance"}})";
  s.undo_action = R"({"call":"journal.undo"})";
  return s;
}

// nodes: the two-node n0 fixture (nginx on web, aura-svcman and aura-app on app), signed in a
// copy as `aura setup` signs packages: the driver builds only from verified bytes.
struct NodesHost {
  testing::LogLab lab;
  writer::RunTokens tokens;
  testing::TempDir dir;
};

Subject nodes_subject(NodesHost& h) {
  Subject s;
  s.driver = "nodes";
  s.package = h.dir / ("n0-" + h.dir.path().filename().string().substr(10));
  fs::copy(fs::path(AURA_NODES_FIXTURE), s.package, fs::copy_options::recursive);
  auto signed_package =
      sign_package(s.package, NoteSigner("aura.publisher/test", Ed25519KeyPair::generate()));
  REQUIRE_MESSAGE(signed_package.ok(), signed_package.status().message());
  s.manifest = manifest_at(s.package);
  world::WorldHost host;
  host.log = h.lab.log.get();
  host.blobs = &*h.lab.blobs;
  host.tokens = &h.tokens;
  host.state_dir = h.dir / "state";
  host.forbidden = {h.lab.data()};
  s.host = host;
  s.role_probe = R"({"call":"net.listening","params":{"node":{"role":"web"}}})";
  s.role_nodes = {"web"};
  s.outside_probe = R"({"call":"net.listening","params":{"node":{"literal":"db"}}})";
  s.read_path = "/srv/www/index.html";
  s.read_probe =
      R"({"call":"file.read","params":{"node":{"role":"web"},"path":")" + s.read_path + R"("}})";
  s.write_action = R"({"call":"file.write","params":{"node":{"role":"web"},"path":")" +
                   s.read_path + R"(","content":"conformance"}})";
  s.undo_action = R"({"call":"journal.undo","params":{}})";
  return s;
}

}  // namespace

// One line per driver.
TEST_CASE("driver conformance: filetree") {
  Subject s = filetree_subject();
  conform(s);
}

TEST_CASE("driver conformance: nodes") {
  NodesHost h;
  Subject s = nodes_subject(h);
  conform(s);
}

}  // namespace aura
