// The catalog's codecs for the gate's and the worlds' events, the rest of an attempt's events and
// the capability panel: each round-trips, and each malformed form is refused naming its member
// (a duplicate, another version, a wrong type, a missing member). Unknown members are tolerated:
// no event contract (docs/ATTEMPTS.md, docs/GATE.md, docs/CAPABILITIES.md) closes a payload.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/events/attempt_events.h"
#include "engine/events/capability_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/registry_events.h"
#include "engine/events/world_events.h"

using namespace aura;
namespace ev = aura::events;

namespace {

const std::string kId = "0123456789abcdef";
const std::string kStream = "attempt/" + kId;
const std::string kHex(64, 'a');
const EvidenceRef kRef{"output", Digest{}, "action.output", 12};

// The end of the JSON value that starts at `at` in `json`.
size_t value_end(const std::string& json, size_t at) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = at; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return json.size();
}

// Where the top-level member `name` starts ("name":...), or npos.
size_t member_at(const std::string& json, const std::string& name) {
  return json.find("\"" + name + "\":");
}

std::string without(std::string json, const std::string& name) {
  const size_t at = member_at(json, name);
  REQUIRE(at != std::string::npos);
  const size_t end = value_end(json, at + name.size() + 3);
  json.erase(at - 1, end - at + 1);  // with the comma before it
  return json;
}

std::string duplicated(std::string json, const std::string& name) {
  const size_t at = member_at(json, name);
  REQUIRE(at != std::string::npos);
  const size_t end = value_end(json, at + name.size() + 3);
  json.insert(end, "," + json.substr(at, end - at));
  return json;
}

std::string retyped(std::string json, const std::string& name, const std::string& value) {
  const size_t at = member_at(json, name);
  REQUIRE(at != std::string::npos);
  const size_t from = at + name.size() + 3;
  json.replace(from, value_end(json, from) - from, value);
  return json;
}

// One codec's sample and the member each malformed form touches.
// An optional member's absence is read as its default instead of refused.
enum class Absent { kRefused, kDefault };

template <class T>
void check_forms(const T& sample, std::string_view stream, const std::string& member,
                 const std::string& wrong_value, const std::string& wrong_what,
                 Absent absent = Absent::kRefused) {
  const std::string bytes = sample.encode();
  CAPTURE(bytes);
  ev::PayloadReader r;
  auto decode = [&](const std::string& payload) {
    return ev::decode<T>(r, EventView{1, {}, 0, stream, T::kType, "engine", payload, {}});
  };
  const std::string type(T::kType);
  // Round trip: the same bytes again.
  auto back = decode(bytes);
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->encode() == bytes);
  // A duplicate member.
  auto dup = decode(duplicated(bytes, member));
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().message() == type + ": member \"" + member + "\": duplicate member");
  // Another version.
  auto v2 = decode(retyped(bytes, "v", "2"));
  REQUIRE_FALSE(v2.ok());
  CHECK(v2.status().message() == type + ": member \"v\": version 2 is not supported");
  // A wrong type.
  auto wrong = decode(retyped(bytes, member, wrong_value));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() == type + ": member \"" + member + "\": " + wrong_what);
  // A missing member.
  auto missing = decode(without(bytes, member));
  if (absent == Absent::kDefault) {
    CHECK_MESSAGE(missing.ok(), missing.status().message());
  } else {
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.status().message() == type + ": member \"" + member + "\": missing");
  }
  // An unknown member: tolerated, and what is known is read as before.
  std::string later = bytes;
  later.insert(later.size() - 1, R"(,"later":{"a":[1]})");
  auto tolerated = decode(later);
  REQUIRE_MESSAGE(tolerated.ok(), tolerated.status().message());
  CHECK(tolerated->encode() == bytes);
}

ev::GateStarted sample_gate_started() {
  return {kId, 2, kHex, true, {"6.1.0", kHex, kHex, kHex}, R"({"driver":"filetree"})"};
}

ev::WorldBuilt sample_world_built(bool gate) {
  ev::WorldBuilt w;
  w.attempt = kId;
  if (gate) w.gate = ev::WorldBuilt::Gate{9, "twin"};
  w.world = "twin-1";
  w.profile_sha256 = kHex;
  w.binaries = {{"/usr/sbin/nginx", kHex}, {"/aura/bin/aura-runner", std::string(64, 'b')}};
  w.layers = {"fleet", "twin"};
  w.image_sha256 = kHex;
  w.refs = {{"profile", Digest{}, "sandbox.profile", 10}, {"sums", Digest{}, "scenario.sums", 20}};
  return w;
}

}  // namespace

