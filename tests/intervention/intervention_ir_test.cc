#include "engine/intervention/intervention_ir.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/intervention/test_manifest.h"

using namespace aura;
using namespace aura::intervention;
using aura::scenario::Target;
using aura::testing::test_manifest;

namespace {

// The README example's shape: every member present, one call action and one rollback action.
const std::string kValid =
    R"({"v":1,"hypothesis":"stale-override","claim":"web2 overrides app_root",)"
    R"("evidence":["ev-1","ev-3"],"falsifier":"web2 has no app_root override",)"
    R"("actions":[{"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},)"
    R"("key":"app_root"}}],"postconditions":["fleet-healthy"],"invariants":["fleet-converged"],)"
    R"("rollback":[{"call":"journal.undo","params":{}}]})";

// kValid with `from` (which must occur exactly once) replaced by `to`.
std::string with(std::string_view from, std::string_view to, std::string base = kValid) {
  size_t at = base.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  REQUIRE_MESSAGE(base.find(from, at + 1) == std::string::npos, from);
  base.replace(at, from.size(), to);
  return base;
}

// kValid with `action` appended as actions[1].
std::string with_action(std::string_view action) {
  return with(R"("key":"app_root"}}])", R"("key":"app_root"}},)" + std::string(action) + "]");
}

IrContext context_for(const scenario::Manifest& manifest) {
  IrContext context;
  context.manifest = &manifest;
  context.unlocked_evidence = {"ev-1", "ev-2", "ev-3"};
  return context;
}

std::string refusal(std::string_view json, bool allow_scripts = false) {
  const scenario::Manifest manifest = test_manifest(allow_scripts);
  auto ir = parse_intervention(json, context_for(manifest));
  if (ir.ok()) return "<accepted>";
  CHECK(ir.status().code() == ErrorCode::kInvalidArgument);
  return ir.status().message();
}

struct Case {
  std::string name;
  std::string json;
  std::string message;  // the exact message
};

void check_cases(const std::vector<Case>& cases, bool allow_scripts = false) {
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(refusal(c.json, allow_scripts) == c.message);
  }
}

const std::string kScript = R"({"script":"#!/bin/sh\nrm -f /fleet/host_vars/web2.conf\n",)"
                            R"("target":{"role":"web"}})";

}  // namespace

TEST_CASE("ir: a valid document parses with every field") {
  const scenario::Manifest manifest = test_manifest();
  auto ir = parse_intervention(kValid, context_for(manifest));
  REQUIRE_MESSAGE(ir.ok(), ir.status().message());
  CHECK(ir->version == 1);
  CHECK(ir->hypothesis == "stale-override");
  CHECK(ir->claim == "web2 overrides app_root");
  CHECK(ir->evidence == std::vector<std::string>{"ev-1", "ev-3"});
  CHECK(ir->falsifier == "web2 has no app_root override");
  REQUIRE(ir->actions.size() == 1);
  CHECK_FALSE(ir->actions[0].is_script);
  CHECK(
      scenario::call_json(ir->actions[0].call) ==
      R"({"call":"vars.unset","params":{"key":"app_root","node":{"selector":"stale-app-root"}}})");
  CHECK(ir->postconditions == std::vector<std::string>{"fleet-healthy"});
  CHECK(ir->invariants == std::vector<std::string>{"fleet-converged"});
  REQUIRE(ir->rollback.size() == 1);
  CHECK(ir->rollback[0].call.name == "journal.undo");
  CHECK(scripts_of(*ir).empty());
}

TEST_CASE("ir: postconditions and invariants are optional and default to empty") {
  const scenario::Manifest manifest = test_manifest();
  std::string json =
      with(R"("postconditions":["fleet-healthy"],"invariants":["fleet-converged"],)", "");
  auto ir = parse_intervention(json, context_for(manifest));
  REQUIRE_MESSAGE(ir.ok(), ir.status().message());
  CHECK(ir->postconditions.empty());
  CHECK(ir->invariants.empty());
}

