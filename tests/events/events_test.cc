#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/attempt/attempt_state.h"
#include "engine/crypto/sha256.h"
#include "engine/events/attempt_events.h"
#include "engine/events/event_types.h"
#include "engine/events/registry_events.h"

using namespace aura;
namespace ev = aura::events;

namespace {

const std::string kId = "0123456789abcdef";
const std::string kStream = "attempt/" + kId;
const std::string kHex(64, 'a');

EventView view(std::string_view stream, std::string_view type, std::string_view payload,
               uint64_t seq = 1) {
  return EventView{seq, {}, 0, stream, type, "engine", payload, {}};
}

template <class T>
std::string decode_error(std::string_view type, std::string_view payload,
                         std::string_view stream = kStream) {
  ev::PayloadReader r;
  auto p = T::decode(r, view(stream, type, payload));
  REQUIRE_FALSE(p.ok());
  return p.status().message();
}

ev::AttemptStarted sample_started() {
  return ev::AttemptStarted{kId,
                            "alice",
                            "learn",
                            7,
                            {"t0", "1.0.0", kHex, kHex, "aura.lab/test", "scenarios/t0"},
                            5,
                            {EvidenceRef{"manifest", Digest{}, "scenario.manifest", 3}}};
}

}  // namespace

TEST_CASE("event catalog: every type is named once, in the type.name form") {
  std::set<std::string_view> seen;
  for (std::string_view t : ev::kAllTypes) {
    CHECK(seen.insert(t).second);
    const size_t dot = t.find('.');
    CHECK(dot != std::string_view::npos);
    CHECK(dot > 0);
    CHECK(dot + 1 < t.size());
  }
  CHECK(seen.count(ev::kGateVerdict) == 1);
}

TEST_CASE("event catalog: attempt.started encodes the documented bytes and decodes back") {
  const ev::AttemptStarted p = sample_started();
  const std::string bytes = p.encode();
  CHECK(bytes == R"({"v":1,"attempt":"0123456789abcdef","learner":"alice","mode":"learn",)"
                 R"("seed":7,"scenario":{"id":"t0","version":"1.0.0","package_digest":")" +
                     kHex + R"(","manifest_sha256":")" + kHex +
                     R"(","publisher":"aura.lab/test","dir":"scenarios/t0"},"probe_budget":5,)"
                     R"("refs":[{"id":"manifest","sha256":")" +
                     std::string(64, '0') + R"(","kind":"scenario.manifest","bytes":3}]})");
  ev::PayloadReader r;
  auto back = ev::decode<ev::AttemptStarted>(r, view(kStream, ev::kAttemptStarted, bytes));
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->encode() == bytes);
  CHECK(back->scenario.dir == "scenarios/t0");
  CHECK(back->refs.size() == 1);
}

TEST_CASE("event catalog: every typed attempt payload round-trips through its codec") {
  ev::PayloadReader r;
  auto round_trip = [&](const auto& payload) {
    using T = std::decay_t<decltype(payload)>;
    const std::string bytes = payload.encode();
    CAPTURE(bytes);
    auto back = T::decode(r, view(kStream, T::kType, bytes));
    REQUIRE_MESSAGE(back.ok(), back.status().message());
    CHECK(back->encode() == bytes);
  };
  round_trip(ev::AttemptPhase{kId, "observe", "predict"});
  round_trip(ev::AttemptPredicted{kId, "stale-override", "web2 overrides", 80});
  round_trip(ev::ProbeRequested{kId, 1, R"({"call":"file.read","params":{"path":"/x"}})", 2, 2});
  round_trip(ev::ProbeCompleted{kId, 1, "ev-1", -1, true, "timed out", {"/x"}, {}});
  round_trip(ev::InterventionSubmitted{kId, 1, kHex, {{kHex, "pending_feedback"}}, {}});
  round_trip(ev::ScriptAuthorized{kId, 1, kHex});
  round_trip(ev::AttemptVerified{kId, true, {4, 5}});
  round_trip(ev::GateProperty{kId, 9, "twin", "fail", "unknown: no twin world", {10, 11}});
  round_trip(ev::GateVerdict{kId, 9, "VERIFIED", true, R"({"verdict":"VERIFIED"})"});
  round_trip(ev::ReceiptIssued{kId, kHex, 1, 20, 21, {}});
  round_trip(ev::AttemptAbandoned{kId, "gave up"});
}

TEST_CASE("event catalog: registry payloads round-trip and are checked") {
  ev::PayloadReader r;
  const ev::ScenarioLoaded loaded{"scenarios/t0", "t0", "1.0.0", "tutorial", "T0",
                                  kHex,           kHex, "pub",   {}};
  auto back = ev::ScenarioLoaded::decode(
      r, view(ev::kScenarioStream, ev::kScenarioLoaded, loaded.encode()));
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->encode() == loaded.encode());
  CHECK(decode_error<ev::ScenarioRejected>(
            ev::kScenarioRejected, R"({"v":1,"dir":"","reason":"x"})", ev::kScenarioStream) ==
        "scenario.rejected: member \"dir\": empty");
  CHECK(decode_error<ev::CapabilitiesMeasured>(
            ev::kCapabilitiesMeasured,
            R"({"v":1,"host":"h","kernel_release":"k","capabilities":[{"name":"x","reason":"r"}]})",
            ev::kCapabilityStream) ==
        "capabilities.measured: member \"capabilities[0].available\": missing");
}