TEST_CASE("event catalog: gate.started encodes the engine's bytes and is checked") {
  const ev::GateStarted g = sample_gate_started();
  CHECK(g.encode() == R"({"v":1,"attempt":"0123456789abcdef","revision":2,"ir_sha256":")" + kHex +
                          R"(","stop_at_first_failure":true,"environment":{"kernel_release":)"
                          R"("6.1.0","lab_build_digest":")" +
                          kHex + R"(","sandbox_profile_digest":")" + kHex +
                          R"(","capability_snapshot_digest":")" + kHex +
                          R"("},"capabilities":{"driver":"filetree"}})");
  check_forms(g, kStream, "revision", R"("2")", "not a non-negative integer");
  check_forms(g, kStream, "stop_at_first_failure", "1", "not true or false");
  check_forms(g, kStream, "environment", "[]", "not an object");
  check_forms(g, kStream, "capabilities", "[]", "not an object");
  // Inside the environment: a duplicate, a missing digest, a digest that is not hex.
  ev::PayloadReader r;
  auto decode = [&](const std::string& payload) {
    return ev::GateStarted::decode(
        r, EventView{1, {}, 0, kStream, ev::kGateStarted, "engine", payload, {}});
  };
  const std::string bytes = g.encode();
  std::string dup = bytes;
  dup.insert(dup.find(R"("lab_build_digest")"), R"("kernel_release":"x",)");
  CHECK(decode(dup).status().message() ==
        "gate.started: member \"environment.kernel_release\": duplicate member");
  std::string upper = bytes;
  upper.replace(upper.find(R"("capability_snapshot_digest":")") + 30, 64, std::string(64, 'A'));
  CHECK(decode(upper).status().message() ==
        "gate.started: member \"environment.capability_snapshot_digest\": not 64 lowercase hex "
        "digits");
}

TEST_CASE("event catalog: gate.action and action.completed share the action members") {
  ev::GateAction a;
  a.attempt = kId;
  a.gate = 9;
  a.property = "repeat";
  a.world = "primary";
  a.stage = "repeat";
  a.index = 1;
  a.call = R"({"call":"file.chmod","params":{"mode":"0600"}})";
  a.exit_code = -1;
  a.error = "permission denied";
  a.truncated = true;
  a.resolved = {"/etc/app/f1"};
  a.refs = {kRef};
  CHECK(a.encode() == R"({"v":1,"attempt":"0123456789abcdef","gate":9,"property":"repeat",)"
                      R"("world":"primary","stage":"repeat","index":1,"call":{"call":)"
                      R"("file.chmod","params":{"mode":"0600"}},"exit_code":-1,"error":)"
                      R"("permission denied","truncated":true,"resolved":["/etc/app/f1"],)"
                      R"("refs":[{"id":"output","sha256":")" +
                          std::string(64, '0') + R"(","kind":"action.output","bytes":12}]})");
  check_forms(a, kStream, "gate", "-1", "not a non-negative integer");
  check_forms(a, kStream, "stage", R"("after_apply")",
              "\"after_apply\" is not one of apply|repeat|rollback");
  check_forms(a, kStream, "exit_code", "0.5", "not an integer");
  ev::GateAction script = a;
  script.call.reset();
  script.script_sha256 = kHex;
  check_forms(script, kStream, "script_sha256", R"("abc")", "not 64 lowercase hex digits");

  ev::ActionCompleted c;
  c.attempt = kId;
  c.world = "live";
  c.stage = "apply";
  c.index = 0;
  c.call = R"({"call":"file.chmod","params":{}})";
  c.error = "";
  c.resolved = {"/x"};
  c.refs = {{"act-1", Digest{}, "action.output", 3}};
  check_forms(c, kStream, "index", "true", "not a non-negative integer");
  check_forms(c, kStream, "error", "7", "not a string or null");
  // No error at all is written null, and read back as none.
  ev::ActionCompleted none = c;
  none.error.reset();
  CHECK(none.encode().find(R"("error":null)") != std::string::npos);
  check_forms(none, kStream, "truncated", "0", "not true or false", Absent::kDefault);
}

TEST_CASE("event catalog: gate.fact, with and without a fingerprint value") {
  ev::GateFact f{kId, 9, "primary", "primary", "after_apply", "fleet-healthy", true, "200 OK", {}};
  CHECK(f.encode() == R"({"v":1,"attempt":"0123456789abcdef","gate":9,"property":"primary",)"
                      R"("world":"primary","stage":"after_apply","check":"fleet-healthy",)"
                      R"("ok":true,"observed":"200 OK"})");
  check_forms(f, kStream, "property", R"("sideways")",
              "\"sideways\" is not one of primary|twin|control|repeat|reversal");
  check_forms(f, kStream, "stage", R"("apply")",
              "\"apply\" is not one of before|after_apply|after_repeat|after_rollback");
  check_forms(f, kStream, "ok", R"("yes")", "not true or false");
  check_forms(f, kStream, "check", "[]", "not a string");
  check_forms(f, kStream, "observed", "null", "not a string");
  ev::GateFact fp{kId,  9,  "reversal", "primary", "before", std::string(ev::kFingerprintCheck),
                  true, "", kHex};
  check_forms(fp, kStream, "value", "1", "not a string", Absent::kDefault);
}

