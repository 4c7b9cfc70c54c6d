#include "engine/scenario/call.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/intervention/test_manifest.h"

using namespace aura;
using namespace aura::scenario;
using aura::testing::test_manifest;

namespace {

Result<Call> parse_action(std::string_view json, std::string_view path = "actions[1]") {
  static const Manifest manifest = test_manifest();
  return parse_call(json, manifest.actions, manifest, path);
}

// The refusal's message, or a marker that the call was accepted.
std::string refusal(std::string_view json, std::string_view path = "actions[1]") {
  auto call = parse_action(json, path);
  if (call.ok()) return "<accepted>";
  CHECK(call.status().code() == ErrorCode::kInvalidArgument);
  return call.status().message();
}

std::string chmod(std::string_view path_json, std::string_view mode_json = "\"0640\"") {
  return R"({"call":"file.chmod","params":{"path":)" + std::string(path_json) + R"(,"mode":)" +
         std::string(mode_json) + "}}";
}

std::string restart(std::string_view extra) {
  return R"({"call":"service.restart","params":{"service":{"role":"app"})" + std::string(extra) +
         "}}";
}

std::string unset(std::string_view node_json) {
  return R"({"call":"vars.unset","params":{"key":"app_root","node":)" + std::string(node_json) +
         "}}";
}

}  // namespace

TEST_CASE("call: a valid call parses with its parameters sorted by name and typed") {
  auto call =
      parse_action(R"({"params":{"recursive":true,"path":"/fleet/web2/app.conf","mode":"0640"},)"
                   R"("call":"file.chmod"})");
  REQUIRE_MESSAGE(call.ok(), call.status().message());
  CHECK(call->name == "file.chmod");
  REQUIRE(call->params.size() == 3);
  CHECK(call->params[0].first == "mode");
  CHECK(call->params[1].first == "path");
  CHECK(call->params[2].first == "recursive");
  CHECK(std::get<std::string>(*call->find("path")) == "/fleet/web2/app.conf");
  CHECK(std::get<std::string>(*call->find("mode")) == "0640");
  CHECK(std::get<bool>(*call->find("recursive")) == true);
  CHECK(call->find("owner") == nullptr);

  auto restart_call = parse_action(restart(R"(,"delay_s":60,"note":"after deploy")"));
  REQUIRE_MESSAGE(restart_call.ok(), restart_call.status().message());
  CHECK(std::get<int64_t>(*restart_call->find("delay_s")) == 60);
  CHECK(std::get<Target>(*restart_call->find("service")) == Target{Target::Kind::kRole, "app"});
}

TEST_CASE("call: params may be omitted only when no parameter is required") {
  auto undo = parse_action(R"({"call":"journal.undo"})");
  REQUIRE_MESSAGE(undo.ok(), undo.status().message());
  CHECK(undo->params.empty());
  CHECK(refusal(R"({"call":"service.restart"})") ==
        "actions[1]: params.service: missing (required)");
  // Optional parameters stay absent rather than defaulted.
  auto bare = parse_action(restart(""));
  REQUIRE(bare.ok());
  CHECK(bare->params.size() == 1);
}