TEST_CASE("ir: a script action carries its unescaped text, target and SHA-256") {
  const scenario::Manifest manifest = test_manifest(/*allow_scripts=*/true);
  // "abc" is the FIPS 180-2 test message: its digest is known independently of this code.
  std::string json = with_action(R"({"script":"a\u0062c","target":{"literal":"web2"}})");
  json = with(R"("rollback":[)", std::string(R"("rollback":[)") + kScript + ",", json);
  auto ir = parse_intervention(json, context_for(manifest));
  REQUIRE_MESSAGE(ir.ok(), ir.status().message());
  REQUIRE(ir->actions.size() == 2);
  const Action& action = ir->actions[1];
  CHECK(action.is_script);
  CHECK(action.script == "abc");
  CHECK(action.script_target == Target{Target::Kind::kLiteral, "web2"});
  CHECK(to_hex(action.script_sha256) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  const Action& undo = ir->rollback[0];
  CHECK(undo.is_script);
  CHECK(undo.script == "#!/bin/sh\nrm -f /fleet/host_vars/web2.conf\n");
  CHECK(undo.script_target == Target{Target::Kind::kRole, "web"});
  CHECK(undo.script_sha256 == sha256(std::string_view(undo.script)));

  auto scripts = scripts_of(*ir);
  REQUIRE(scripts.size() == 2);
  CHECK(scripts[0] == &ir->actions[1]);
  CHECK(scripts[1] == &ir->rollback[0]);
}

TEST_CASE("ir: the digest covers the exact bytes, whitespace included") {
  CHECK(intervention_digest(kValid) == sha256(std::string_view(kValid)));
  std::string spaced = with(R"("v":1,)", R"("v": 1,)");
  CHECK(refusal(spaced) == "<accepted>");
  CHECK(intervention_digest(spaced) != intervention_digest(kValid));
  CHECK(to_hex(intervention_digest("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("ir: wrong member types are refused with the member's path") {
  check_cases({
      {"root array", "[]", "$: expected an object, found an array"},
      {"root string", R"("v")", "$: expected an object, found a string"},
      {"v string", with(R"("v":1)", R"("v":"1")"), "$.v: expected the integer 1, found a string"},
      {"v float", with(R"("v":1)", R"("v":1.0)"), "$.v: expected the integer 1, found a number"},
      {"hypothesis", with(R"("stale-override")", "[]"),
       "$.hypothesis: expected a string, found an array"},
      {"claim", with(R"("web2 overrides app_root")", "42"),
       "$.claim: expected a string, found an integer"},
      {"evidence", with(R"(["ev-1","ev-3"])", R"("ev-1")"),
       "$.evidence: expected an array, found a string"},
      {"evidence item", with(R"(["ev-1","ev-3"])", R"(["ev-1",3])"),
       "$.evidence[1]: expected a string, found an integer"},
      {"falsifier", with(R"("web2 has no app_root override")", "null"),
       "$.falsifier: expected a string, found null"},
      {"actions",
       with(
           R"([{"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},"key":"app_root"}}])",
           R"("vars.unset")"),
       "$.actions: expected an array, found a string"},
      {"actions object",
       with(R"("rollback":[{"call":"journal.undo","params":{}}])",
            R"("rollback":{"call":"journal.undo","params":{}})"),
       "$.rollback: expected an array, found an object"},
      {"action item", with_action(R"("journal.undo")"),
       "$.actions[1]: expected an action object, found a string"},
      {"postconditions", with(R"(["fleet-healthy"])", R"("fleet-healthy")"),
       "$.postconditions: expected an array, found a string"},
      {"invariants item", with(R"(["fleet-converged"])", "[true]"),
       "$.invariants[0]: expected a string, found a boolean"},
      {"params", with_action(R"({"call":"journal.undo","params":[]})"),
       "$.actions[1].params: expected an object, found an array"},
  });
}

