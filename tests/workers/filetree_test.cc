// The filetree driver on the real t0-config-drift package: world lifecycle, every probe and
// action, target resolution, the judge's gold and bad fixes and more wrong fixes with the check
// results the grader would see, repeat and reversal fingerprints.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/scenario/call.h"
#include "tests/support/temp_dir.h"
#include "tests/workers/t0_package.h"
#include "workers/drivers.h"
#include "workers/filetree/filetree_driver.h"

namespace fs = std::filesystem;
using aura::ErrorCode;
using aura::scenario::Call;
using aura::scenario::Manifest;
using aura::scenario::Target;
using aura::workers::filetree::FiletreeDriver;
using aura::world::CallOutput;
using aura::world::World;

namespace {

using aura::testing::slurp;

using Checks = std::map<std::string, bool>;

// The calls of a judge case's IR member ("actions" or "rollback"), as minified JSON.
std::vector<std::string> ir_calls(const std::string& ir_json, const char* member) {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(ir_json);
  std::vector<std::string> out;
  for (simdjson::dom::element a : root[member].get_array()) out.push_back(simdjson::minify(a));
  return out;
}

struct Env {
  Manifest m;
  FiletreeDriver driver;
  aura::testing::TempDir tmp;
  int made = 0;

  Env() {
    auto r = aura::testing::load_t0_manifest();
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    m = std::move(*r);
  }

  fs::path fresh_dir(const std::string& id) { return tmp / (id + "-" + std::to_string(made++)); }

  std::unique_ptr<World> world(const std::string& id, fs::path* dir_out = nullptr) {
    const fs::path dir = fresh_dir(id);
    auto w = driver.create(aura::testing::t0_package_dir(), m, id, 7, dir);
    REQUIRE_MESSAGE(w.ok(), w.status().message());
    if (dir_out != nullptr) *dir_out = dir;
    return std::move(*w);
  }

  Call call(const std::string& json, bool probe) {
    auto c = aura::scenario::parse_call(json, probe ? m.probes : m.actions, m, "test");
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    return *c;
  }

  CallOutput probe(World& w, const std::string& json, uint64_t max_output_bytes = 65536) {
    auto r = w.probe(call(json, true), max_output_bytes);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  }

  CallOutput act(World& w, const std::string& json) {
    auto r = w.act(call(json, false));
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  }

  void act_all(World& w, const std::vector<std::string>& calls) {
    for (const std::string& c : calls) (void)act(w, c);
  }

  // Every manifest check that applies to world `id`'s role, as the supervisor would run them.
  Checks checks(World& w) {
    aura::scenario::WorldRole role{};
    for (const auto& spec : m.worlds) {
      if (spec.id == w.id()) role = spec.role;
    }
    Checks out;
    for (const auto& c : m.checks) {
      if (std::find(c.roles.begin(), c.roles.end(), role) == c.roles.end()) continue;
      auto r = w.check(c);
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      CHECK(r->observed.size() <= 1024);
      out[c.id] = r->ok;
    }
    return out;
  }

  std::string fingerprint(World& w) {
    auto f = w.fingerprint();
    REQUIRE_MESSAGE(f.ok(), f.status().message());
    REQUIRE(f->size() == 64);
    return *f;
  }

  std::vector<std::string> gold() { return ir_calls(judge("gold").ir_json, "actions"); }
  std::vector<std::string> gold_rollback() { return ir_calls(judge("gold").ir_json, "rollback"); }
  std::vector<std::string> bad() { return ir_calls(judge("bad").ir_json, "actions"); }

  const aura::scenario::JudgeCase& judge(const std::string& name) {
    for (const auto& j : m.judge) {
      if (j.name == name) return j;
    }
    FAIL("no judge case " << name);
    return m.judge.front();
  }
};

const Checks kAllOkPrimary = {{"fleet-healthy", true}, {"fleet-converged", true}};
const Checks kAllOkControl = {{"fleet-healthy", true},
                              {"fleet-converged", true},
                              {"legit-port-kept", true},
                              {"canary-kept", true}};

}  // namespace

TEST_CASE("filetree: the ledger makes the filetree driver by name") {
  auto d = aura::workers::make_driver("filetree");
  REQUIRE(d != nullptr);
  CHECK(d->name() == "filetree");
  CHECK(aura::workers::make_driver("sandbox") == nullptr);
  CHECK(aura::workers::driver_names() == std::vector<std::string>{"filetree", "nodes"});
  CHECK(d->profile_digest().size() == 64);
  CHECK(d->capabilities_json().find("\"scripts\":false") != std::string::npos);
}