TEST_CASE("call: every refusal names the JSON path after the caller's name for the call") {
  struct Case {
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"[]", "actions[1]: expected an object, found an array"},
      {R"({"params":{}})", "actions[1]: call: missing"},
      {R"({"call":7})", "actions[1]: call: expected a string, found an integer"},
      {R"({"call":"File.Chmod"})",
       "actions[1]: call: \"File.Chmod\" is not a call name (did you mean file.chmod?); its "
       "actions: vars.unset, file.chmod, service.restart, journal.undo"},
      {R"({"call":"journal"})",
       "actions[1]: call: \"journal\" is not a call name; its actions: vars.unset, file.chmod, "
       "service.restart, journal.undo"},
      {R"({"call":"journal..undo"})",
       "actions[1]: call: \"journal..undo\" is not a call name (did you mean journal.undo?); its "
       "actions: vars.unset, file.chmod, service.restart, journal.undo"},
      {R"({"call":"file.delete"})",
       "actions[1]: call: \"file.delete\" is not offered by this scenario; its actions: "
       "vars.unset, file.chmod, service.restart, journal.undo"},
      // A probe is not an action, and is named as the probe it is.
      {R"({"call":"file.read","params":{"path":"/fleet/a"}})",
       "actions[1]: call: \"file.read\" is a probe of this scenario, not an action (run it with "
       "'probe'); its actions: vars.unset, file.chmod, service.restart, journal.undo"},
      {R"({"call":"journal.undo","args":{}})", "actions[1]: args: unknown member"},
      {R"({"call":"journal.undo","params":[]})",
       "actions[1]: params: expected an object, found an array"},
      {R"({"call":"journal.undo","params":{"force":true}})",
       "actions[1]: params.force: unknown parameter of journal.undo; it takes none"},
      {R"({"call":"vars.unset","params":{"node":{"role":"web"}}})",
       "actions[1]: params.key: missing (required)"},
      {R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":"port","key":"app_root"}})",
       "actions[1]: params.key: duplicate member"},
      {R"({"call":"journal.undo","call":"journal.undo"})", "actions[1]: call: duplicate member"},
      {R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":"colour"}})",
       "actions[1]: params.key: \"colour\" is not one of: app_root, port"},
      {R"({"call":"vars.unset","params":{"node":{"role":"web"},"key":7}})",
       "actions[1]: params.key: expected a string, found an integer"},
      // Paths.
      {chmod(R"("../../etc/shadow")"),
       "actions[1]: params.path: \"../../etc/shadow\" is not a normalised absolute path"},
      {chmod(R"("/fleet/../etc/shadow")"),
       "actions[1]: params.path: \"/fleet/../etc/shadow\" is not a normalised absolute path"},
      {chmod(R"("/fleet/./a")"),
       "actions[1]: params.path: \"/fleet/./a\" is not a normalised absolute path"},
      {chmod(R"("/fleet//a")"),
       "actions[1]: params.path: \"/fleet//a\" is not a normalised absolute path"},
      {chmod(R"("/fleet/a/")"),
       "actions[1]: params.path: \"/fleet/a/\" is not a normalised absolute path"},
      {chmod(R"("/fleet/a\u0000b")"),
       "actions[1]: params.path: \"/fleet/a\\x00b\" is not a normalised absolute path"},
      {chmod(R"("/fleet/a\nb")"),
       "actions[1]: params.path: \"/fleet/a\\x0ab\" is not a normalised absolute path"},
      {chmod(R"("/etc/shadow")"),
       "actions[1]: params.path: \"/etc/shadow\" is not under /fleet/, /nodes/"},
      {chmod(R"("/fleet")"), "actions[1]: params.path: \"/fleet\" is not under /fleet/, /nodes/"},
      {chmod(R"("/fleetx/a")"),
       "actions[1]: params.path: \"/fleetx/a\" is not under /fleet/, /nodes/"},
      {chmod("\"/fleet/" + std::string(60, 'a') + "\""),
       "actions[1]: params.path: 67 bytes, more than the maximum 64"},
      {chmod("[\"/fleet/a\"]"), "actions[1]: params.path: expected a string, found an array"},
      // Modes.
      {chmod(R"("/fleet/a")", R"("0999")"),
       "actions[1]: params.mode: \"0999\" is not a mode of 3 or 4 octal digits"},
      {chmod(R"("/fleet/a")", R"("07777")"),
       "actions[1]: params.mode: \"07777\" is not a mode of 3 or 4 octal digits"},
      {chmod(R"("/fleet/a")", R"("64")"),
       "actions[1]: params.mode: \"64\" is not a mode of 3 or 4 octal digits"},
      {chmod(R"("/fleet/a")", R"("rw-")"),
       "actions[1]: params.mode: \"rw-\" is not a mode of 3 or 4 octal digits"},
      {chmod(R"("/fleet/a")", "644"),
       "actions[1]: params.mode: expected a string, found an integer"},
      {chmod(R"("/fleet/a")", R"("0777")"),
       "actions[1]: params.mode: mode \"0777\" sets bits 0022 outside the allowed mask 0755"},
      {chmod(R"("/fleet/a")", R"("4755")"),
       "actions[1]: params.mode: mode \"4755\" sets bits 4000 outside the allowed mask 0755"},
      // Integers.
      {restart(R"(,"delay_s":61)"), "actions[1]: params.delay_s: 61 is outside [0, 60]"},
      {restart(R"(,"delay_s":-1)"), "actions[1]: params.delay_s: -1 is outside [0, 60]"},
      {restart(R"(,"delay_s":1.5)"),
       "actions[1]: params.delay_s: expected an integer, found a number"},
      {restart(R"(,"delay_s":1.0)"),
       "actions[1]: params.delay_s: expected an integer, found a number"},
      {restart(R"(,"delay_s":1e1)"),
       "actions[1]: params.delay_s: expected an integer, found a number"},
      {restart(R"(,"delay_s":"5")"),
       "actions[1]: params.delay_s: expected an integer, found a string"},
      {restart(R"(,"delay_s":18446744073709551615)"),
       "actions[1]: params.delay_s: integer out of range [0, 60]"},
      // Booleans and strings.
      {chmod(R"("/fleet/a")", R"("0640","recursive":1)"),
       "actions[1]: params.recursive: expected a boolean, found an integer"},
      {restart(R"(,"note":"")"), "actions[1]: params.note: 0 bytes, fewer than the minimum 1"},
      {restart(R"(,"note":"bell\u0007")"), "actions[1]: params.note: contains a control character"},
      {restart(R"(,"note":"c1\u0085")"), "actions[1]: params.note: contains a control character"},
      // Targets.
      {unset(R"({"role":"db"})"),
       "actions[1]: params.node: no target term named \"db\"; the terms of kind node: role web, "
       "selector stale-app-root"},
      {unset(R"({"role":"stale-app-root"})"),
       "actions[1]: params.node: \"stale-app-root\" is a selector, not a role (write "
       "{\"selector\":\"stale-app-root\"})"},
      {unset(R"({"selector":"web"})"),
       "actions[1]: params.node: \"web\" is a role, not a selector (write {\"role\":\"web\"})"},
      {unset(R"({"role":"app"})"),
       "actions[1]: params.node: \"app\" names a service target; this parameter takes a node; the "
       "terms of kind node: role web, selector stale-app-root"},
      {unset(R"({"literal":"web2"})"),
       "actions[1]: params.node: a literal target is not allowed here (name a role or selector "
       "of kind node); the terms of kind node: role web, selector stale-app-root"},
      {unset(R"({"role":"web","selector":"stale-app-root"})"),
       "actions[1]: params.node: a target has exactly one member: role, selector or literal"},
      {unset("{}"),
       "actions[1]: params.node: a target has exactly one member: role, selector or literal"},
      {unset(R"({"host":"web2"})"), "actions[1]: params.node.host: unknown member"},
      {unset(R"({"role":3})"), "actions[1]: params.node.role: expected a string, found an integer"},
      {unset(R"("web")"),
       "actions[1]: params.node: expected a target ({\"role\"|\"selector\"|\"literal\": name}), "
       "found a string"},
      {R"({"call":"service.restart","params":{"service":{"literal":"nginx-worker-pool-7"}}})",
       "actions[1]: params.service: 19 bytes, more than the maximum 16"},
      {R"({"call":"service.restart","params":{"service":{"literal":""}}})",
       "actions[1]: params.service: 0 bytes, fewer than the minimum 1"},
      {R"({"call":"service.restart","params":{"service":{"literal":"a\tb"}}})",
       "actions[1]: params.service: contains a control character"},
      // Not JSON at all.
      {R"({"call":"journal.undo")", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    std::string got = refusal(c.json);
    if (c.message.empty()) {
      CHECK(got.starts_with("actions[1]: not JSON ("));
    } else {
      CHECK(got == c.message);
    }
  }
}

TEST_CASE("call: a literal target is accepted where the schema allows it") {
  auto call =
      parse_action(R"({"call":"service.restart","params":{"service":{"literal":"nginx"}}})");
  REQUIRE_MESSAGE(call.ok(), call.status().message());
  CHECK(std::get<Target>(*call->find("service")) == Target{Target::Kind::kLiteral, "nginx"});
  auto selector =
      parse_action(R"({"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},)"
                   R"("key":"port"}})");
  REQUIRE_MESSAGE(selector.ok(), selector.status().message());
}

