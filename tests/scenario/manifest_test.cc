#include "engine/scenario/manifest.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/scenario/manifest_format.h"
#include "tests/scenario/sample_manifest.h"

using namespace aura;
using namespace aura::scenario;
using aura::testing::replace_one;
using aura::testing::sample_build;
using aura::testing::sample_manifest;
namespace mf = aura::scenario::manifest_format;

namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The sample with its "judge" member (the last one) replaced by `judge_json`.
std::string with_judge(std::string_view judge_json) {
  std::string m = sample_manifest();
  const size_t at = m.find("\"judge\":");
  REQUIRE(at != std::string::npos);
  return m.substr(0, at) + "\"judge\": " + std::string(judge_json) + "\n}\n";
}

// `n` copies of `item`, comma-separated, in brackets.
std::string repeated(std::string_view item, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + std::string(item);
  return out + "]";
}

// The sample with the text from `begin` up to (not including) `end` replaced by `to`.
std::string replace_between(std::string_view begin, std::string_view end, std::string_view to) {
  std::string m = sample_manifest();
  const size_t a = m.find(begin);
  REQUIRE(a != std::string::npos);
  const size_t b = m.find(end, a);
  REQUIRE(b != std::string::npos);
  return m.substr(0, a) + std::string(to) + m.substr(b);
}

// REQUIREs that parsing fails and returns the message.
std::string error_of(const std::string& manifest) {
  auto r = parse_manifest(manifest);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  return r.status().message();
}

struct Case {
  std::string name;
  std::string manifest;
  std::string expected;  // a substring of the message, after "manifest.json: "
};

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string m = error_of(c.manifest);
    CHECK_MESSAGE(m.starts_with("manifest.json: "), m);
    CHECK_MESSAGE(contains(m, "manifest.json: " + c.expected), m);
  }
}

std::string sub(std::string_view from, std::string_view to) {
  return replace_one(sample_manifest(), from, to);
}

// The sample's first action's "key" parameter replaced by `schema`.
std::string key_param(std::string_view schema) {
  return sub(R"("key": {"type": "string", "enum": ["app_root", "port"], "max_bytes": 32})",
             R"("key": )" + std::string(schema));
}

// The sample's first probe's "path" parameter replaced by `schema`.
std::string path_param(std::string_view schema) {
  return sub(R"("path": {"type": "path", "prefixes": ["/fleet/", "/nodes/"], "max_bytes": 256})",
             R"("path": )" + std::string(schema));
}

}  // namespace

TEST_CASE("manifest: the sample parses with every field, default and cross-reference") {
  auto r = parse_manifest(sample_manifest("t0-config-drift", "1.2.0", "tutorial/drift", "Stale"));
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const Manifest& m = *r;
  CHECK(m.schema == 1);
  CHECK(m.id == "t0-config-drift");
  CHECK(m.version == "1.2.0");
  CHECK(m.family == "tutorial/drift");
  CHECK(m.title == "Stale");
  CHECK(m.briefing == "web2 serves yesterday's page.\n\tThe other nodes look fine.");
  CHECK(m.driver == "filetree");
  CHECK(m.probe_budget == 12);
  CHECK_FALSE(m.allow_scripts);

  REQUIRE(m.hypotheses.size() == 2);
  CHECK(m.hypotheses[0].id == "stale-override");
  CHECK(m.hypotheses[1].text == "the current release itself is broken");

  REQUIRE(m.targets.size() == 2);
  CHECK(m.targets[0].name == "web");
  CHECK_FALSE(m.targets[0].selector);
  CHECK(m.targets[0].max_matches == 3);
  CHECK(m.targets[1].selector);
  CHECK(m.targets[1].kind == "node");
  CHECK(m.targets[1].max_matches == 1);  // default
  CHECK(m.find_target("stale-app-root") == &m.targets[1]);
  CHECK(m.find_target("nope") == nullptr);

  REQUIRE(m.worlds.size() == 3);
  CHECK(m.primary() == &m.worlds[0]);
  CHECK(m.control() == &m.worlds[2]);
  REQUIRE(m.twins().size() == 1);
  CHECK(m.twins()[0]->id == "twin-1");
  CHECK(m.worlds[0].build_json ==
        R"({"layers":["worlds/common","worlds/primary"],"selectors":{"stale-app-root":)"
        R"({"kind":"stale_override","var":"app_root","file":"index.html"}}})");
  CHECK(m.worlds[2].description.empty());

  REQUIRE(m.probes.size() == 2);
  const CallSpec* read = m.find_probe("file.read");
  REQUIRE(read == &m.probes[0]);
  CHECK(read->cost == 1);
  CHECK(read->max_output_bytes == 65536);
  REQUIRE(read->params.size() == 1);
  const ParamSchema& path = read->params[0];
  CHECK(path.name == "path");
  CHECK(path.type == ParamType::kPath);
  CHECK(path.required);
  CHECK(path.path_prefixes == std::vector<std::string>{"/fleet/", "/nodes/"});
  CHECK(path.min_bytes == 1);
  CHECK(path.max_bytes == 256);
  CHECK(m.probes[1].cost == 2);
  CHECK(m.probes[1].params[0].description == "the node");
  CHECK(m.find_probe("vars.unset") == nullptr);

  REQUIRE(m.actions.size() == 2);
  const CallSpec* unset = m.find_action("vars.unset");
  REQUIRE(unset == &m.actions[0]);
  CHECK(unset->summary == "remove a host override");
  REQUIRE(unset->params.size() == 2);
  CHECK(unset->params[0].name == "node");  // declaration order kept
  CHECK(unset->params[0].type == ParamType::kTarget);
  CHECK(unset->params[0].target_kind == "node");
  CHECK_FALSE(unset->params[0].allow_literal);
  CHECK(unset->params[0].max_literal_bytes == 128);
  CHECK(unset->params[1].enum_values == std::vector<std::string>{"app_root", "port"});
  CHECK(unset->params[1].max_bytes == 32);
  const CallSpec* chmod = m.find_action("file.chmod");
  REQUIRE(chmod != nullptr);
  CHECK(chmod->params[0].min_bytes == 6);
  CHECK(chmod->params[1].type == ParamType::kMode);
  CHECK(chmod->params[1].mode_mask == 0755);

  REQUIRE(m.checks.size() == 2);
  const CheckSpec* healthy = m.find_check("fleet-healthy");
  REQUIRE(healthy == &m.checks[0]);
  CHECK(healthy->kind == CheckKind::kPostcondition);
  CHECK(healthy->call == "fleet.healthy");
  CHECK(healthy->params_json == R"({"expect_text":"fleet ok"})");
  CHECK(healthy->roles == std::vector<WorldRole>{WorldRole::kPrimary, WorldRole::kTwin});
  CHECK(m.checks[1].kind == CheckKind::kInvariant);
  CHECK(m.checks[1].params_json == "{}");  // default
  CHECK(m.checks[1].roles ==
        std::vector<WorldRole>{WorldRole::kPrimary, WorldRole::kTwin, WorldRole::kControl});

  REQUIRE(m.judge.size() == 2);
  const JudgeCase* gold = m.find_judge("gold");
  REQUIRE(gold == &m.judge[0]);
  CHECK(gold->expect_verdict == "VERIFIED");
  CHECK(gold->probe_calls_json ==
        std::vector<std::string>{
            R"({"call":"file.read","params":{"path":"/fleet/host_vars/web2.conf"}})"});
  CHECK(gold->ir_json == R"({"v":1,"note":"an InterventionIR"})");
  const JudgeCase* bad = m.find_judge("bad");
  REQUIRE(bad != nullptr);
  CHECK(bad->expect_verdict == "NOT_RECOVERED");
  CHECK(bad->probe_calls_json.empty());
  CHECK(bad->ir_json == R"({"v":1})");
}