TEST_CASE("event catalog: world.built of the live world and of a gate world; world.reset") {
  const ev::WorldBuilt live = sample_world_built(false);
  CHECK(live.encode().starts_with(
      R"({"v":1,"attempt":"0123456789abcdef","world":"twin-1","profile_sha256":")"));
  check_forms(live, kStream, "binaries", "[]", "not an object");
  check_forms(live, kStream, "layers", R"({"a":1})", "not an array");
  check_forms(live, kStream, "image_sha256", R"("")", "not 64 lowercase hex digits");
  const ev::WorldBuilt gated = sample_world_built(true);
  CHECK(gated.encode().starts_with(
      R"({"v":1,"attempt":"0123456789abcdef","gate":9,"property":"twin","world":"twin-1",)"));
  check_forms(gated, kStream, "property", "5", "not a string");
  check_forms(gated, kStream, "world", "[]", "not a string");
  // The binaries keep their order; a digest that is not hex is refused by its path.
  ev::PayloadReader r;
  auto back = ev::WorldBuilt::decode(
      r, EventView{1, {}, 0, kStream, ev::kWorldBuilt, "supervisor", gated.encode(), {}});
  REQUIRE(back.ok());
  CHECK(back->binaries == gated.binaries);
  CHECK(back->gate->gate == 9);
  std::string bad = gated.encode();
  bad.replace(bad.find(std::string(64, 'b')), 64, std::string(63, 'b'));
  auto refused = ev::WorldBuilt::decode(
      r, EventView{1, {}, 0, kStream, ev::kWorldBuilt, "supervisor", bad, {}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "world.built: member \"binaries./aura/bin/aura-runner\": not 64 lowercase hex digits");

  const ev::WorldReset reset{kId, "crashed", "live", "there was none"};
  CHECK(reset.encode() == R"({"v":1,"attempt":"0123456789abcdef","reason":"crashed",)"
                          R"("world":"live","previous":"there was none"})");
  check_forms(reset, kStream, "reason", "1", "not a string");
  check_forms(reset, kStream, "previous", "false", "not a string");
}

TEST_CASE("event catalog: apply, ack, verify, coach and reflection payloads") {
  check_forms(ev::ApplyCompleted{kId, 2, 3, 1, false}, kStream, "failed", R"("1")",
              "not a non-negative integer");
  check_forms(ev::ApplyCompleted{kId, 2, 3, 1, true}, kStream, "aborted", "1", "not true or false");
  ev::AckReadback ack{kId, 1, false, {}};
  ack.actions.push_back({0,
                         R"({"call":"vars.unset","params":{}})",
                         std::nullopt,
                         true,
                         "web1: port=8081",
                         {"port is still set (8081); requested unset"}});
  ack.actions.push_back({1, std::nullopt, kHex, false, "a script", {}});
  CHECK(ack.encode() == R"({"v":1,"attempt":"0123456789abcdef","revision":1,)"
                        R"("as_requested":false,"actions":)" +
                            ack.actions_json() + "}");
  check_forms(ack, kStream, "as_requested", "null", "not true or false");
  check_forms(ack, kStream, "actions", "{}", "not an array");
  check_forms(ev::AttemptAcknowledged{kId, 41, kHex, ""}, kStream, "readback_sha256", "7",
              "not a string");
  check_forms(ev::VerifyFact{kId, "fleet-healthy", "invariant", true, "ok"}, kStream, "kind",
              R"("maybe")", "\"maybe\" is not one of postcondition|invariant");
  check_forms(ev::CoachUsed{kId, 1, kHex, kHex, "coach-small"}, kStream, "call", R"("1")",
              "not a non-negative integer");
  check_forms(ev::CoachUsed{kId, 1, kHex, kHex, "coach-small"}, kStream, "request_sha256", R"("x")",
              "not 64 lowercase hex digits");
  check_forms(ev::AttemptReflected{kId, "the twin drifted too"}, kStream, "text", "[]",
              "not a string");
}

// capabilities.measured's encoder is a function (capability_events.h), its decoder the struct's.
struct Panel : ev::CapabilitiesMeasured {
  std::string encode() const { return ev::encode(*this); }
  static Result<Panel> decode(ev::PayloadReader& r, const EventView& e) {
    auto m = ev::CapabilitiesMeasured::decode(r, e);
    if (!m.ok()) return m.status();
    return Panel{std::move(m).value()};
  }
};

TEST_CASE("event catalog: capabilities.measured encodes the panel and decodes it back") {
  const Panel m{
      {"host-1", "6.1.0", {{"ns_user", true, "unshared"}, {"sched_ext", false, "absent"}}}};
  CHECK(m.encode() == R"({"v":1,"host":"host-1","kernel_release":"6.1.0","capabilities":[)"
                      R"({"name":"ns_user","available":true,"reason":"unshared"},)"
                      R"({"name":"sched_ext","available":false,"reason":"absent"}]})");
  check_forms(m, ev::kCapabilityStream, "host", "1", "not a string");
  check_forms(m, ev::kCapabilityStream, "capabilities", "{}", "not an array");
}