TEST_CASE("ir: unknown, duplicate, missing and misplaced members are refused") {
  check_cases({
      {"unknown root member", with(R"("v":1,)", R"("v":1,"notes":"x",)"),
       "$.notes: unknown member"},
      {"unknown member shown printable", with(R"("v":1,)", R"("v":1,"a\"b\u0001":0,)"),
       "$.a?b?: unknown member"},
      {"unknown action member", with_action(R"({"call":"journal.undo","why":"x"})"),
       "$.actions[1].why: unknown member"},
      {"duplicate root member", with(R"("v":1,)", R"("v":1,"claim":"x",)"),
       "$.claim: duplicate member"},
      {"duplicate via escape", with(R"("v":1,)", R"("v":1,"cl\u0061im":"x",)"),
       "$.claim: duplicate member"},
      {"duplicate param", with(R"("key":"app_root")", R"("key":"app_root","key":"port")"),
       "$.actions[0].params.key: duplicate member"},
      {"duplicate in target",
       with(R"({"selector":"stale-app-root"})",
            R"({"selector":"stale-app-root","selector":"web"})"),
       "$.actions[0].params.node.selector: duplicate member"},
      {"duplicate in rollback params", with(R"("params":{}}])", R"("params":{"a":1,"a":2}}])"),
       "$.rollback[0].params.a: duplicate member"},
      {"v missing", with(R"("v":1,)", ""), "$.v: missing (the first member must be \"v\": 1)"},
      {"v is 2", with(R"("v":1)", R"("v":2)"),
       "$.v: unsupported version 2 (this validator reads version 1)"},
      {"v is 0", with(R"("v":1)", R"("v":0)"),
       "$.v: unsupported version 0 (this validator reads version 1)"},
      {"v not first",
       with(R"("v":1,"hypothesis":"stale-override")", R"("hypothesis":"stale-override","v":1)"),
       "$.v: must be the first member"},
      {"hypothesis missing", with(R"("hypothesis":"stale-override",)", ""),
       "$.hypothesis: missing"},
      {"claim missing", with(R"("claim":"web2 overrides app_root",)", ""), "$.claim: missing"},
      {"evidence missing", with(R"("evidence":["ev-1","ev-3"],)", ""), "$.evidence: missing"},
      {"falsifier missing", with(R"("falsifier":"web2 has no app_root override",)", ""),
       "$.falsifier: missing"},
      {"rollback missing", with(R"(,"rollback":[{"call":"journal.undo","params":{}}])", ""),
       "$.rollback: missing"},
      {"empty object", "{}", "$.v: missing (the first member must be \"v\": 1)"},
  });
}