TEST_CASE("call: a path prefix covers what lies beneath it, component-wise") {
  for (const char* ok : {"/fleet/a", "/fleet/web2/app.conf", "/nodes/web1/x y"}) {
    CAPTURE(ok);
    CHECK(parse_action(chmod("\"" + std::string(ok) + "\"")).ok());
  }
}

TEST_CASE("call: oversize and deeply nested input is refused before parsing") {
  std::string big = chmod("\"/fleet/" + std::string(kMaxCallJsonBytes, 'a') + "\"");
  CHECK(refusal(big, "probes[0]") == "probes[0]: call of " + std::to_string(big.size()) +
                                         " bytes exceeds the limit of 65536 bytes");

  // 30000 nested arrays: refused by the depth scan, naming where the nesting went too deep.
  std::string deep = chmod(std::string(30000, '[') + std::string(30000, ']'));
  CHECK(refusal(deep) == "actions[1]: params.path[0][0][0][0][0][0]: nesting deeper than 8 levels");
  // Brackets inside strings do not count.
  CHECK(refusal(chmod("\"/fleet/[[[[[[[[[[[[\"")) == "<accepted>");
}

TEST_CASE("call: the strict reader's refusals name the JSON path inside the call") {
  // A duplicate member deep inside a value, before the value's type is looked at.
  CHECK(refusal(chmod(R"([{"x":{"y":1,"y":2}}])")) ==
        "actions[1]: params.path[0].x.y: duplicate member");
  // A wrong type, named where it is.
  CHECK(refusal(R"({"call":"vars.unset","params":{"node":{"selector":["stale-app-root"]},)"
                R"("key":"port"}})") ==
        "actions[1]: params.node.selector: expected a string, found an array");
  // Nesting past 8 levels, 3 of them inside a target.
  CHECK(refusal(unset(R"({"role":[[[[[["web"]]]]]]})")) ==
        "actions[1]: params.node.role[0][0][0][0][0]: nesting deeper than 8 levels");
  // An over-long string: a call name is at most 64 bytes, whatever it spells.
  CHECK(refusal(R"({"call":"journal.)" + std::string(60, 'u') + R"("})") ==
        "actions[1]: call: longer than 64 bytes");
  // More members than any catalog entry has parameters, and a long array where no array goes.
  std::string many = R"({"call":"journal.undo","params":{)";
  for (int i = 0; i <= 32; ++i) many += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":0";
  CHECK(refusal(many + "}}") == "actions[1]: params: more than 32 members");
  std::string seventeen = "[1";
  for (int i = 1; i < 17; ++i) seventeen += ",1";
  CHECK(refusal(chmod(seventeen + "]")) == "actions[1]: params.path: more than 16 elements");
}