TEST_CASE("manifest: omitted optional members take their documented defaults") {
  std::string m = sample_manifest();
  m = replace_one(m, "\n  \"probe_budget\": 12,", "");
  m = replace_one(m, "\n  \"allow_scripts\": false,", "");
  m = replace_one(m, R"("cost": 1, "max_output_bytes": 65536,)", "");
  m = replace_one(m, R"(, "max_bytes": 256)", "");
  m = replace_one(m, R"(, "mode_mask": "0755")", "");
  m = replace_one(m, R"(, "allow_literal": false)", "");
  auto r = parse_manifest(m);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->probe_budget == mf::kDefaultProbeBudget);
  CHECK_FALSE(r->allow_scripts);
  CHECK(r->probes[0].cost == 1);
  CHECK(r->probes[0].max_output_bytes == 65536);
  CHECK(r->probes[0].params[0].max_bytes == 256);
  CHECK(r->actions[1].params[1].mode_mask == 07777);
  CHECK(r->actions[0].params[0].allow_literal);
}

TEST_CASE("manifest: explicit values at their bounds are accepted") {
  std::string m = sample_manifest("a", "1", "f", std::string(512, 't'));
  m = replace_one(m, R"("probe_budget": 12)", R"("probe_budget": 1000)");
  m = replace_one(m, R"("allow_scripts": false)", R"("allow_scripts": true)");
  m = replace_one(m, R"("cost": 2)", R"("cost": 100)");
  m = replace_one(m, R"("max_output_bytes": 65536)", R"("max_output_bytes": 1048576)");
  m = replace_one(m, R"("mode_mask": "0755")", R"("mode_mask": "644")");
  m = replace_one(m, R"("max_bytes": 32)", R"("max_bytes": 65536, "min_bytes": 0)");
  m = replace_one(m, R"("prefixes": ["/srv/"])", R"("prefixes": ["/"])");
  m = replace_one(m, R"("roles": ["primary", "twin"])", R"("roles": ["twin", "primary"])");
  auto r = parse_manifest(m);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->title.size() == 512);
  CHECK(r->probe_budget == 1000);
  CHECK(r->allow_scripts);
  CHECK(r->probes[1].cost == 100);
  CHECK(r->actions[1].params[1].mode_mask == 0644);
  CHECK(r->actions[0].params[1].min_bytes == 0);
  CHECK(r->actions[1].params[0].path_prefixes == std::vector<std::string>{"/"});
  CHECK(r->checks[0].roles == std::vector<WorldRole>{WorldRole::kTwin, WorldRole::kPrimary});

  // An integer parameter with the whole int64 range.
  auto i = parse_manifest(
      key_param(R"({"type": "integer", "min": -9223372036854775808, "max": 9223372036854775807})"));
  REQUIRE_MESSAGE(i.ok(), i.status().message());
  CHECK(i->actions[0].params[1].type == ParamType::kInteger);
  CHECK(i->actions[0].params[1].min == INT64_MIN);
  CHECK(i->actions[0].params[1].max == INT64_MAX);
  auto b = parse_manifest(key_param(R"({"type": "boolean", "required": false})"));
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  CHECK(b->actions[0].params[1].type == ParamType::kBoolean);
  CHECK_FALSE(b->actions[0].params[1].required);
}

TEST_CASE("manifest: names of roles and check kinds") {
  CHECK(world_role_name(WorldRole::kPrimary) == "primary");
  CHECK(world_role_name(WorldRole::kTwin) == "twin");
  CHECK(world_role_name(WorldRole::kControl) == "control");
  CHECK(check_kind_name(CheckKind::kPostcondition) == "postcondition");
  CHECK(check_kind_name(CheckKind::kInvariant) == "invariant");
}

