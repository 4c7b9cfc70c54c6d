// Every refusal that names an unknown name lists the valid ones (engine/scenario/names.h): the
// call validator (calls, parameters, target terms, enumerations) and the IR validator
// (hypotheses, evidence, checks), several unknown names of each kind, and lists bounded at
// kMaxListedNames with "and N more".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/intervention/intervention_ir.h"
#include "engine/scenario/call.h"
#include "engine/scenario/names.h"
#include "tests/intervention/test_manifest.h"

using namespace aura;
using namespace aura::scenario;
using aura::testing::call_spec;
using aura::testing::check;
using aura::testing::param;
using aura::testing::term;
using aura::testing::test_manifest;

namespace {

std::string call_refusal(const Manifest& m, const std::vector<CallSpec>& catalog,
                         std::string_view json) {
  auto call = parse_call(json, catalog, m, "c");
  REQUIRE_FALSE(call.ok());
  CHECK(call.status().code() == ErrorCode::kInvalidArgument);
  return call.status().message();
}

// An IR whose member `from` (exactly once in the valid document) is replaced by `to`.
std::string ir_refusal(const Manifest& m, std::string_view from, std::string_view to) {
  std::string ir =
      R"({"v":1,"hypothesis":"stale-override","claim":"c","evidence":["ev-1"],"falsifier":"f",)"
      R"("actions":[{"call":"journal.undo"}],"postconditions":["fleet-healthy"],)"
      R"("invariants":["fleet-converged"],"rollback":[{"call":"journal.undo"}]})";
  const size_t at = ir.find(from);
  REQUIRE(at != std::string::npos);
  ir.replace(at, from.size(), to);
  intervention::IrContext context;
  context.manifest = &m;
  context.unlocked_evidence = {"ev-1", "ev-2", "ev-10"};
  auto parsed = intervention::parse_intervention(ir, context);
  REQUIRE_FALSE(parsed.ok());
  return parsed.status().message();
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A manifest with `n` probes, `n` node selectors and `n` enumeration values, named by number.
Manifest wide_manifest(size_t n) {
  Manifest m = test_manifest();
  auto key = param("key", ParamType::kString);
  for (size_t i = 0; i < n; ++i) {
    m.probes.push_back(call_spec("probe.p" + std::to_string(i), {}));
    m.targets.push_back(term("sel-" + std::to_string(i), "node", true));
    key.enum_values.push_back("k" + std::to_string(i));
    m.checks.push_back(check("post-" + std::to_string(i), CheckKind::kPostcondition));
  }
  m.actions.push_back(call_spec("vars.pick", {key}));
  return m;
}

}  // namespace

TEST_CASE("names: a list is bounded at kMaxListedNames and says how many more there are") {
  std::vector<std::string> names;
  CHECK(name_list(names) == "none");
  for (int i = 0; i < 3; ++i) names.push_back("n" + std::to_string(i));
  CHECK(name_list(names) == "n0, n1, n2");
  CHECK(name_list(names, 2) == "n0, n1 and 1 more");
  names.clear();
  for (size_t i = 0; i < kMaxListedNames + 7; ++i) names.push_back("n" + std::to_string(i));
  const std::string listed = name_list(names);
  CHECK(listed.ends_with("n49 and 7 more"));
  CHECK_FALSE(has(listed, "n50"));
}

TEST_CASE("names: the nearest name is suggested only for a likely typo") {
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("file.read", "file.raed") == 2);
  const std::vector<std::string> probes = {"file.read", "file.stat", "dir.list", "path.namei"};
  CHECK(nearest_name("file.raed", probes) == "file.read");
  CHECK(nearest_name("dir.lst", probes) == "dir.list");
  CHECK(nearest_name("path.nemai", probes) == "path.namei");
  CHECK_FALSE(nearest_name("http.get", probes).has_value());   // not a typo of any
  CHECK_FALSE(nearest_name("ab", {"cd"}).has_value());         // everything is near a short name
  CHECK_FALSE(nearest_name("file.read", probes).has_value());  // a valid name needs no hint
}

TEST_CASE("unknown names: each unknown call lists the catalog it was looked up in") {
  const Manifest m = test_manifest();
  for (std::string_view name : {"file.delete", "file.chmood", "service.stop", "nginx.reload"}) {
    CAPTURE(name);
    const std::string got =
        call_refusal(m, m.actions, R"({"call":")" + std::string(name) + R"("})");
    CHECK(has(got, "is not offered by this scenario"));
    CHECK(has(got, "its actions: vars.unset, file.chmod, service.restart, journal.undo"));
  }
  CHECK(has(call_refusal(m, m.actions, R"({"call":"file.chmood"})"), "(did you mean file.chmod?)"));
  for (std::string_view name : {"file.raed", "file.write", "net.listening"}) {
    CAPTURE(name);
    const std::string got = call_refusal(m, m.probes, R"({"call":")" + std::string(name) + R"("})");
    CHECK(has(got, "; its probes: file.read"));
  }
  // A name that is in the other catalog is called what it is.
  CHECK(has(call_refusal(m, m.probes, R"({"call":"journal.undo"})"),
            "\"journal.undo\" is an action of this scenario, not a probe"));
  CHECK(has(call_refusal(m, m.actions, R"({"call":"file.read","params":{"path":"/fleet/a"}})"),
            "\"file.read\" is a probe of this scenario, not an action"));
  // Not even a call name: the valid ones still.
  CHECK(has(call_refusal(m, m.actions, R"({"call":"chmod"})"),
            "\"chmod\" is not a call name; its actions: vars.unset"));
}