TEST_CASE("ir: hypothesis, claim, evidence and falsifier are checked against the attempt") {
  std::string long_claim(kMaxTextBytes + 1, 'c');
  check_cases({
      {"unknown hypothesis", with(R"("stale-override")", R"("dns")"),
       "$.hypothesis: \"dns\" is not a hypothesis of this scenario; its hypotheses: "
       "stale-override, bad-release"},
      {"uncited evidence", with(R"(["ev-1","ev-3"])", "[]"),
       "$.evidence: empty (cite at least one piece of evidence a probe unlocked)"},
      {"locked evidence", with(R"(["ev-1","ev-3"])", R"(["ev-1","ev-9"])"),
       "$.evidence[1]: \"ev-9\" is not unlocked in this attempt; unlocked so far: ev-1, ev-2, "
       "ev-3"},
      {"evidence cited twice", with(R"(["ev-1","ev-3"])", R"(["ev-1","ev-3","ev-1"])"),
       "$.evidence[2]: \"ev-1\" is cited twice (also $.evidence[0])"},
      {"evidence is a blob id of another attempt", with(R"(["ev-1","ev-3"])", R"(["ir-1"])"),
       "$.evidence[0]: \"ir-1\" is not unlocked in this attempt; unlocked so far: ev-1, ev-2, "
       "ev-3"},
      {"empty falsifier", with(R"("web2 has no app_root override")", R"("")"),
       "$.falsifier: empty (say what observation would prove the claim wrong)"},
      {"blank falsifier", with(R"("web2 has no app_root override")", R"(" \n\t ")"),
       "$.falsifier: empty (say what observation would prove the claim wrong)"},
      {"empty claim", with(R"("web2 overrides app_root")", R"("")"),
       "$.claim: empty (say what you believe the cause is)"},
      {"claim over the text bound", with(R"("web2 overrides app_root")", "\"" + long_claim + "\""),
       "$.claim: 4097 bytes, more than the maximum 4096"},
      {"claim with a control character", with(R"("web2 overrides app_root")", R"("a\u001bb")"),
       "$.claim: contains a control character"},
  });
  // The text bound is inclusive; line breaks and tabs are text.
  CHECK(refusal(with(R"("web2 overrides app_root")",
                     "\"" + std::string(kMaxTextBytes, 'c') + "\"")) == "<accepted>");
  CHECK(refusal(with(R"("web2 overrides app_root")", R"("line 1\nline 2\tend")")) == "<accepted>");

  std::string many = "[";
  for (size_t i = 0; i <= kMaxEvidence; ++i)
    many += (i ? ",\"ev-" : "\"ev-") + std::to_string(i) + "\"";
  many += "]";
  CHECK(refusal(with(R"(["ev-1","ev-3"])", many)) == "$.evidence: more than 64 elements");
}