TEST_CASE("call: an empty name gives the JSON path alone") {
  CHECK(refusal(chmod(R"("/etc/x")"), "") ==
        "params.path: \"/etc/x\" is not under /fleet/, /nodes/");
}

TEST_CASE("call: invalid UTF-8 is refused by the reader") {
  std::string bad = restart(",\"note\":\"caf\xc3\x28\"");
  CHECK(refusal(bad) == "actions[1]: not valid UTF-8");
}

TEST_CASE("call_json: compact canonical JSON, params sorted, targets as one-member objects") {
  auto call = parse_action(
      "{ \"params\" : { \"recursive\" : false , \"path\" : \"/fleet/a \\\"q\\\"\" , "
      "\"mode\" : \"0640\" } , \"call\" : \"file.chmod\" }");
  REQUIRE_MESSAGE(call.ok(), call.status().message());
  std::string canonical = call_json(*call);
  CHECK(
      canonical ==
      R"({"call":"file.chmod","params":{"mode":"0640","path":"/fleet/a \"q\"","recursive":false}})");
  // Canonical: reparsing it gives the same call and the same bytes.
  auto again = parse_action(canonical);
  REQUIRE(again.ok());
  CHECK(call_json(*again) == canonical);

  Call by_hand;
  by_hand.name = "service.restart";
  by_hand.params = {{"service", Target{Target::Kind::kSelector, "broken-units"}},
                    {"delay_s", int64_t{-5}},
                    {"note", std::string("tab\there")}};
  CHECK(call_json(by_hand) ==
        R"({"call":"service.restart","params":{"delay_s":-5,"note":"tab\there",)"
        R"("service":{"selector":"broken-units"}}})");
  by_hand.params = {{"node", Target{Target::Kind::kLiteral, "web2"}}};
  CHECK(call_json(by_hand) == R"({"call":"service.restart","params":{"node":{"literal":"web2"}}})");
  Call empty;
  empty.name = "journal.undo";
  CHECK(call_json(empty) == R"({"call":"journal.undo","params":{}})");
}