TEST_CASE("unknown names: unknown parameters list the call's parameters") {
  const Manifest m = test_manifest();
  const std::string base = R"({"call":"file.chmod","params":{"path":"/fleet/a","mode":"0640",)";
  for (std::string_view p : {"recursve", "owner", "modes"}) {
    CAPTURE(p);
    const std::string got = call_refusal(m, m.actions, base + "\"" + std::string(p) + "\":1}}");
    CHECK(has(got, "unknown parameter of file.chmod"));
    CHECK(has(got, "its parameters: path, mode, recursive"));
  }
  CHECK(
      has(call_refusal(m, m.actions, base + R"("recursve":true}})"), "(did you mean recursive?)"));
  CHECK(has(call_refusal(m, m.actions, R"({"call":"journal.undo","params":{"all":true}})"),
            "unknown parameter of journal.undo; it takes none"));
}

TEST_CASE("unknown names: unknown target terms list the terms of the parameter's kind") {
  const Manifest m = test_manifest();
  for (std::string_view target : {R"({"role":"db"})", R"({"role":"webs"})",
                                  R"({"selector":"stale-root"})", R"({"selector":"web2"})"}) {
    CAPTURE(target);
    const std::string got = call_refusal(
        m, m.actions,
        R"({"call":"vars.unset","params":{"key":"port","node":)" + std::string(target) + "}}");
    CHECK(has(got, "no target term named"));
    // vars.unset's node takes no literal; terms of other kinds (app, broken-units) are not listed.
    CHECK(has(got, "; the terms of kind node: role web, selector stale-app-root"));
    CHECK_FALSE(has(got, "broken-units"));
    CHECK_FALSE(has(got, "literal"));
  }
  // Where a literal is allowed, the name is shown as the literal it may have been meant as.
  const std::string got = call_refusal(
      m, m.actions, R"({"call":"service.restart","params":{"service":{"role":"nginx"}}})");
  CHECK(has(got,
            "the terms of kind service: role app, selector broken-units, or "
            "{\"literal\":\"nginx\"}"));
  CHECK(has(call_refusal(m, m.actions,
                         R"({"call":"vars.unset","params":{"key":"port","node":{"role":"webb"}}})"),
            "(did you mean web?)"));
}

TEST_CASE("unknown names: an unknown enumeration value lists the allowed ones") {
  const Manifest m = test_manifest();
  for (std::string_view key : {"colour", "app-root", "ports"}) {
    CAPTURE(key);
    const std::string got =
        call_refusal(m, m.actions,
                     R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":")" +
                         std::string(key) + "\"}}");
    CHECK(has(got, "is not one of: app_root, port"));
  }
}

TEST_CASE("unknown names: the IR's hypotheses, evidence and checks list the valid ones") {
  const Manifest m = test_manifest();
  for (std::string_view h : {"dns", "stale-overide", "bad_release"}) {
    CAPTURE(h);
    const std::string got = ir_refusal(m, R"("stale-override")", "\"" + std::string(h) + "\"");
    CHECK(has(got, "$.hypothesis: "));
    CHECK(has(got, "; its hypotheses: stale-override, bad-release"));
  }
  CHECK(has(ir_refusal(m, R"("stale-override")", R"("stale-overide")"),
            "(did you mean stale-override?)"));
  for (std::string_view e : {"ev-3", "ev-9", "ir-1"}) {
    CAPTURE(e);
    const std::string got = ir_refusal(m, R"(["ev-1"])", "[\"" + std::string(e) + "\"]");
    // In the order the probes unlocked them.
    CHECK(has(got, "is not unlocked in this attempt; unlocked so far: ev-1, ev-2, ev-10"));
  }
  for (std::string_view c : {"disk-ok", "fleet-healty", "served"}) {
    CAPTURE(c);
    std::string got = ir_refusal(m, R"(["fleet-healthy"])", "[\"" + std::string(c) + "\"]");
    CHECK(has(got, "is not a check of this scenario"));
    CHECK(has(got, "; its postconditions: fleet-healthy, web-content"));
    got = ir_refusal(m, R"(["fleet-converged"])", "[\"" + std::string(c) + "\"]");
    CHECK(has(got, "; its invariants: fleet-converged"));
  }
  CHECK(has(ir_refusal(m, R"(["fleet-healthy"])", R"(["fleet-healty"])"),
            "(did you mean fleet-healthy?)"));
  // An unknown action inside the IR, and an unknown term in it: the same lists as a lone call.
  CHECK(has(ir_refusal(m, R"("actions":[{"call":"journal.undo"}])",
                       R"("actions":[{"call":"file.delete"}])"),
            "$.actions[0].call: \"file.delete\" is not offered by this scenario; its actions: "
            "vars.unset, file.chmod, service.restart, journal.undo"));
}

TEST_CASE("unknown names: long lists stop at kMaxListedNames and say how many more") {
  const Manifest m = wide_manifest(60);
  // 61 probes (file.read and 60 more): 50 listed, 11 more.
  std::string got = call_refusal(m, m.probes, R"({"call":"probe.none"})");
  CHECK(has(got, "its probes: file.read, probe.p0, "));
  CHECK(has(got, "probe.p48 and 11 more"));
  CHECK_FALSE(has(got, "probe.p49"));
  // 62 node terms (web, stale-app-root and 60 selectors).
  got = call_refusal(m, m.actions,
                     R"({"call":"vars.unset","params":{"key":"port","node":{"role":"none"}}})");
  CHECK(has(got, "selector sel-47 and 12 more"));
  // 60 enumeration values.
  got = call_refusal(m, m.actions, R"({"call":"vars.pick","params":{"key":"zz"}})");
  CHECK(has(got, "k49 and 10 more"));
  // 62 postconditions.
  got = ir_refusal(m, R"(["fleet-healthy"])", R"(["none"])");
  CHECK(has(got, "post-47 and 12 more"));
}