TEST_CASE("ir: actions and rollback are refused by index and parameter path") {
  std::string too_many = "[";
  for (size_t i = 0; i <= kMaxActions; ++i)
    too_many += (i ? ",{" : "{") + std::string(R"("call":"journal.undo"})");
  too_many += "]";
  const std::string chmod = R"({"call":"file.chmod","params":{"mode":"0640","path":)";
  check_cases({
      {"empty actions",
       with(
           R"([{"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},"key":"app_root"}}])",
           "[]"),
       "$.actions: empty (at least one action)"},
      {"empty rollback", with(R"([{"call":"journal.undo","params":{}}])", "[]"),
       "$.rollback: empty (say how to undo the actions)"},
      {"too many rollback actions", with(R"([{"call":"journal.undo","params":{}}])", too_many),
       "$.rollback: more than 32 elements"},
      {"unknown action", with_action(R"({"call":"file.delete","params":{}})"),
       "$.actions[1].call: \"file.delete\" is not offered by this scenario; its actions: "
       "vars.unset, file.chmod, service.restart, journal.undo"},
      {"probe used as an action",
       with_action(R"({"call":"file.read","params":{"path":"/fleet/a"}})"),
       "$.actions[1].call: \"file.read\" is a probe of this scenario, not an action (run it "
       "with 'probe'); its actions: vars.unset, file.chmod, service.restart, journal.undo"},
      {"neither call nor script", with_action(R"({"params":{}})"),
       "$.actions[1]: an action is {\"call\": name, \"params\": {...}} or {\"script\": text, "
       "\"target\": target}"},
      {"unknown param", with_action(R"({"call":"journal.undo","params":{"force":true}})"),
       "$.actions[1].params.force: unknown parameter of journal.undo; it takes none"},
      {"missing required param", with_action(R"({"call":"vars.unset","params":{"key":"port"}})"),
       "$.actions[1].params.node: missing (required)"},
      {"path escape, relative", with_action(chmod + R"("../../etc/shadow"}})"),
       "$.actions[1].params.path: \"../../etc/shadow\" is not a normalised absolute path"},
      {"path escape, dot-dot", with_action(chmod + R"("/fleet/../etc/shadow"}})"),
       "$.actions[1].params.path: \"/fleet/../etc/shadow\" is not a normalised absolute path"},
      {"path outside prefixes", with_action(chmod + R"("/etc/shadow"}})"),
       "$.actions[1].params.path: \"/etc/shadow\" is not under /fleet/, /nodes/"},
      {"path is the prefix directory", with_action(chmod + R"("/fleet"}})"),
       "$.actions[1].params.path: \"/fleet\" is not under /fleet/, /nodes/"},
      {"path shares the prefix's letters", with_action(chmod + R"("/fleet-old/a"}})"),
       "$.actions[1].params.path: \"/fleet-old/a\" is not under /fleet/, /nodes/"},
      {"bad mode", with_action(R"({"call":"file.chmod","params":{"mode":"9","path":"/fleet/a"}})"),
       "$.actions[1].params.mode: \"9\" is not a mode of 3 or 4 octal digits"},
      {"mode outside mask",
       with_action(R"({"call":"file.chmod","params":{"mode":"0757","path":"/fleet/a"}})"),
       "$.actions[1].params.mode: mode \"0757\" sets bits 0002 outside the allowed mask 0755"},
      {"integer out of range",
       with_action(
           R"({"call":"service.restart","params":{"service":{"role":"app"},"delay_s":600}})"),
       "$.actions[1].params.delay_s: 600 is outside [0, 60]"},
      {"integer as float",
       with_action(
           R"({"call":"service.restart","params":{"service":{"role":"app"},"delay_s":5.0}})"),
       "$.actions[1].params.delay_s: expected an integer, found a number"},
      {"integer as string",
       with_action(
           R"({"call":"service.restart","params":{"service":{"role":"app"},"delay_s":"5"}})"),
       "$.actions[1].params.delay_s: expected an integer, found a string"},
      {"target unknown term", with(R"({"selector":"stale-app-root"})", R"({"selector":"stale"})"),
       "$.actions[0].params.node: no target term named \"stale\"; the terms of kind node: "
       "role web, selector stale-app-root"},
      {"role used as selector", with(R"({"selector":"stale-app-root"})", R"({"selector":"web"})"),
       "$.actions[0].params.node: \"web\" is a role, not a selector (write {\"role\":\"web\"})"},
      {"selector used as role",
       with(R"({"selector":"stale-app-root"})", R"({"role":"stale-app-root"})"),
       "$.actions[0].params.node: \"stale-app-root\" is a selector, not a role (write "
       "{\"selector\":\"stale-app-root\"})"},
      {"target of the wrong kind",
       with(R"({"selector":"stale-app-root"})", R"({"selector":"broken-units"})"),
       "$.actions[0].params.node: \"broken-units\" names a service target; this parameter takes a "
       "node; the terms of kind node: role web, selector stale-app-root"},
      {"literal where forbidden", with(R"({"selector":"stale-app-root"})", R"({"literal":"web2"})"),
       "$.actions[0].params.node: a literal target is not allowed here (name a role or selector "
       "of kind node); the terms of kind node: role web, selector stale-app-root"},
      {"rollback param checked too",
       with(R"({"call":"journal.undo","params":{}})",
            R"({"call":"vars.unset","params":{"node":{"role":"app"},"key":"port"}})"),
       "$.rollback[0].params.node: \"app\" names a service target; this parameter takes a node; "
       "the terms of kind node: role web, selector stale-app-root"},
      {"script when scripts are not allowed", with_action(kScript),
       "$.actions[1].script: scripts are not allowed in this scenario (use a catalog action)"},
      {"script in rollback when not allowed",
       with(R"({"call":"journal.undo","params":{}})", kScript),
       "$.rollback[0].script: scripts are not allowed in this scenario (use a catalog action)"},
  });
}