TEST_CASE("event catalog: scenario.loaded carries the manifest's requires; older events decode") {
  using Requirements = ev::ScenarioLoaded::Requirements;
  ev::PayloadReader r;
  ev::ScenarioLoaded loaded{"scenarios/o1", "o1", "1.0.0", "incident", "O1", kHex, kHex, "pub", {}};
  // Written before the member existed: no "requires", and the bytes are what they were.
  const std::string old = loaded.encode();
  CHECK(old.find("requires") == std::string::npos);
  auto back = ev::ScenarioLoaded::decode(r, view(ev::kScenarioStream, ev::kScenarioLoaded, old));
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->requirements == Requirements::kNotRecorded);

  loaded.requirements = Requirements::kNotDeclared;
  CHECK(loaded.encode().ends_with(R"(,"requires":null})"));
  back = ev::ScenarioLoaded::decode(
      r, view(ev::kScenarioStream, ev::kScenarioLoaded, loaded.encode()));
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->requirements == Requirements::kNotDeclared);

  loaded.requirements = Requirements::kDeclared;
  loaded.required_capabilities = {"ns_user", "tool_ansible-playbook"};
  loaded.optional_capabilities = {"sched_ext"};
  CHECK(loaded.encode().ends_with(
      R"(,"requires":{"capabilities":["ns_user","tool_ansible-playbook"],"optional":["sched_ext"]}})"));
  back = ev::ScenarioLoaded::decode(
      r, view(ev::kScenarioStream, ev::kScenarioLoaded, loaded.encode()));
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(back->requirements == Requirements::kDeclared);
  CHECK(back->required_capabilities == loaded.required_capabilities);
  CHECK(back->optional_capabilities == loaded.optional_capabilities);
  CHECK(back->encode() == loaded.encode());

  // Checked: an object of two lists of capability ids (the shape: the catalog is the
  // manifest's to check), or null.
  const std::string head = old.substr(0, old.size() - 1);
  struct Bad {
    std::string requires_json, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"("ns_user")", "member \"requires\": not an object"},
           {R"({"capabilities":[]})", "member \"requires.optional\": missing"},
           {R"({"capabilities":["NS"],"optional":[]})",
            "member \"requires.capabilities[0]\": not a capability id"},
           {R"({"capabilities":[""],"optional":[]})",
            "member \"requires.capabilities[0]\": not a capability id"},
           {R"({"capabilities":[],"optional":[7]})",
            "member \"requires.optional[0]\": not a string"},
       }) {
    CAPTURE(b.requires_json);
    const std::string e = decode_error<ev::ScenarioLoaded>(
        ev::kScenarioLoaded, head + R"(,"requires":)" + b.requires_json + "}", ev::kScenarioStream);
    CHECK_MESSAGE(e.find(b.says) != std::string::npos, e);
  }
}

TEST_CASE("event catalog: a duplicate member is refused at any depth, naming it") {
  std::string bytes = sample_started().encode();
  const std::string dup = R"("id":"t0","id":"t1",)";
  bytes.replace(bytes.find(R"("id":"t0",)"), std::string(R"("id":"t0",)").size(), dup);
  CHECK(decode_error<ev::AttemptStarted>(ev::kAttemptStarted, bytes) ==
        "attempt.started: member \"scenario.id\": duplicate member");
  CHECK(decode_error<ev::GateProperty>(
            ev::kGateProperty,
            R"({"v":1,"attempt":"0123456789abcdef","gate":1,"gate":2,"property":"twin",)"
            R"("status":"pass","reason":"","cited":[]})") ==
        "gate.property: member \"gate\": duplicate member");
}

TEST_CASE("event catalog: the version member is checked: present, first and 1") {
  CHECK(decode_error<ev::AttemptAbandoned>(ev::kAttemptAbandoned,
                                           R"({"attempt":"0123456789abcdef","reason":"x"})") ==
        "attempt.abandoned: member \"v\": not the first member");
  CHECK(decode_error<ev::AttemptAbandoned>(
            ev::kAttemptAbandoned, R"({"attempt":"0123456789abcdef","v":1,"reason":"x"})") ==
        "attempt.abandoned: member \"v\": not the first member");
  CHECK(decode_error<ev::AttemptAbandoned>(
            ev::kAttemptAbandoned, R"({"v":2,"attempt":"0123456789abcdef","reason":"x"})") ==
        "attempt.abandoned: member \"v\": version 2 is not supported");
  CHECK(decode_error<ev::AttemptAbandoned>(
            ev::kAttemptAbandoned, R"({"v":"1","attempt":"0123456789abcdef","reason":"x"})") ==
        "attempt.abandoned: member \"v\": not a non-negative integer");
}