TEST_CASE("path helpers: normalised absolute paths") {
  for (const char* ok : {"/", "/a", "/fleet/web2/app.conf", "/a/.hidden", "/a/..b", "/a/b c"}) {
    CAPTURE(ok);
    CHECK(is_normalised_absolute_path(ok));
  }
  for (std::string_view bad : {"", "a", "a/b", "./a", "//", "/a/", "/a//b", "/./a", "/a/.", "/a/..",
                               "/../a", "/a/../b", "/a\nb", "/a\x7f"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_normalised_absolute_path(bad));
  }
  CHECK_FALSE(is_normalised_absolute_path(std::string_view("/a\0b", 4)));
}

TEST_CASE("path helpers: prefixes compare whole components") {
  CHECK(path_has_prefix("/etc/app/x", "/etc/app/"));
  CHECK(path_has_prefix("/etc/app/x/y", "/etc/app/"));
  CHECK(path_has_prefix("/etc", "/"));
  CHECK_FALSE(path_has_prefix("/etc/apps", "/etc/app/"));
  CHECK_FALSE(path_has_prefix("/etc/app", "/etc/app/"));
  CHECK_FALSE(path_has_prefix("/etc/app/../shadow", "/etc/app/"));
  CHECK_FALSE(path_has_prefix("/", "/"));
  CHECK_FALSE(path_has_prefix("/etc/app/x", "etc/app/"));
  CHECK_FALSE(path_has_prefix("/etc/app/x", ""));
  // A prefix written without its trailing '/' still compares component-wise.
  CHECK(path_has_prefix("/etc/app/x", "/etc/app"));
  CHECK_FALSE(path_has_prefix("/etc/apps", "/etc/app"));
}

TEST_CASE("check_param: a value of the wrong variant or out of bounds is refused by path") {
  const Manifest manifest = test_manifest();
  const ParamSchema& path = manifest.actions[1].params[0];
  CHECK(check_param(path, ParamValue(int64_t{3}), manifest, "p").message() ==
        "p: expected a path value");
  CHECK(check_param(path, ParamValue(std::string("/nodes/x")), manifest, "p").is_ok());
  const ParamSchema& delay = manifest.actions[2].params[1];
  CHECK(check_param(delay, ParamValue(int64_t{0}), manifest, "d").is_ok());
  CHECK(check_param(delay, ParamValue(int64_t{60}), manifest, "d").is_ok());
  CHECK(check_param(delay, ParamValue(INT64_MIN), manifest, "d").message() ==
        "d: -9223372036854775808 is outside [0, 60]");
  CHECK(check_param(delay, ParamValue(true), manifest, "d").message() ==
        "d: expected an integer value");
  const ParamSchema& note = manifest.actions[2].params[2];
  CHECK(check_param(note, ParamValue(std::string("caf\xc3")), manifest, "n").message() ==
        "n: not valid UTF-8");
  const ParamSchema& node = manifest.actions[0].params[0];
  CHECK(check_param(node, ParamValue(Target{Target::Kind::kSelector, "stale-app-root"}), manifest,
                    "t")
            .is_ok());
  CHECK(check_param(node, ParamValue(std::string("web")), manifest, "t").message() ==
        "t: expected a target value");
}