TEST_CASE("ir: script actions are bounded and their target must be a node") {
  std::string big_script(kMaxScriptBytes + 1, 'x');
  check_cases(
      {
          {"empty script", with_action(R"({"script":"","target":{"role":"web"}})"),
           "$.actions[1].script: empty"},
          {"script with NUL", with_action(R"({"script":"echo\u0000rm","target":{"role":"web"}})"),
           "$.actions[1].script: contains a NUL byte"},
          {"script over its bound",
           with_action(R"({"script":")" + big_script + R"(","target":{"role":"web"}})"),
           "$.actions[1].script: longer than 65536 bytes"},
          {"script not a string", with_action(R"({"script":["echo"],"target":{"role":"web"}})"),
           "$.actions[1].script: expected a string, found an array"},
          {"script without target", with_action(R"({"script":"echo"})"),
           "$.actions[1].target: missing"},
          {"script and call",
           with_action(R"({"script":"echo","target":{"role":"web"},"call":"journal.undo"})"),
           "$.actions[1].script: unknown member"},
          {"script target a service", with_action(R"({"script":"echo","target":{"role":"app"}})"),
           "$.actions[1].target: \"app\" names a service target; this parameter takes a node; "
           "the terms of kind node: role web, selector stale-app-root, or {\"literal\":\"...\"}"},
          {"script target unknown", with_action(R"({"script":"echo","target":{"selector":"db"}})"),
           "$.actions[1].target: no target term named \"db\"; the terms of kind node: role web, "
           "selector stale-app-root, or {\"literal\":\"db\"}"},
          {"script target not an object", with_action(R"({"script":"echo","target":"web"})"),
           "$.actions[1].target: expected a target ({\"role\"|\"selector\"|\"literal\": name}), "
           "found a string"},
      },
      /*allow_scripts=*/true);
  CHECK(refusal(with_action(R"({"script":")" + std::string(kMaxScriptBytes, 'x') +
                            R"(","target":{"role":"web"}})"),
                true) == "<accepted>");
}

TEST_CASE("ir: postconditions and invariants must name checks of their own kind, once") {
  check_cases({
      {"postcondition naming an invariant", with(R"(["fleet-healthy"])", R"(["fleet-converged"])"),
       "$.postconditions[0]: \"fleet-converged\" is an invariant check, not a postcondition; its "
       "postconditions: fleet-healthy, web-content"},
      {"invariant naming a postcondition", with(R"(["fleet-converged"])", R"(["fleet-healthy"])"),
       "$.invariants[0]: \"fleet-healthy\" is a postcondition check, not an invariant; its "
       "invariants: fleet-converged"},
      {"unknown check", with(R"(["fleet-healthy"])", R"(["fleet-healthy","disk-ok"])"),
       "$.postconditions[1]: \"disk-ok\" is not a check of this scenario; its postconditions: "
       "fleet-healthy, web-content"},
      {"postcondition twice",
       with(R"(["fleet-healthy"])", R"(["web-content","fleet-healthy","web-content"])"),
       "$.postconditions[2]: \"web-content\" is listed twice (also $.postconditions[0])"},
  });
}

TEST_CASE("ir: oversize documents are refused by size before parsing") {
  // A 10 MB string inside the claim: the document is over the limit before anyone reads it.
  std::string huge_claim =
      with(R"("web2 overrides app_root")", "\"" + std::string(10 << 20, 'a') + "\"");
  CHECK(refusal(huge_claim) == "$: document is " + std::to_string(huge_claim.size()) +
                                   " bytes, over the limit of 262144 (refused before parsing)");
  // A 10 MB document that is not even JSON is refused the same way (so it was never parsed).
  std::string junk(10 << 20, '{');
  CHECK(refusal(junk) ==
        "$: document is 10485760 bytes, over the limit of 262144 (refused before parsing)");
  // One byte over the limit, padded with whitespace.
  std::string padded = kValid + std::string(kMaxIrBytes - kValid.size() + 1, ' ');
  CHECK(refusal(padded).ends_with("over the limit of 262144 (refused before parsing)"));
  CHECK(refusal(kValid + std::string(kMaxIrBytes - kValid.size(), ' ')) == "<accepted>");
}