TEST_CASE("manifest: unknown members are refused at every level, naming the path") {
  check_cases({
      {"top level", sub(R"("schema": 1,)", R"("schema": 1, "foo": 2,)"), "foo: unknown member"},
      {"hypothesis", sub(R"({"id": "bad-release",)", R"({"id": "bad-release", "x": 1,)"),
       "hypotheses[1].x: unknown member"},
      {"target", sub(R"("max_matches": 3})", R"("max_matches": 3, "color": "red"})"),
       "targets[0].color: unknown member"},
      {"world",
       sub(R"({"id": "control", "role": "control",)",
           R"({"id": "control", "role": "control", "seed": 7,)"),
       "worlds[2].seed: unknown member"},
      {"probe", sub(R"("cost": 1,)", R"("cost": 1, "timeout": 5,)"),
       "probes[0].timeout: unknown member"},
      {"action takes no cost",
       sub(R"({"call": "vars.unset",)", R"({"call": "vars.unset", "cost": 1,)"),
       "actions[0].cost: unknown member"},
      {"parameter", sub(R"("description": "the node"})", R"("description": "the node", "x": 1})"),
       "probes[1].params.node.x: unknown member"},
      {"parameter member of another type",
       path_param(R"({"type": "path", "prefixes": ["/fleet/"], "enum": ["/fleet/a"]})"),
       "probes[0].params.path.enum: not a member of a path parameter"},
      {"check", sub(R"("call": "fleet.converged"})", R"("call": "fleet.converged", "foo": 1})"),
       "checks[1].foo: unknown member"},
      {"judge",
       with_judge(R"({"gold": {"expect": "VERIFIED", "ir": {}}, "bad": {"expect": )"
                  R"("NOT_RECOVERED", "ir": {}}, "ugly": {}})"),
       "judge.ugly: unknown member"},
      {"judge case",
       sub(R"("bad": {"expect": "NOT_RECOVERED",)",
           R"("bad": {"expect": "NOT_RECOVERED", "seed": 1,)"),
       "judge.bad.seed: unknown member"},
  });
}

TEST_CASE("manifest: duplicate members are refused at every level, escaped spellings included") {
  check_cases({
      {"top level", sub(R"("probe_budget": 12,)", R"("probe_budget": 12, "probe_budget": 13,)"),
       "probe_budget: duplicate member"},
      {"escaped spelling",
       sub(R"("probe_budget": 12,)", R"("probe_budget": 12, "probe\u005fbudget": 13,)"),
       "probe_budget: duplicate member"},
      {"inside a world's build",
       sub(R"({"layers": ["worlds/common", "worlds/primary"],)",
           R"({"layers": ["worlds/common"], "layers": [],)"),
       "worlds[0].build.layers: duplicate member"},
      {"inside a judge IR", sub(R"("ir": {"v": 1}})", R"("ir": {"v": 1, "v": 2}})"),
       "judge.bad.ir.v: duplicate member"},
      {"a parameter declared twice",
       sub(R"("description": "the node"}})",
           R"("description": "the node"}, "node": {"type": "boolean"}})"),
       "probes[1].params.node: duplicate member"},
      {"inside check params",
       sub(R"({"expect_text": "fleet ok"})", R"({"expect_text": "fleet ok", "expect_text": "x"})"),
       "checks[0].params.expect_text: duplicate member"},
  });
}

TEST_CASE("manifest: wrong types are refused, naming the path and what was found") {
  check_cases({
      {"document", "[]", "expected a JSON object, found an array"},
      {"not JSON", "{\"schema\": 1,", "not valid JSON"},
      {"probe_budget", sub(R"("probe_budget": 12)", R"("probe_budget": "12")"),
       "probe_budget: expected an integer, found a string"},
      {"allow_scripts", sub(R"("allow_scripts": false)", R"("allow_scripts": 0)"),
       "allow_scripts: expected a boolean, found an integer"},
      {"title", sub(R"("title": "A web fleet serves a stale page")", R"("title": ["A web"])"),
       "title: expected a string, found an array"},
      {"a fractional cost", sub(R"("cost": 1,)", R"("cost": 1.0,)"),
       "probes[0].cost: expected an integer, found a number"},
      {"hypotheses",
       sub(R"({"id": "bad-release", "text": "the current release itself is broken"})",
           R"("bad-release")"),
       "hypotheses[1]: expected an object, found a string"},
      {"roles", sub(R"("roles": ["primary", "twin"])", R"("roles": "primary")"),
       "checks[0].roles: expected an array, found a string"},
      {"build", sub(R"("build": )" + sample_build("control"), R"("build": [])"),
       "worlds[2].build: expected an object, found an array"},
      {"check params", sub(R"("params": {"expect_text": "fleet ok"})", R"("params": "fleet ok")"),
       "checks[0].params: expected an object, found a string"},
      {"call params",
       sub(R"("params": {"node": {"type": "target", "target_kind": "node", "description": "the node"}})",
           R"("params": 1)"),
       "probes[1].params: expected an object, found an integer"},
      {"judge probe",
       sub(R"("probes": [{"call": "file.read", "params": {"path": "/fleet/host_vars/web2.conf"}}])",
           R"("probes": ["file.read"])"),
       "judge.gold.probes[0]: expected an object, found a string"},
      {"judge ir", sub(R"("ir": {"v": 1}})", R"("ir": [1]})"),
       "judge.bad.ir: expected an object, found an array"},
      {"parameter schema", path_param("\"path\""),
       "probes[0].params.path: expected an object, found a string"},
  });
}

TEST_CASE("manifest: the schema member must be 1 and come first") {
  check_cases({
      {"schema 2", sub(R"("schema": 1)", R"("schema": 2)"), "schema: 2 is not a supported schema"},
      {"schema missing", sub("\"schema\": 1,", ""), "schema: missing (required)"},
      {"schema second",
       sub(R"("schema": 1,
  "id": "t0-sample",)",
           R"("id": "t0-sample",
  "schema": 1,)"),
       "schema: must be the first member"},
      {"schema text", sub(R"("schema": 1)", R"("schema": "1")"),
       "schema: expected an integer, found a string"},
  });
}