TEST_CASE("filetree check_manifest: accepts the t0 package and names what it refuses") {
  Env env;
  REQUIRE_MESSAGE(env.driver.check_manifest(env.m).is_ok(),
                  env.driver.check_manifest(env.m).message());

  const auto refused = [&](Manifest m, const std::string& needle) {
    const aura::Status s = env.driver.check_manifest(m);
    CHECK_FALSE(s.is_ok());
    CHECK_MESSAGE(s.message().find(needle) != std::string::npos, s.message());
  };
  {
    Manifest m = env.m;
    m.worlds[1].build_json = R"({"layers":["worlds/common","../outside"]})";
    refused(m, "worlds[1].build.layers[1]");
  }
  {
    Manifest m = env.m;
    m.worlds[0].build_json = R"({"layers":["worlds/common"],"seed_vars":{}})";
    refused(m, "unknown member");
  }
  {
    Manifest m = env.m;
    m.worlds[0].build_json = R"({"layers":[]})";
    refused(m, "at least one layer");
  }
  {
    Manifest m = env.m;
    m.worlds[0].build_json = R"({"layers":["/abs/path"]})";
    refused(m, "not a safe relative package path");
  }
  {
    Manifest m = env.m;
    m.probes[0].name = "http.get";
    refused(m, "probes[0] (http.get)");
  }
  {
    Manifest m = env.m;
    m.actions.push_back(m.probes[0]);  // file.read is a probe, not an action
    refused(m, "not one of the filetree driver's actions");
  }
  {
    Manifest m = env.m;
    for (auto& a : m.actions) {
      if (a.name != "file.write") continue;
      for (auto& p : a.params) {
        if (p.name == "content") p.type = aura::scenario::ParamType::kPath;
      }
    }
    refused(m, "must be of type string");
  }
  {
    Manifest m = env.m;
    m.checks[0].params_json = R"({"expect":"x"})";
    refused(m, "checks[0].params: expect: unknown member");
  }
  {
    Manifest m = env.m;
    m.checks[2].params_json = R"({"node":"web1","key":"port"})";
    refused(m, "checks[2].params: value: required");
  }
  {
    Manifest m = env.m;
    m.checks[0].call = "http.content";
    refused(m, "not a check the filetree driver implements");
  }
  // Selectors: each world's build gives every selector term its rule, and only those.
  {
    Manifest m = env.m;
    m.targets[1].name = "drifted";
    refused(m, "worlds[0].build.selectors: selector \"drifted\" is not defined");
  }
  {
    Manifest m = env.m;
    m.worlds[2].build_json = R"({"layers":["worlds/common","worlds/control"]})";
    refused(m,
            "worlds[2].build.selectors: selector \"host-vars-root-without-page\" is not defined");
  }
  const auto rule = [&](const std::string& selectors) {
    Manifest m = env.m;
    m.worlds[1].build_json =
        R"({"layers":["worlds/common","worlds/twin-1"],"selectors":)" + selectors + "}";
    return m;
  };
  const std::string stale =
      R"("host-vars-root-without-page":{"kind":"stale_override","var":"app_root","file":"index.html"},)"
      R"("nodes-serving-no-page":{"kind":"no_page","var":"app_root","file":"index.html"},)"
      R"("release-page":{"kind":"path","path":"/srv/www/current/index.html"})";
  refused(rule("{" + stale + R"(,"web":{"kind":"stale_override","var":"a","file":"f"}})"),
          "worlds[1].build.selectors.web: not a selector term of the manifest");
  refused(
      rule(R"({"host-vars-root-without-page":{"kind":"var_match","var":"app_root","file":"f"}})"),
      "worlds[1].build.selectors.host-vars-root-without-page.kind: \"var_match\" is not a selector "
      "kind "
      "the filetree driver implements (stale_override, no_page, path)");
  refused(
      rule(
          R"({"host-vars-root-without-page":{"kind":"stale_override","var":"App Root","file":"f"}})"),
      "worlds[1].build.selectors.host-vars-root-without-page.var: \"App Root\" is not a vars key");
  refused(
      rule(
          R"({"host-vars-root-without-page":{"kind":"stale_override","var":"app_root","file":"../x"}})"),
      "worlds[1].build.selectors.host-vars-root-without-page.file: \"../x\" is not a normalised "
      "relative path");
  refused(rule(R"({"host-vars-root-without-page":{"kind":"stale_override","var":"app_root"}})"),
          "worlds[1].build.selectors.host-vars-root-without-page.file: required");
  refused(
      rule(R"({"host-vars-root-without-page":{"kind":"stale_override","var":"app_root","file":"f",)"
           R"("role":"web"}})"),
      "worlds[1].build.selectors.host-vars-root-without-page.role: unknown member");
  refused(rule(R"({"release-page":{"kind":"path","path":"srv/www"}})"),
          "worlds[1].build.selectors.release-page.path: \"srv/www\" is not a normalised "
          "absolute path");
  refused(rule(R"({"release-page":{"kind":"path","path":"/srv/www","var":"app_root"}})"),
          "worlds[1].build.selectors.release-page.var: not a member of a path rule");
  {
    std::string swapped = stale;
    swapped.replace(swapped.find(R"({"kind":"path","path":"/srv/www/current/index.html"})"),
                    std::string(R"({"kind":"path","path":"/srv/www/current/index.html"})").size(),
                    R"({"kind":"no_page","var":"app_root","file":"index.html"})");
    refused(rule("{" + swapped + "}"),
            "worlds[1].build.selectors.release-page: a no_page rule names nodes; the term is of "
            "kind path");
  }
  refused(rule("[]"), "worlds[1].build.selectors: expected an object");
  {
    Manifest m = env.m;
    m.targets[0].kind = "service";
    refused(m, "the filetree driver targets nodes");
  }
  {
    Manifest m = env.m;
    m.targets[0].kind = "path";  // a role of paths: the driver resolves paths by selector only
    refused(m, "the filetree driver targets nodes, and paths by selector");
  }
  {
    Manifest m = env.m;
    for (auto& a : m.actions) {
      for (auto& p : a.params) {
        if (a.name == "file.write" && p.name == "path") p.target_kind = "node";
      }
    }
    refused(m, "actions[2] (file.write).params.path: target_kind must be path");
  }
}