TEST_CASE("event catalog: the attempt member must be the stream's; types and enums are checked") {
  CHECK(decode_error<ev::AttemptAbandoned>(ev::kAttemptAbandoned,
                                           R"({"v":1,"attempt":"00000000000000fe","reason":"x"})")
            .find("member \"attempt\": \"00000000000000fe\" is not the stream's") !=
        std::string::npos);
  const std::string head = R"({"v":1,"attempt":"0123456789abcdef")";
  CHECK(decode_error<ev::AttemptPhase>(ev::kAttemptPhase, head + R"(,"from":"observe","to":1})") ==
        "attempt.phase: member \"to\": not a string");
  CHECK(decode_error<ev::GateVerdict>(ev::kGateVerdict,
                                      head + R"(,"gate":1,"verdict":"MAYBE","recovered":true,)"
                                             R"("result":{}})") ==
        "gate.verdict: member \"verdict\": \"MAYBE\" is not one of "
        "NOT_RECOVERED|RECOVERED_UNPROVEN|VERIFIED");
  CHECK(decode_error<ev::AttemptPredicted>(
            ev::kAttemptPredicted, head + R"(,"hypothesis":"h","expect":"e","confidence":101})") ==
        "attempt.predicted: member \"confidence\": above 100");
  CHECK(decode_error<ev::ReceiptIssued>(
            ev::kReceiptIssued, head + R"(,"receipt_sha256":")" + std::string(64, 'A') +
                                    R"(","first_seq":1,"last_seq":2,"checkpoint_size":2})") ==
        "receipt.issued: member \"receipt_sha256\": not 64 lowercase hex digits");
  CHECK(decode_error<ev::GateProperty>(ev::kGateProperty,
                                       head + R"(,"gate":1,"property":"twin","status":"pass",)"
                                              R"("reason":"","cited":[1,-2]})") ==
        "gate.property: member \"cited\": element 1 is not a non-negative integer");
  CHECK(decode_error<ev::AttemptAbandoned>(ev::kAttemptAbandoned, "not json")
            .starts_with("attempt.abandoned: payload: not JSON"));
}

TEST_CASE(
    "event catalog: members the contract does not list are tolerated (no contract refuses "
    "them)") {
  ev::PayloadReader r;
  auto p = ev::AttemptAbandoned::decode(
      r, view(kStream, ev::kAttemptAbandoned,
              R"({"v":1,"attempt":"0123456789abcdef","reason":"x","later":{"a":1}})"));
  REQUIRE(p.ok());
  CHECK(p->reason == "x");
}

TEST_CASE("event catalog: decode<T> refuses an event of another type") {
  ev::PayloadReader r;
  const std::string bytes = ev::AttemptAbandoned{kId, "x"}.encode();
  auto p = ev::decode<ev::AttemptPhase>(r, view(kStream, ev::kAttemptAbandoned, bytes));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().message() == "attempt.abandoned: not a attempt.phase event");
}

TEST_CASE("attempt fold: a duplicate member or a wrong version in any event is corruption") {
  // The engine's own fold reads through the catalog: it refuses what the projections refuse.
  const std::string started = sample_started().encode();
  const std::string manifest_hex = to_hex(Digest{});
  std::string good_started = started;
  // The manifest ref's digest must be the scenario's manifest_sha256.
  for (size_t at = good_started.find(kHex); at != std::string::npos;
       at = good_started.find(kHex, at + 1)) {
    if (good_started.compare(at - 19, 19, "\"manifest_sha256\":\"") == 0)
      good_started.replace(at, 64, manifest_hex);
  }
  attempt::AttemptState s;
  REQUIRE_MESSAGE(
      attempt::fold_event(s, view(kStream, ev::kAttemptStarted, good_started, 1)).is_ok(),
      good_started);
  CHECK(s.package_dir == "scenarios/t0");

  attempt::AttemptState dup = s;
  const Status d = attempt::fold_event(
      dup, view(kStream, ev::kWorldReset,
                R"({"v":1,"attempt":"0123456789abcdef","reason":"","reason":"x"})", 2));
  CHECK(d.code() == ErrorCode::kCorruption);
  CHECK(d.message() == "seq 2 (world.reset): world.reset: member \"reason\": duplicate member");

  attempt::AttemptState v2 = s;
  const Status v = attempt::fold_event(
      v2, view(kStream, ev::kAttemptPhase,
               R"({"v":2,"attempt":"0123456789abcdef","from":"observe","to":"predict"})", 2));
  CHECK(v.message().find("member \"v\": version 2 is not supported") != std::string::npos);

  attempt::AttemptState ok = s;
  CHECK(attempt::fold_event(ok, view(kStream, ev::kAttemptPhase,
                                     ev::AttemptPhase{kId, "observe", "predict"}.encode(), 2))
            .is_ok());
  CHECK(ok.phase == attempt::Phase::kPredict);
}