TEST_CASE("manifest: package fields, briefing and driver follow their patterns and bounds") {
  check_cases({
      {"id", sub(R"("id": "t0-sample")", R"("id": "Bad_ID")"),
       "id: \"Bad_ID\" must match [a-z0-9][a-z0-9._-]{0,63}"},
      {"id missing", sub(R"("id": "t0-sample",)", ""), "id: missing (required)"},
      {"version", sub(R"("version": "1.0.0")", R"("version": "1 0")"), "version: \"1 0\" must be"},
      {"family empty", sub(R"("family": "tutorial/config-drift")", R"("family": "")"),
       "family: 0 bytes; must be 1..128"},
      {"title too long", sample_manifest("a", "1", "f", std::string(513, 't')),
       "title: 513 bytes; must be 1..512"},
      {"title control", sample_manifest("a", "1", "f", "tab\\there"),
       "title: contains a control character"},
      {"briefing too long",
       replace_between("\"briefing\": ", "\n  \"driver\"",
                       "\"briefing\": \"" + std::string(8193, 'b') + "\","),
       "briefing: 8193 bytes; must be 1..8192"},
      {"briefing control", sub(R"(yesterday's page.)", R"(yesterday's\u0007page.)"),
       "briefing: contains a control character other than newline and tab"},
      {"driver", sub(R"("driver": "filetree")", R"("driver": "File Tree")"),
       "driver: \"File Tree\" must match [a-z][a-z0-9_-]{0,31}"},
      {"probe_budget zero", sub(R"("probe_budget": 12)", R"("probe_budget": 0)"),
       "probe_budget: 0 is out of range [1, 1000]"},
      {"probe_budget huge", sub(R"("probe_budget": 12)", R"("probe_budget": 18446744073709551615)"),
       "probe_budget: out of range [1, 1000]"},
  });
}

TEST_CASE("manifest: hypotheses, targets and worlds are counted, unique and well-formed") {
  const std::string hyp = R"({"id": "h", "text": "t"})";
  check_cases({
      {"one hypothesis",
       replace_between("\"hypotheses\": [", "\n  \"targets\"", "\"hypotheses\": [" + hyp + "],"),
       "hypotheses: 1 entries; needs at least 2"},
      {"17 hypotheses",
       replace_between("\"hypotheses\": [", "\n  \"targets\"",
                       "\"hypotheses\": " + repeated(hyp, 17) + ","),
       "hypotheses: 17 entries, more than the limit of 16"},
      {"duplicate hypothesis", sub(R"("id": "bad-release")", R"("id": "stale-override")"),
       "hypotheses[1].id: id \"stale-override\" is already used by hypotheses[0]"},
      {"hypothesis text",
       sub(R"("text": "the current release itself is broken")",
           "\"text\": \"" + std::string(1025, 'x') + "\""),
       "hypotheses[1].text: 1025 bytes; must be 1..1024"},
      {"target type", sub(R"("type": "role")", R"("type": "group")"),
       "targets[0].type: \"group\" is not one of \"role\", \"selector\""},
      {"target name", sub(R"("name": "web")", "\"name\": \"" + std::string(65, 'w') + "\""),
       "targets[0].name: \"" + std::string(64, 'w') + "...\" must match [a-z][a-z0-9_-]{0,63}"},
      {"duplicate target", sub(R"("name": "stale-app-root")", R"("name": "web")"),
       "targets[1].name: name \"web\" is already used by targets[0]"},
      {"max_matches", sub(R"("max_matches": 3)", R"("max_matches": 1025)"),
       "targets[0].max_matches: 1025 is out of range [1, 1024]"},
      {"65 targets",
       replace_between(
           "\"targets\": [", "\n  \"worlds\"",
           "\"targets\": " +
               repeated(R"({"name":"t","type":"role","kind":"k","description":"d"})", 65) + ","),
       "targets: 65 entries, more than the limit of 64"},
      {"no primary", sub(R"("role": "primary")", R"("role": "twin")"),
       "worlds: needs exactly one world with role \"primary\" (found 0)"},
      {"no twin", sub(R"("role": "twin")", R"("role": "control")"),
       "worlds: needs at least one world with role \"twin\" (found 0)"},
      {"two primaries", sub(R"("role": "twin")", R"("role": "primary")"),
       "worlds: needs exactly one world with role \"primary\" (found 2)"},
      {"no control", sub(R"("role": "control")", R"("role": "twin")"),
       "worlds: needs exactly one world with role \"control\" (found 0)"},
      {"unknown role", sub(R"("role": "control")", R"("role": "backup")"),
       "worlds[2].role: \"backup\" is not one of \"primary\", \"twin\", \"control\""},
      {"duplicate world", sub(R"("id": "twin-1")", R"("id": "primary")"),
       "worlds[1].id: id \"primary\" is already used by worlds[0]"},
      {"world build missing", sub(R"(, "build": )" + sample_build("control"), ""),
       "worlds[2].build: missing (required)"},
      {"33 worlds",
       replace_between(
           "\"worlds\": [", "\n  \"probes\"",
           "\"worlds\": " + repeated(R"({"id":"w","role":"twin","build":{}})", 33) + ","),
       "worlds: 33 entries, more than the limit of 32"},
      {"two worlds",
       replace_between(
           "\"worlds\": [", "\n  \"probes\"",
           "\"worlds\": " + repeated(R"({"id":"w","role":"twin","build":{}})", 2) + ","),
       "worlds: 2 entries; needs at least 3"},
  });
}