TEST_CASE("t0 package: the judge's probes and IRs validate against the manifest") {
  Env env;
  for (const char* name : {"gold", "bad"}) {
    CAPTURE(name);
    const auto& j = env.judge(name);
    REQUIRE(j.probe_calls_json.size() == 1);
    (void)env.call(j.probe_calls_json[0], true);
    aura::intervention::IrContext context{&env.m, {"ev-1"}};
    auto ir = aura::intervention::parse_intervention(j.ir_json, context);
    CHECK_MESSAGE(ir.ok(), ir.status().message());
  }
  CHECK(env.judge("gold").expect_verdict == "VERIFIED");
  CHECK(env.judge("bad").expect_verdict == "RECOVERED_UNPROVEN");
  // Exactly one world of each of primary and control, and a twin.
  CHECK(env.m.primary() != nullptr);
  CHECK(env.m.control() != nullptr);
  CHECK(env.m.twins().size() == 1);
}

TEST_CASE("filetree: create builds from the layers, open re-attaches, destroy removes the folder") {
  Env env;
  fs::path dir;
  auto w = env.world("primary", &dir);
  CHECK(w->id() == "primary");
  CHECK(fs::is_directory(dir / "root" / "fleet" / "host_vars"));
  CHECK(fs::is_directory(dir / "journal"));
  // The primary overlay replaced common's web2 host vars.
  CHECK(slurp(dir / "root/fleet/host_vars/web2.conf").find("app_root=/srv/www/release-1") !=
        std::string::npos);
  CHECK((fs::status(dir / "root").permissions() & fs::perms::all) == fs::perms(0755));
  CHECK((fs::status(dir / "root/fleet/group_vars.conf").permissions() & fs::perms::all) ==
        fs::perms(0644));
  const std::string fp = env.fingerprint(*w);

  // create() refuses a folder that exists.
  auto again = env.driver.create(aura::testing::t0_package_dir(), env.m, "primary", 7, dir);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == ErrorCode::kFailedPrecondition);

  // open() sees the same world; it refuses another world id or an unknown one.
  auto reopened = env.driver.open(env.m, "primary", dir);
  REQUIRE_MESSAGE(reopened.ok(), reopened.status().message());
  CHECK(env.fingerprint(**reopened) == fp);
  CHECK_FALSE(env.driver.open(env.m, "twin-1", dir).ok());
  CHECK_FALSE(env.driver.open(env.m, "nope", dir).ok());
  CHECK_FALSE(env.driver.open(env.m, "primary", env.tmp / "missing").ok());

  // The same package, world and seed build the same world.
  auto twin_of_primary = env.world("primary");
  CHECK(env.fingerprint(*twin_of_primary) == fp);
  CHECK(env.fingerprint(*env.world("twin-1")) != fp);

  REQUIRE(env.driver.destroy(std::move(w)).is_ok());
  CHECK_FALSE(fs::exists(dir));
  // Idempotent: a second handle on the removed world destroys nothing and succeeds.
  CHECK(env.driver.destroy(std::move(*reopened)).is_ok());
  CHECK_FALSE(env.driver.destroy(nullptr).is_ok());
}