TEST_CASE("ir: deep nesting is refused by the depth scan without crashing") {
  // 100000 '[' inside a parameter: the scan stops at the first container past kMaxDepth.
  std::string deep = with_action(R"({"call":"journal.undo","params":{"x":)" +
                                 std::string(100000, '[') + std::string(100000, ']') + "}}");
  std::string path = "$.actions[1].params.x";
  for (int i = 0; i < 12; ++i) path += "[0]";  // root, actions, action, params: 4 levels
  CHECK(refusal(deep) == path + ": nesting deeper than 16 levels");

  // Unbalanced: only openers, the parser never sees them.
  CHECK(refusal(std::string(200000, '[')) ==
        "$[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper than 16 levels");

  // Exactly kMaxDepth levels passes the depth checks (and fails later, on the type).
  std::string at_limit = with_action(R"({"call":"journal.undo","params":{"x":)" +
                                     std::string(12, '[') + std::string(12, ']') + "}}");
  CHECK(refusal(at_limit) ==
        "$.actions[1].params.x: unknown parameter of journal.undo; it takes none");
  std::string over = with_action(R"({"call":"journal.undo","params":{"x":)" + std::string(13, '[') +
                                 std::string(13, ']') + "}}");
  CHECK(refusal(over) == path + ": nesting deeper than 16 levels");

  // Brackets inside strings, and escaped quotes before them, are not nesting.
  CHECK(refusal(with(R"("web2 overrides app_root")", "\"\\\"" + std::string(100, '[') + "\"")) ==
        "<accepted>");
}

TEST_CASE("ir: the strict reader's refusals name the JSON path") {
  const std::string undo = R"({"call":"journal.undo","params":{}})";
  check_cases({
      // A duplicate member deep inside a value no schema reads: refused before anything is read.
      {"duplicate deep in a parameter",
       with(undo, R"({"call":"journal.undo","params":{"x":[{"a":{"b":1,"b":2}}]}})"),
       "$.rollback[0].params.x[0].a.b: duplicate member"},
      {"wrong type deep in a target",
       with(R"({"selector":"stale-app-root"})", R"({"selector":["stale-app-root"]})"),
       "$.actions[0].params.node.selector: expected a string, found an array"},
      {"over-deep nesting",
       with(undo, R"({"call":"journal.undo","params":{"x":[[[[[[[[[[[[[1]]]]]]]]]]]]]}})"),
       "$.rollback[0].params.x[0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper than 16 "
       "levels"},
      // Longer than any string an IR may hold (a script, a string parameter): refused by the
      // reader, though the member is unknown.
      {"over-long string",
       with(undo,
            R"({"call":"journal.undo","params":{"note":")" + std::string(65537, 'n') + R"("}})"),
       "$.rollback[0].params.note: longer than 65536 bytes"},
      {"over-long member name",
       with(undo, R"({"call":"journal.undo","params":{")" + std::string(65537, 'n') + R"(":1}})"),
       "$.rollback[0].params." + std::string(64, 'n') + "...: member name longer than 65536 bytes"},
      {"more members than a call has parameters",
       with(undo,
            [] {
              std::string params = R"({"call":"journal.undo","params":{)";
              for (int i = 0; i <= 32; ++i)
                params += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":0";
              return params + "}}";
            }()),
       "$.rollback[0].params: more than 32 members"},
  });
}

TEST_CASE("ir: invalid UTF-8 and invalid JSON are refused") {
  for (std::string_view bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"}) {
    std::string json = with("web2 overrides app_root", "web2 " + std::string(bad));
    std::string got = refusal(json);
    CAPTURE(got);
    CHECK(got == "$: not valid UTF-8");
  }
  CHECK(refusal("").starts_with("$: not JSON ("));
  CHECK(refusal(kValid + "{}").starts_with("$: not JSON ("));
  CHECK(refusal(with(R"("v":1)", R"('v':1)")).starts_with("$: not JSON ("));
}

TEST_CASE("ir: a context without a manifest is a failed precondition") {
  auto ir = parse_intervention(kValid, IrContext{});
  REQUIRE_FALSE(ir.ok());
  CHECK(ir.status().code() == ErrorCode::kFailedPrecondition);
}