TEST_CASE("manifest: catalogs are counted, their call names unique and well-formed") {
  const std::string probe = R"({"call":"x.y","summary":"s"})";
  std::string many_params = "{";
  for (int i = 0; i < 33; ++i) {
    many_params += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":{\"type\":\"boolean\"}";
  }
  many_params += "}";
  check_cases({
      {"65 probes",
       replace_between("\"probes\": [", "\n  \"actions\"",
                       "\"probes\": " + repeated(probe, 65) + ","),
       "probes: 65 entries, more than the limit of 64"},
      {"no probes", replace_between("\"probes\": [", "\n  \"actions\"", "\"probes\": [],"),
       "probes: 0 entries; needs at least 1"},
      {"65 actions",
       replace_between("\"actions\": [", "\n  \"checks\"",
                       "\"actions\": " + repeated(probe, 65) + ","),
       "actions: 65 entries, more than the limit of 64"},
      {"duplicate probe", sub(R"("call": "fleet.effective")", R"("call": "file.read")"),
       "probes[1].call: call \"file.read\" is already used by probes[0]"},
      {"call name one segment", sub(R"("call": "fleet.effective")", R"("call": "effective")"),
       "probes[1].call: \"effective\" is not a call name"},
      {"call name upper case", sub(R"("call": "vars.unset")", R"("call": "vars.Unset")"),
       "actions[0].call: \"vars.Unset\" is not a call name"},
      {"call name too long",
       sub(R"("call": "vars.unset")", "\"call\": \"vars." + std::string(61, 'u') + "\""),
       "actions[0].call: \"vars."},
      {"summary missing", sub(R"("summary": "remove a host override",)", ""),
       "actions[0].summary: missing (required)"},
      {"summary too long",
       sub(R"("summary": "remove a host override")",
           "\"summary\": \"" + std::string(257, 's') + "\""),
       "actions[0].summary: 257 bytes; must be 1..256"},
      {"cost", sub(R"("cost": 2)", R"("cost": 101)"),
       "probes[1].cost: 101 is out of range [1, 100]"},
      {"max_output_bytes", sub(R"("max_output_bytes": 65536)", R"("max_output_bytes": 0)"),
       "probes[0].max_output_bytes: 0 is out of range [1, 1048576]"},
      {"33 parameters in one call",
       sub(R"("params": {"node": {"type": "target", "target_kind": "node", "description": "the node"}})",
           "\"params\": " + many_params),
       "probes[1].params: 33 parameters, more than the limit of 32"},
  });
}