TEST_CASE(
    "filetree: create fails closed on a missing layer or an unknown world, leaving no folder") {
  Env env;
  Manifest m = env.m;
  m.worlds[0].build_json = R"({"layers":["worlds/common","worlds/no-such-layer"]})";
  const fs::path dir = env.fresh_dir("broken");
  auto w = env.driver.create(aura::testing::t0_package_dir(), m, "primary", 1, dir);
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().message().find("worlds/no-such-layer") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));

  auto unknown = env.driver.create(aura::testing::t0_package_dir(), env.m, "twin-9", 1, dir);
  CHECK(unknown.status().code() == ErrorCode::kNotFound);
  CHECK_FALSE(fs::exists(dir));

  // A layer that is not a fleet on its own (no inventory) is refused at create.
  Manifest partial = env.m;
  partial.worlds[0].build_json = R"({"layers":["worlds/primary"]})";
  auto not_fleet = env.driver.create(aura::testing::t0_package_dir(), partial, "primary", 1, dir);
  REQUIRE_FALSE(not_fleet.ok());
  CHECK(not_fleet.status().message().find("inventory.conf") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("filetree: the worlds as built are converged; only the control is healthy") {
  Env env;
  auto primary = env.world("primary");
  auto twin = env.world("twin-1");
  auto control = env.world("control");
  CHECK(env.checks(*primary) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
  CHECK(env.checks(*twin) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
  CHECK(env.checks(*control) == kAllOkControl);

  auto healthy = primary->check(env.m.checks[0]);
  REQUIRE(healthy.ok());
  CHECK(healthy->observed.find("web2: /srv/www/release-1/index.html: not found") !=
        std::string::npos);
  CHECK(healthy->observed.find("web1 ok") != std::string::npos);
  auto twin_healthy = twin->check(env.m.checks[0]);
  REQUIRE(twin_healthy.ok());
  CHECK(twin_healthy->observed.find("web3: /srv/www/hotfix-7/index.html: not found") !=
        std::string::npos);
}

TEST_CASE("filetree probes: file.read, dir.list, fleet.effective and fleet.diff") {
  Env env;
  auto w = env.world("primary");

  CallOutput r =
      env.probe(*w, R"({"call":"file.read","params":{"path":"/fleet/host_vars/web2.conf"}})");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("app_root=/srv/www/release-1\n") != std::string::npos);
  CHECK_FALSE(r.truncated);

  CallOutput cut =
      env.probe(*w, R"({"call":"file.read","params":{"path":"/fleet/group_vars.conf"}})", 10);
  CHECK(cut.truncated);
  CHECK(cut.output.size() == 10);
  CHECK(
      cut.output ==
      slurp(aura::testing::t0_package_dir() / "worlds/common/fleet/group_vars.conf").substr(0, 10));

  CallOutput missing =
      env.probe(*w, R"({"call":"file.read","params":{"path":"/srv/www/release-1/index.html"}})");
  CHECK(missing.exit_code != 0);
  CHECK(missing.error.find("not found") != std::string::npos);
  CallOutput folder = env.probe(*w, R"({"call":"file.read","params":{"path":"/srv/www"}})");
  CHECK(folder.exit_code != 0);
  CHECK(folder.error.find("not a regular file") != std::string::npos);

  CallOutput list = env.probe(*w, R"({"call":"dir.list","params":{"path":"/srv/www/release-1"}})");
  CHECK(list.exit_code == 0);
  CHECK(list.output.starts_with("file 0644 "));
  CHECK(list.output.find("index.html") == std::string::npos);
  CallOutput www = env.probe(*w, R"({"call":"dir.list","params":{"path":"/srv/www"}})");
  CHECK(www.output == "dir 0755 - current\ndir 0755 - release-1\ndir 0755 - release-42\n");

  CallOutput eff =
      env.probe(*w, R"({"call":"fleet.effective","params":{"node":{"literal":"web2"}}})");
  CHECK(eff.exit_code == 0);
  CHECK(eff.resolved == std::vector<std::string>{"web2"});
  CHECK(eff.output.find("app_root=/srv/www/release-1  from /fleet/host_vars/web2.conf (group "
                        "default /srv/www/current)") != std::string::npos);
  CHECK(eff.output.find("port=8080  from /fleet/group_vars.conf") != std::string::npos);
  CallOutput eff_all =
      env.probe(*w, R"({"call":"fleet.effective","params":{"node":{"role":"web"}}})", 100);
  CHECK(eff_all.truncated);
  CHECK(eff_all.output.size() == 100);
  CHECK(eff_all.resolved == std::vector<std::string>{"web1", "web2", "web3"});

  // The stale override is rendered faithfully: the diff shows nothing to re-render.
  CallOutput diff = env.probe(*w, R"({"call":"fleet.diff"})");
  CHECK(diff.exit_code == 0);
  CHECK(diff.output.find("web2: /nodes/web2/app.conf matches the source of truth") !=
        std::string::npos);
  CHECK(diff.output.find("differs") == std::string::npos);
  // After a hand edit it does.
  env.act_all(*w, env.bad());
  diff = env.probe(*w, R"({"call":"fleet.diff"})");
  CHECK(diff.output.find("web2: /nodes/web2/app.conf differs from the source of truth") !=
        std::string::npos);
  CHECK(diff.output.find("app_root: rendered /srv/www/current, source /srv/www/release-1") !=
        std::string::npos);
  CHECK(diff.output.find("port: rendered (unset), source 8080") != std::string::npos);
}

TEST_CASE("filetree probes never change the world") {
  Env env;
  auto w = env.world("primary");
  const std::string before = env.fingerprint(*w);
  (void)env.probe(*w, R"({"call":"file.read","params":{"path":"/nodes/web2/app.conf"}})");
  (void)env.probe(*w, R"({"call":"dir.list","params":{"path":"/fleet"}})");
  (void)env.probe(*w, R"({"call":"fleet.effective","params":{"node":{"role":"web"}}})");
  (void)env.probe(*w, R"({"call":"fleet.diff"})");
  CHECK(env.fingerprint(*w) == before);
  // A probe name is refused as an action and the reverse.
  CHECK_FALSE(w->act(env.call(R"({"call":"fleet.diff"})", true)).ok());
  CHECK_FALSE(w->probe(env.call(R"({"call":"journal.undo"})", false), 100).ok());
}

TEST_CASE("filetree targets: a selector resolves by the rule its world's build declares") {
  Env env;
  const std::string eff_stale =
      R"({"call":"fleet.effective","params":{"node":{"selector":"host-vars-root-without-page"}}})";
  const auto control_with = [&](const std::string& rule) {
    env.m.worlds[2].build_json =
        R"({"layers":["worlds/common","worlds/control"],"selectors":{"host-vars-root-without-page":)" +
        rule +
        R"(,"nodes-serving-no-page":{"kind":"no_page","var":"app_root","file":"index.html"},)"
        R"("release-page":{"kind":"path","path":"/srv/www/current/index.html"}}})";
    REQUIRE(env.driver.check_manifest(env.m).is_ok());
  };
  // The control's web3 overrides app_root with a folder that holds index.html but no other
  // page; its web1 overrides port with a value that names no folder at all.
  control_with(R"({"kind":"stale_override","var":"app_root","file":"missing.html"})");
  fs::path dir;
  auto control = env.world("control", &dir);
  CHECK(env.probe(*control, eff_stale).resolved == std::vector<std::string>{"web3"});
  control_with(R"({"kind":"stale_override","var":"port","file":"index.html"})");
  CHECK(env.probe(*env.world("control"), eff_stale).resolved == std::vector<std::string>{"web1"});
  // A world opened again resolves by its build's rule, read from the manifest again.
  control.reset();
  auto reopened = env.driver.open(env.m, "control", dir);
  REQUIRE_MESSAGE(reopened.ok(), reopened.status().message());
  CHECK(env.probe(**reopened, eff_stale).resolved == std::vector<std::string>{"web1"});
}

TEST_CASE("filetree targets: the selector finds the cause in each world; nothing is an error") {
  Env env;
  const std::string eff_stale =
      R"({"call":"fleet.effective","params":{"node":{"selector":"host-vars-root-without-page"}}})";
  auto primary = env.world("primary");
  auto twin = env.world("twin-1");
  auto control = env.world("control");
  CHECK(env.probe(*primary, eff_stale).resolved == std::vector<std::string>{"web2"});
  CHECK(env.probe(*twin, eff_stale).resolved == std::vector<std::string>{"web3"});
  // In the control web3's app_root override is legitimate (its folder serves a page).
  CallOutput none = env.probe(*control, eff_stale);
  CHECK(none.exit_code != 0);
  CHECK(none.error == "selector host-vars-root-without-page resolved to no node in this world");
  CHECK(none.resolved.empty());
  const std::string before = env.fingerprint(*control);
  CallOutput unset = env.act(
      *control,
      R"({"call":"vars.unset","params":{"node":{"selector":"host-vars-root-without-page"},"key":"app_root"}})");
  CHECK(unset.exit_code != 0);
  CHECK(env.fingerprint(*control) == before);

  CallOutput unknown =
      env.probe(*primary, R"({"call":"fleet.effective","params":{"node":{"literal":"web9"}}})");
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.error.find("no node of that name") != std::string::npos);

  // More matches than max_matches is an error too, naming what matched.
  Manifest narrow = env.m;
  narrow.targets[0].max_matches = 2;
  auto w = env.driver.create(aura::testing::t0_package_dir(), narrow, "primary", 1,
                             env.fresh_dir("narrow"));
  REQUIRE(w.ok());
  auto many = (*w)->probe(
      env.call(R"({"call":"fleet.effective","params":{"node":{"role":"web"}}})", true), 4096);
  REQUIRE(many.ok());
  CHECK(many->exit_code != 0);
  CHECK(many->error ==
        "role web resolved to 3 nodes (web1, web2, web3), more than its max_matches 2");
  CHECK(many->output.empty());
}

TEST_CASE("filetree targets: each t0 hypothesis's selector resolves where its fix runs") {
  Env env;
  const auto eff = [](const char* selector) {
    return std::string(R"({"call":"fleet.effective","params":{"node":{"selector":")") + selector +
           R"("}}})";
  };
  const std::string page =
      R"({"call":"file.chmod","params":{"path":{"selector":"release-page"},"mode":"0644"}})";
  const std::vector<std::string> kPage = {"/srv/www/current/index.html"};
  for (const auto& [world, broken] : std::vector<std::pair<std::string, std::string>>{
           {"primary", "web2"}, {"twin-1", "web3"}, {"control", ""}}) {
    CAPTURE(world);
    auto w = env.world(world);
    for (const char* selector : {"host-vars-root-without-page", "nodes-serving-no-page"}) {
      CAPTURE(selector);
      const CallOutput got = env.probe(*w, eff(selector));
      if (broken.empty()) {
        // The control serves every page: neither the cause's selector nor the symptom's names
        // a node there, and saying so is the call's error, not a silent no-op.
        CHECK(got.exit_code != 0);
        CHECK(got.error ==
              "selector " + std::string(selector) + " resolved to no node in this world");
      } else {
        CHECK(got.exit_code == 0);
        CHECK(got.resolved == std::vector<std::string>{broken});
      }
    }
    // The release's page is the same file in every world (bad-release's fix writes it).
    const CallOutput chmod = env.act(*w, page);
    CHECK(chmod.exit_code == 0);
    CHECK(chmod.resolved == kPage);
    auto rb = w->read_back(env.call(page, false), {chmod.resolved, chmod.output});
    REQUIRE(rb.ok());
    CHECK(rb->differences.empty());
    CHECK(rb->observed.find("/srv/www/current/index.html mode=0644") != std::string::npos);
  }
  // A literal path is the path itself; a node selector is no path.
  auto w = env.world("primary");
  const CallOutput literal = env.act(
      *w,
      R"({"call":"file.chmod","params":{"path":{"literal":"/srv/www/current"},"mode":"0755"}})");
  CHECK(literal.exit_code == 0);
  CHECK(literal.resolved == std::vector<std::string>{"/srv/www/current"});
  Call wrong = env.call(page, false);
  wrong.params = {{"mode", std::string("0644")},
                  {"path", Target{Target::Kind::kSelector, "nodes-serving-no-page"}}};
  auto refused = w->act(wrong);
  REQUIRE(refused.ok());
  CHECK(refused->exit_code != 0);
  CHECK(refused->error ==
        "selector nodes-serving-no-page: not a selector of paths this world's build defines");
  // The symptom's selector follows the symptom: after a hand edit web2 serves a page again.
  CHECK(env.act(*w, R"({"call":"file.write","params":{"path":{"literal":"/nodes/web2/app.conf"},)"
                    R"("content":"app_root=/srv/www/current"}})")
            .exit_code == 0);
  CHECK(env.probe(*w, eff("nodes-serving-no-page")).exit_code != 0);
  CHECK(env.probe(*w, eff("host-vars-root-without-page")).resolved ==
        std::vector<std::string>{"web2"});
}