TEST_CASE("manifest: each parameter type's schema is checked") {
  check_cases({
      {"unknown type", key_param(R"({"type": "float"})"),
       "actions[0].params.key.type: \"float\" is not one of"},
      {"type missing", key_param(R"({"required": true})"),
       "actions[0].params.key.type: missing (required)"},
      {"bad name", sub(R"("key": {"type")", R"("Key": {"type")"),
       "actions[0].params.Key: parameter name must match [a-z][a-z0-9_]{0,31}"},
      // integer
      {"integer min > max", key_param(R"({"type": "integer", "min": 5, "max": 1})"),
       "actions[0].params.key.min: 5 is more than max 1"},
      {"integer max missing", key_param(R"({"type": "integer", "min": 0})"),
       "actions[0].params.key.max: missing (required)"},
      {"integer beyond int64",
       key_param(R"({"type": "integer", "min": 0, "max": 18446744073709551615})"),
       "actions[0].params.key.max: out of range"},
      {"integer fractional bound", key_param(R"({"type": "integer", "min": 0, "max": 1.5})"),
       "actions[0].params.key.max: expected an integer, found a number"},
      // string
      {"string enum repeated", key_param(R"({"type": "string", "enum": ["a", "a"]})"),
       "actions[0].params.key.enum[1]: \"a\" is listed twice"},
      {"string enum empty", key_param(R"({"type": "string", "enum": []})"),
       "actions[0].params.key.enum: 0 entries; needs at least 1"},
      {"string enum beyond max_bytes",
       key_param(R"({"type": "string", "max_bytes": 3, "enum": ["port"]})"),
       "actions[0].params.key.enum[0]: 4 bytes; must be 1..3"},
      {"string enum control", key_param(R"({"type": "string", "enum": ["a\nb"]})"),
       "actions[0].params.key.enum[0]: contains a control character"},
      {"string min > max", key_param(R"({"type": "string", "min_bytes": 9, "max_bytes": 8})"),
       "actions[0].params.key.min_bytes: 9 is more than max_bytes 8"},
      {"string max_bytes too big", key_param(R"({"type": "string", "max_bytes": 65537})"),
       "actions[0].params.key.max_bytes: 65537 is out of range [1, 65536]"},
      {"string with prefixes", key_param(R"({"type": "string", "prefixes": ["/"]})"),
       "actions[0].params.key.prefixes: not a member of a string parameter"},
      {"too many enum values",
       key_param(R"({"type": "string", "enum": )" + repeated("\"v\"", 65) + "}"),
       "actions[0].params.key.enum: 65 entries, more than the limit of 64"},
      // path
      {"path prefix relative", path_param(R"({"type": "path", "prefixes": ["fleet/"]})"),
       "probes[0].params.path.prefixes[0]: \"fleet/\" must be absolute and end in '/'"},
      {"path prefix without slash",
       path_param(R"({"type": "path", "prefixes": ["/fleet/", "/nodes"]})"),
       "probes[0].params.path.prefixes[1]: \"/nodes\" must be absolute and end in '/'"},
      {"path prefix not normalised",
       path_param(R"({"type": "path", "prefixes": ["/fleet/../etc/"]})"),
       "probes[0].params.path.prefixes[0]: \"/fleet/../etc/\" must be absolute"},
      {"path prefix double slash", path_param(R"({"type": "path", "prefixes": ["//fleet/"]})"),
       "probes[0].params.path.prefixes[0]: \"//fleet/\" must be absolute"},
      {"path prefixes missing", path_param(R"({"type": "path"})"),
       "probes[0].params.path.prefixes: missing (required)"},
      {"path prefixes empty", path_param(R"({"type": "path", "prefixes": []})"),
       "probes[0].params.path.prefixes: 0 entries; needs at least 1"},
      {"path prefix repeated", path_param(R"({"type": "path", "prefixes": ["/a/", "/a/"]})"),
       "probes[0].params.path.prefixes[1]: \"/a/\" is listed twice"},
      {"path prefix longer than max_bytes",
       path_param(R"({"type": "path", "prefixes": ["/fleet/"], "max_bytes": 7})"),
       "probes[0].params.path.prefixes[0]: no path under \"/fleet/\" fits max_bytes 7"},
      {"path min_bytes zero", path_param(R"({"type": "path", "prefixes": ["/"], "min_bytes": 0})"),
       "probes[0].params.path.min_bytes: 0 is out of range [1, 4096]"},
      {"path max_bytes too big",
       path_param(R"({"type": "path", "prefixes": ["/"], "max_bytes": 4097})"),
       "probes[0].params.path.max_bytes: 4097 is out of range [1, 4096]"},
      // mode
      {"mode mask not octal", sub(R"("mode_mask": "0755")", R"("mode_mask": "0855")"),
       "actions[1].params.mode.mode_mask: \"0855\" is not 3 or 4 octal digits"},
      {"mode mask too short", sub(R"("mode_mask": "0755")", R"("mode_mask": "75")"),
       "actions[1].params.mode.mode_mask: \"75\" is not 3 or 4 octal digits"},
      {"mode mask a number", sub(R"("mode_mask": "0755")", R"("mode_mask": 493)"),
       "actions[1].params.mode.mode_mask: expected a string, found an integer"},
      // target
      {"target kind nobody has",
       sub(R"("target_kind": "node", "description": "the node")",
           R"("target_kind": "service", "description": "the node")"),
       "probes[1].params.node.target_kind: no target term has kind \"service\""},
      {"target kind missing",
       sub(R"("target_kind": "node", "description": "the node")", R"("description": "the node")"),
       "probes[1].params.node.target_kind: missing (required)"},
      {"target max_literal_bytes", sub(R"("allow_literal": false)", R"("max_literal_bytes": 0)"),
       "actions[0].params.node.max_literal_bytes: 0 is out of range [1, 1024]"},
      {"target allow_literal", sub(R"("allow_literal": false)", R"("allow_literal": "no")"),
       "actions[0].params.node.allow_literal: expected a boolean, found a string"},
      // boolean
      {"boolean with bounds", key_param(R"({"type": "boolean", "min": 0})"),
       "actions[0].params.key.min: not a member of a boolean parameter"},
      {"required not a boolean", key_param(R"({"type": "boolean", "required": 1})"),
       "actions[0].params.key.required: expected a boolean, found an integer"},
  });
}

TEST_CASE("manifest: checks are unique, well-formed and cover every world role") {
  const std::string check = R"({"id":"c","kind":"postcondition","call":"fleet.healthy"})";
  check_cases({
      {"unknown role", sub(R"("roles": ["primary", "twin"])", R"("roles": ["primary", "staging"])"),
       "checks[0].roles[1]: \"staging\" is not a world role"},
      {"role repeated",
       sub(R"("roles": ["primary", "twin"])", R"("roles": ["primary", "primary"])"),
       "checks[0].roles[1]: \"primary\" is listed twice"},
      {"no roles", sub(R"("roles": ["primary", "twin"])", R"("roles": [])"),
       "checks[0].roles: 0 entries; needs at least 1"},
      {"kind", sub(R"("kind": "invariant")", R"("kind": "assertion")"),
       "checks[1].kind: \"assertion\" is not one of \"postcondition\", \"invariant\""},
      {"call name", sub(R"("call": "fleet.converged")", R"("call": "fleet")"),
       "checks[1].call: \"fleet\" is not a call name"},
      {"duplicate id", sub(R"("id": "fleet-converged")", R"("id": "fleet-healthy")"),
       "checks[1].id: id \"fleet-healthy\" is already used by checks[0]"},
      {"reserved id", sub(R"("id": "fleet-converged")", R"("id": "world.fingerprint")"),
       "checks[1].id: \"world.fingerprint\" is reserved"},
      {"bad id", sub(R"("id": "fleet-converged")", R"("id": "Fleet")"),
       "checks[1].id: \"Fleet\" must match [a-z][a-z0-9_.-]{0,63}"},
      {"no postcondition", sub(R"("kind": "postcondition")", R"("kind": "invariant")"),
       "checks: needs at least one postcondition that applies to role \"primary\""},
      {"postcondition not on the primary",
       sub(R"("roles": ["primary", "twin"])", R"("roles": ["twin"])"),
       "checks: needs at least one postcondition that applies to role \"primary\""},
      {"control not covered",
       sub(R"("call": "fleet.converged"})", R"("call": "fleet.converged", "roles": ["primary"]})"),
       "checks: no check applies to role \"control\""},
      {"65 checks",
       replace_between("\"checks\": [", "\n  \"judge\"",
                       "\"checks\": " + repeated(check, 65) + ","),
       "checks: 65 entries, more than the limit of 64"},
      {"oversize params",
       sub(R"({"expect_text": "fleet ok"})",
           "{\"expect_text\": \"" + std::string(mf::kMaxCheckParamsBytes, 'x') + "\"}"),
       "checks[0].params: 16402 bytes minified, more than the limit of 16384"},
  });
}

// The sample with `policies` (a JSON array) before its checks, and its two checks replaced by
// `checks` (a JSON array's members).
std::string with_policies(std::string_view policies, std::string_view checks) {
  return replace_between(
      "\"checks\": [", "\n  \"judge\"",
      "\"policies\": " + std::string(policies) + ",\n  \"checks\": [" + std::string(checks) + "],");
}

TEST_CASE("manifest: a policy is stated once, and every check naming it reads it") {
  const std::string policies =
      R"([{"name": "release", "description": "what every node serves",
           "params": {"expect_text": "fleet ok", "paths": "/srv/a /srv/b"}},
          {"name": "port", "description": "where", "params": {"port": 8081}}])";
  SUBCASE("its members come first, then the check's own, one object") {
    auto m = parse_manifest(with_policies(
        policies,
        R"({"id": "healthy", "kind": "postcondition", "call": "fleet.healthy", "policy": "release",
            "params": {"from": "web1"}},
           {"id": "both", "kind": "invariant", "call": "fleet.converged",
            "policy": ["release", "port"]})"));
    REQUIRE_MESSAGE(m.ok(), m.status().message());
    REQUIRE(m->policies.size() == 2);
    CHECK(m->policies[0].param_names == std::vector<std::string>{"expect_text", "paths"});
    CHECK(m->find_policy("port") != nullptr);
    CHECK(m->checks[0].policies == std::vector<std::string>{"release"});
    CHECK(m->checks[0].params_json ==
          R"({"expect_text":"fleet ok","paths":"/srv/a /srv/b","from":"web1"})");
    CHECK(m->checks[1].policies == std::vector<std::string>{"release", "port"});
    CHECK(m->checks[1].params_json ==
          R"({"expect_text":"fleet ok","paths":"/srv/a /srv/b","port":8081})");
  }
  const std::string healthy =
      R"({"id": "healthy", "kind": "postcondition", "call": "fleet.healthy", "policy": "release"})";
  const std::string both =
      R"(, {"id": "port", "kind": "invariant", "call": "fleet.converged", "policy": "port"})";
  check_cases({
      {"a check restating a member of its policy",
       with_policies(policies,
                     R"({"id": "healthy", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": "release", "params": {"expect_text": "other"}})" +
                         both),
       "checks[0].policy: \"expect_text\" is stated by policy \"release\" and by the check's "
       "params: a policy is stated once"},
      {"two policies stating one member",
       with_policies(R"([{"name": "a", "description": "a", "params": {"port": 1}},
                         {"name": "b", "description": "b", "params": {"port": 2}}])",
                     R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": ["a", "b"]})"),
       "checks[0].policy[1]: \"port\" is stated by policy \"b\" and by policy \"a\""},
      {"one path in two policies",
       with_policies(R"([{"name": "a", "description": "a", "params": {"paths": "/srv/a /srv/b"}},
                         {"name": "b", "description": "b", "params": {"path": "/srv/b"}}])",
                     R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": ["a", "b"]})"),
       "policies[1].params: \"/srv/b\" is also stated by policy \"a\": a path's policy is stated "
       "once"},
      {"a policy no check reads", with_policies(policies, healthy),
       "policies[1]: \"port\" is read by no check"},
      {"an unknown policy",
       with_policies(policies, R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                                   "policy": ["release", "ports"]})" +
                                   both),
       "checks[0].policy[1]: \"ports\" is not a policy of the package"},
      {"a policy listed twice",
       with_policies(policies, R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                                   "policy": ["release", "release"]})" +
                                   both),
       "checks[0].policy[1]: \"release\" is listed twice"},
      {"a policy with no params",
       with_policies(R"([{"name": "a", "description": "a", "params": {}}])",
                     R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": "a"})"),
       "policies[0].params: 1..16 members"},
      {"a member name that is no word",
       with_policies(R"([{"name": "a", "description": "a", "params": {"Port": 1}}])",
                     R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": "a"})"),
       "policies[0].params: \"Port\" must match"},
      {"two policies of one name",
       with_policies(R"([{"name": "a", "description": "a", "params": {"port": 1}},
                         {"name": "a", "description": "b", "params": {"path": "/x"}}])",
                     R"({"id": "c", "kind": "postcondition", "call": "fleet.healthy",
                         "policy": "a"})"),
       "policies[1].name: name \"a\" is already used by policies[0]"},
  });
}

TEST_CASE("manifest: the judge needs gold and bad with their expected verdicts") {
  const std::string gold = R"("gold": {"expect": "VERIFIED", "ir": {"v": 1}})";
  const std::string bad = R"("bad": {"expect": "RECOVERED_UNPROVEN", "ir": {"v": 1}})";
  auto ok = parse_manifest(with_judge("{" + gold + ", " + bad + "}"));
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->find_judge("bad")->expect_verdict == "RECOVERED_UNPROVEN");
  check_cases({
      {"gold missing", with_judge("{" + bad + "}"), "judge.gold: missing (required)"},
      {"bad missing", with_judge("{" + gold + "}"), "judge.bad: missing (required)"},
      {"judge absent", replace_between(",\n  \"judge\":", "\n}\n", ""),
       "judge: missing (required)"},
      {"gold expect", with_judge(R"({"gold": {"expect": "NOT_RECOVERED", "ir": {}}, )" + bad + "}"),
       "judge.gold.expect: \"NOT_RECOVERED\" is not one of \"VERIFIED\""},
      {"bad expect", with_judge("{" + gold + R"(, "bad": {"expect": "VERIFIED", "ir": {}}})"),
       "judge.bad.expect: \"VERIFIED\" is not one of \"RECOVERED_UNPROVEN\", \"NOT_RECOVERED\""},
      {"expect missing", with_judge("{" + gold + R"(, "bad": {"ir": {}}})"),
       "judge.bad.expect: missing (required)"},
      {"ir missing", with_judge("{" + gold + R"(, "bad": {"expect": "NOT_RECOVERED"}})"),
       "judge.bad.ir: missing (required)"},
      {"17 probes",
       with_judge(R"({"gold": {"expect": "VERIFIED", "ir": {}, "probes": )" +
                  repeated(R"({"call":"file.read"})", 17) + "}, " + bad + "}"),
       "judge.gold.probes: 17 entries, more than the limit of 16"},
      {"judge not an object", with_judge("[]"), "judge: expected an object, found an array"},
  });
}