TEST_CASE("filetree actions: vars.set, vars.unset, file.write, file.chmod, fleet.converge") {
  Env env;
  fs::path dir;
  auto w = env.world("primary", &dir);
  const fs::path root = dir / "root";

  CallOutput set = env.act(
      *w,
      R"({"call":"vars.set","params":{"node":{"literal":"web1"},"key":"workers","value":"8"}})");
  CHECK(set.exit_code == 0);
  CHECK(set.resolved == std::vector<std::string>{"web1"});
  CHECK(slurp(root / "fleet/host_vars/web1.conf") ==
        "# Overrides for web1 (key=value): only what really differs from group_vars.conf.\n"
        "workers=8\n");
  // Setting the same value again changes nothing.
  const std::string fp = env.fingerprint(*w);
  CHECK(
      env.act(
             *w,
             R"({"call":"vars.set","params":{"node":{"literal":"web1"},"key":"workers","value":"8"}})")
          .output.find("unchanged") != std::string::npos);
  CHECK(env.fingerprint(*w) == fp);

  CallOutput unset =
      env.act(*w, R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":"workers"}})");
  CHECK(unset.exit_code == 0);
  CHECK(unset.output.find("web1: workers unset in /fleet/host_vars/web1.conf (was 8)") !=
        std::string::npos);
  CHECK(unset.output.find("web2: workers not set in /fleet/host_vars/web2.conf; unchanged") !=
        std::string::npos);
  CHECK(slurp(root / "fleet/host_vars/web1.conf").find("workers") == std::string::npos);

  CallOutput converge =
      env.act(*w, R"({"call":"fleet.converge","params":{"node":{"literal":"web1"}}})");
  CHECK(converge.exit_code == 0);
  CHECK(converge.output.find("unchanged") != std::string::npos);

  CallOutput write = env.act(
      *w,
      R"({"call":"file.write","params":{"path":{"literal":"/srv/www/release-1/index.html"},"content":"<h1>Acme Shop release 43</h1>"}})");
  CHECK(write.exit_code == 0);
  CHECK(slurp(root / "srv/www/release-1/index.html") == "<h1>Acme Shop release 43</h1>");
  CHECK((fs::status(root / "srv/www/release-1/index.html").permissions() & fs::perms::all) ==
        fs::perms(0644));
  CallOutput no_folder = env.act(
      *w,
      R"({"call":"file.write","params":{"path":{"literal":"/srv/www/hotfix-7/index.html"},"content":"x"}})");
  CHECK(no_folder.exit_code != 0);
  CHECK(no_folder.error.find("its folder does not exist") != std::string::npos);
  CallOutput onto_dir = env.act(
      *w,
      R"({"call":"file.write","params":{"path":{"literal":"/srv/www/current"},"content":"x"}})");
  CHECK(onto_dir.exit_code != 0);
  CHECK(fs::is_directory(root / "srv/www/current"));

  CallOutput chmod = env.act(
      *w,
      R"({"call":"file.chmod","params":{"path":{"literal":"/srv/www/release-1"},"mode":"0750"}})");
  CHECK(chmod.exit_code == 0);
  CHECK((fs::status(root / "srv/www/release-1").permissions() & fs::perms::all) == fs::perms(0750));
  CallOutput lockout = env.act(
      *w,
      R"({"call":"file.chmod","params":{"path":{"literal":"/fleet/inventory.conf"},"mode":"0000"}})");
  CHECK(lockout.exit_code != 0);
  CHECK(lockout.error.find("refused") != std::string::npos);
  // Bits outside 0777 never reach the world, even past the catalog's mask.
  Call suid;
  suid.name = "file.chmod";
  suid.params = {{"mode", std::string("4755")}, {"path", std::string("/srv/www/current")}};
  auto r = w->act(suid);
  REQUIRE(r.ok());
  CHECK(r->exit_code != 0);
  CHECK((fs::status(root / "srv/www/current").permissions() & fs::perms::all) == fs::perms(0755));

  // Undo restores every change above, newest first.
  CallOutput undo = env.act(*w, R"({"call":"journal.undo"})");
  CHECK(undo.exit_code == 0);
  CHECK(undo.output.find("/srv/www/release-1: restored\n") == 0);
  CHECK_FALSE(fs::exists(root / "srv/www/release-1/index.html"));
  CHECK((fs::status(root / "srv/www/release-1").permissions() & fs::perms::all) == fs::perms(0755));
  CHECK(slurp(root / "fleet/host_vars/web1.conf") ==
        slurp(aura::testing::t0_package_dir() / "worlds/common/fleet/host_vars/web1.conf"));
  CHECK(env.act(*w, R"({"call":"journal.undo"})").output ==
        "the journal is empty; nothing to undo\n");
}

TEST_CASE("filetree: run_script fails closed") {
  Env env;
  auto w = env.world("primary");
  const std::string before = env.fingerprint(*w);
  auto r = w->run_script({aura::scenario::Target::Kind::kRole, "web"}, "rm -rf /fleet\n");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUnavailable);
  CHECK(r.status().message() ==
        "scripts need the namespace sandbox, not available in the filetree driver");
  CHECK(env.fingerprint(*w) == before);
}

TEST_CASE("filetree judge gold: every world passes its checks; repeat and undo keep fingerprints") {
  Env env;
  for (const char* id : {"primary", "twin-1"}) {
    CAPTURE(id);
    auto w = env.world(id);
    env.act_all(*w, env.gold());
    CHECK(env.checks(*w) == kAllOkPrimary);
  }
  auto control = env.world("control");
  env.act_all(*control, env.gold());
  CHECK(env.checks(*control) == kAllOkControl);

  // Repeat: the second apply changes nothing and everything still holds.
  auto repeat = env.world("primary");
  env.act_all(*repeat, env.gold());
  const std::string after_apply = env.fingerprint(*repeat);
  env.act_all(*repeat, env.gold());
  CHECK(env.fingerprint(*repeat) == after_apply);
  CHECK(env.checks(*repeat) == kAllOkPrimary);

  // Reversal: the IR's rollback restores the exact pre-apply fingerprint.
  auto reversal = env.world("primary");
  const std::string before = env.fingerprint(*reversal);
  env.act_all(*reversal, env.gold());
  CHECK(env.fingerprint(*reversal) != before);
  env.act_all(*reversal, env.gold_rollback());
  CHECK(env.fingerprint(*reversal) == before);
  CHECK(env.checks(*reversal) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
}

TEST_CASE("filetree: the journal survives re-opening the world") {
  Env env;
  fs::path dir;
  auto w = env.world("primary", &dir);
  const std::string before = env.fingerprint(*w);
  env.act_all(*w, env.gold());
  w.reset();
  auto reopened = env.driver.open(env.m, "primary", dir);
  REQUIRE(reopened.ok());
  env.act_all(**reopened, env.gold_rollback());
  CHECK(env.fingerprint(**reopened) == before);
}

TEST_CASE("filetree judge bad: the hand edit recovers the primary only (RECOVERED_UNPROVEN)") {
  Env env;
  auto primary = env.world("primary");
  auto twin = env.world("twin-1");
  auto control = env.world("control");
  for (World* w : {primary.get(), twin.get(), control.get()}) env.act_all(*w, env.bad());
  CHECK(env.checks(*primary) == Checks{{"fleet-healthy", true}, {"fleet-converged", false}});
  CHECK(env.checks(*twin) == Checks{{"fleet-healthy", false}, {"fleet-converged", false}});
  CHECK(env.checks(*control) == Checks{{"fleet-healthy", true},
                                       {"fleet-converged", false},
                                       {"legit-port-kept", true},
                                       {"canary-kept", true}});
  // It is reversible (the journal covers file.write), so only the properties above fail.
  auto reversal = env.world("primary");
  const std::string before = env.fingerprint(*reversal);
  env.act_all(*reversal, env.bad());
  env.act_all(*reversal, ir_calls(env.judge("bad").ir_json, "rollback"));
  CHECK(env.fingerprint(*reversal) == before);
}

// Wrong fixes of the families in SCENARIO-GUIDE.md, each with the property that refuses it.
TEST_CASE("filetree wrong fix, symptom patch: a literal web2 unset leaves the twin broken") {
  Env env;
  const std::vector<std::string> fix = {
      R"({"call":"vars.unset","params":{"node":{"literal":"web2"},"key":"app_root"}})",
      R"({"call":"fleet.converge","params":{"node":{"literal":"web2"}}})"};
  auto primary = env.world("primary");
  auto twin = env.world("twin-1");
  env.act_all(*primary, fix);
  env.act_all(*twin, fix);
  CHECK(env.checks(*primary) == kAllOkPrimary);
  CHECK(env.checks(*twin) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
}

TEST_CASE("filetree wrong fix, overbroad: resetting every override breaks the control") {
  Env env;
  const std::vector<std::string> fix = {
      R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":"app_root"}})",
      R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":"port"}})",
      R"({"call":"fleet.converge","params":{"node":{"role":"web"}}})"};
  auto primary = env.world("primary");
  auto twin = env.world("twin-1");
  auto control = env.world("control");
  for (World* w : {primary.get(), twin.get(), control.get()}) env.act_all(*w, fix);
  CHECK(env.checks(*primary) == kAllOkPrimary);
  CHECK(env.checks(*twin) == kAllOkPrimary);
  CHECK(env.checks(*control) == Checks{{"fleet-healthy", true},
                                       {"fleet-converged", true},
                                       {"legit-port-kept", false},
                                       {"canary-kept", false}});
}

TEST_CASE("filetree wrong fix, overbroad: pinning app_root on every node kills the canary") {
  Env env;
  const std::vector<std::string> fix = {
      R"({"call":"vars.set","params":{"node":{"role":"web"},"key":"app_root","value":"/srv/www/current"}})",
      R"({"call":"fleet.converge","params":{"node":{"role":"web"}}})"};
  auto twin = env.world("twin-1");
  auto control = env.world("control");
  env.act_all(*twin, fix);
  env.act_all(*control, fix);
  CHECK(env.checks(*twin) == kAllOkPrimary);
  CHECK(env.checks(*control) == Checks{{"fleet-healthy", true},
                                       {"fleet-converged", true},
                                       {"legit-port-kept", true},
                                       {"canary-kept", false}});
}

TEST_CASE(
    "filetree wrong fix, restart only: re-rendering without fixing the source recovers nothing") {
  Env env;
  auto primary = env.world("primary");
  const std::string before = env.fingerprint(*primary);
  CallOutput out =
      env.act(*primary, R"({"call":"fleet.converge","params":{"node":{"role":"web"}}})");
  CHECK(out.exit_code == 0);
  CHECK(env.fingerprint(*primary) == before);
  CHECK(env.checks(*primary) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
}

TEST_CASE(
    "filetree wrong fix, privilege shortcut: opening up the release folder changes nothing "
    "served") {
  Env env;
  auto primary = env.world("primary");
  (void)env.act(
      *primary,
      R"({"call":"file.chmod","params":{"path":{"literal":"/srv/www/release-1"},"mode":"0777"}})");
  CHECK(env.checks(*primary) == Checks{{"fleet-healthy", false}, {"fleet-converged", true}});
}

TEST_CASE(
    "filetree wrong fix, irreversible: a hand-written rollback does not restore the fingerprint") {
  Env env;
  auto w = env.world("primary");
  const std::string before = env.fingerprint(*w);
  env.act_all(*w, env.gold());
  // Puts the override back but leaves web2's re-rendered app.conf: not the pre-apply world.
  (void)env.act(
      *w,
      R"({"call":"vars.set","params":{"node":{"literal":"web2"},"key":"app_root","value":"/srv/www/release-1"}})");
  CHECK(env.fingerprint(*w) != before);
  CHECK(env.checks(*w) == Checks{{"fleet-healthy", true}, {"fleet-converged", false}});
}