TEST_CASE("manifest: nesting, document size and every truncation are refused") {
  std::string deep;
  for (int i = 0; i < 30; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 30; ++i) deep += "}";
  const std::string m = sub(sample_build("primary"), deep);
  const std::string e = error_of(m);
  CHECK_MESSAGE(contains(e, "manifest.json: worlds[0].build.a.a."), e);
  CHECK_MESSAGE(contains(e, "nesting deeper than 24 levels"), e);

  // A document of brackets far deeper than any parser's stack is refused before parsing.
  const std::string brackets(200000, '[');
  CHECK_MESSAGE(contains(error_of(brackets), "nesting deeper than 24 levels"), error_of(brackets));

  std::string big = sample_manifest();
  big.insert(big.size() - 3, std::string(mf::kMaxManifestBytes, ' '));
  CHECK_MESSAGE(contains(error_of(big), "more than the limit of 1048576"), error_of(big));

  const std::string sample = sample_manifest();
  for (size_t n = 0; n + 1 < sample.size(); n += 13) {
    CAPTURE(n);
    CHECK_FALSE(parse_manifest(sample.substr(0, n)).ok());
  }
}

TEST_CASE("manifest: a judge case may vary by seed, picked as build variants are") {
  const std::string gold = R"("gold": {"expect": "VERIFIED", "ir": {"v": 1}})";
  auto ok = parse_manifest(with_judge(
      "{" + gold +
      R"(, "bad": {"expect": "RECOVERED_UNPROVEN", "variants": [{"ir": {"v": 1, "n": "web2"}}, {"probes": [{"call":"file.read"}], "ir": {"v": 1, "n": "app-c"}}]}})"));
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  const JudgeCase* bad = ok->find_judge("bad");
  REQUIRE(bad->variants.size() == 2);
  CHECK(bad->ir_json == R"({"v":1,"n":"web2"})");  // the first variant's
  CHECK(bad->for_seed(0).ir_json == R"({"v":1,"n":"web2"})");
  CHECK(bad->for_seed(5).ir_json == R"({"v":1,"n":"app-c"})");
  CHECK(bad->for_seed(5).probe_calls_json == std::vector<std::string>{R"({"call":"file.read"})"});
  CHECK(bad->for_seed(5).expect_verdict == "RECOVERED_UNPROVEN");
  CHECK(&ok->find_judge("gold")->for_seed(3) == ok->find_judge("gold"));
  check_cases({
      {"variants beside ir",
       with_judge("{" + gold +
                  R"(, "bad": {"expect": "NOT_RECOVERED", "ir": {}, "variants": [{"ir": {}}]}})"),
       "judge.bad.variants: stands instead of probes and ir, not beside them"},
      {"no variant",
       with_judge("{" + gold + R"(, "bad": {"expect": "NOT_RECOVERED", "variants": []}})"),
       "judge.bad.variants"},
      {"variant without ir",
       with_judge("{" + gold + R"(, "bad": {"expect": "NOT_RECOVERED", "variants": [{}]}})"),
       "judge.bad.variants[0].ir: missing (required)"},
      {"variant with expect",
       with_judge(
           "{" + gold +
           R"(, "bad": {"expect": "NOT_RECOVERED", "variants": [{"ir": {}, "expect": "VERIFIED"}]}})"),
       "judge.bad.variants[0].expect"},
  });
}

TEST_CASE("manifest: requires names the panel's capability ids the worlds need") {
  // Absent: nothing declared (the panel shows such a lab unavailable, docs/CAPABILITIES.md).
  auto none = parse_manifest(sample_manifest());
  REQUIRE_MESSAGE(none.ok(), none.status().message());
  CHECK_FALSE(none->requirements.has_value());

  const auto with_requires = [](std::string_view requires_json) {
    return sub(R"("allow_scripts": false,)",
               R"("allow_scripts": false, "requires": )" + std::string(requires_json) + ",");
  };
  auto r = parse_manifest(with_requires(
      R"({"capabilities": ["openat2", "tool_ansible-playbook"], "optional": ["sched_ext"]})"));
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r->requirements.has_value());
  CHECK(r->requirements->capabilities ==
        std::vector<std::string>{"openat2", "tool_ansible-playbook"});
  CHECK(r->requirements->optional == std::vector<std::string>{"sched_ext"});
  // "optional" may be left out; an empty list declares that nothing is needed.
  auto empty = parse_manifest(with_requires(R"({"capabilities": []})"));
  REQUIRE_MESSAGE(empty.ok(), empty.status().message());
  REQUIRE(empty->requirements.has_value());
  CHECK(empty->requirements->capabilities.empty());
  CHECK(empty->requirements->optional.empty());

  check_cases({
      {"unknown capability", with_requires(R"({"capabilities": ["openat2", "tool_docker"]})"),
       "requires.capabilities[1]: \"tool_docker\" is not a capability the panel measures"},
      {"unknown optional capability",
       with_requires(R"({"capabilities": [], "optional": ["ebpf"]})"),
       "requires.optional[0]: \"ebpf\" is not a capability the panel measures"},
      {"listed twice", with_requires(R"({"capabilities": ["kvm", "kvm"]})"),
       "requires.capabilities[1]: \"kvm\" is listed twice"},
      {"optional and required", with_requires(R"({"capabilities": ["kvm"], "optional": ["kvm"]})"),
       "requires.optional[0]: \"kvm\" is also required"},
      {"capabilities missing", with_requires(R"({"optional": ["kvm"]})"),
       "requires.capabilities: missing (required)"},
      {"unknown member", with_requires(R"({"capabilities": [], "kernel": "6.1"})"),
       "requires.kernel: unknown member"},
      {"not an object", with_requires(R"(["kvm"])"),
       "requires: expected an object, found an array"},
      {"an id that is not a string", with_requires(R"({"capabilities": [7]})"),
       "requires.capabilities[0]: expected a string, found an integer"},
      {"too many", with_requires(R"({"capabilities": )" + repeated("\"kvm\"", 65) + "}"),
       "requires.capabilities: 65 entries, more than the limit of 64"},
      {"duplicate member", with_requires(R"({"capabilities": [], "capabilities": []})"),
       "requires.capabilities: duplicate member"},
  });
}
