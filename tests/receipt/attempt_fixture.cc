#include "tests/receipt/attempt_fixture.h"

#include <doctest/doctest.h>

#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/world/world_built.h"

namespace aura::testing {
namespace {

using gate::Property;
using gate::Stage;

constexpr std::string_view kOtherAttempt = "fedcba9876543210";

// The learner's IR exactly as submitted: with whitespace, which the receipt's minified copy of
// its actions and rollback drops.
const std::string kIrJson = R"({
  "v": 1,
  "hypothesis": "stale-override",
  "claim": "web2 overrides app_root with an old release path",
  "evidence": ["ev-1"],
  "falsifier": "web2 has no app_root override",
  "actions": [
    {"call": "vars.unset", "params": {"node": {"selector": "stale-app-root"}, "key": "app_root"}}
  ],
  "postconditions": ["fleet-healthy"],
  "invariants": ["fleet-converged"],
  "rollback": [{"call": "journal.undo", "params": {}}]
}
)";

const std::string kManifestJson =
    R"({"schema":1,"id":"t0-config-drift","version":"1.0.0","family":"tutorial/config-drift",)"
    R"("title":"A web fleet serves a stale page from one node",)"
    R"("briefing":"web2 serves yesterday's page","driver":"filetree","probe_budget":12,)"
    R"("allow_scripts":false,)"
    R"("hypotheses":[{"id":"stale-override","text":"a host override pins web2 to an old root"},)"
    R"({"id":"bad-release","text":"the release itself is broken"}],)"
    R"("targets":[{"name":"web","type":"role","kind":"node","description":"every web node",)"
    R"("max_matches":3},{"name":"stale-app-root","type":"selector","kind":"node",)"
    R"("description":"web nodes whose app_root differs from the group default","max_matches":3}],)"
    R"("worlds":[{"id":"primary","role":"primary","description":"the fleet on call","build":{}},)"
    R"({"id":"twin-1","role":"twin","description":"same cause on web3","build":{}},)"
    R"({"id":"twin-2","role":"twin","description":"same cause on web1","build":{}},)"
    R"({"id":"control","role":"control","description":"a healthy fleet","build":{}}],)"
    R"("probes":[{"call":"file.read","summary":"read a fleet file","cost":1,)"
    R"("max_output_bytes":65536,"params":{"path":{"type":"path","prefixes":["/fleet/"],)"
    R"("max_bytes":256}}}],)"
    R"("actions":[{"call":"vars.unset","summary":"remove a host variable","params":{)"
    R"("node":{"type":"target","target_kind":"node","allow_literal":false},)"
    R"("key":{"type":"string","enum":["app_root","port"]}}},)"
    R"({"call":"journal.undo","summary":"undo the last change","params":{}}],)"
    R"("checks":[{"id":"fleet-healthy","kind":"postcondition","description":"every node serves )"
    R"(the release","call":"fleet.health","params":{"expect_text":"fleet ok"},)"
    R"("roles":["primary","twin","control"]},)"
    R"({"id":"web-content","kind":"postcondition","description":"web2 serves the release page",)"
    R"("call":"fleet.health","params":{"expect_text":"release 42"},"roles":["primary","twin"]},)"
    R"({"id":"fleet-converged","kind":"invariant","description":"no node drifts from the group",)"
    R"("call":"fleet.health","params":{"expect_text":"converged"},)"
    R"("roles":["primary","twin","control"]},)"
    R"({"id":"control-calm","kind":"invariant","description":"the healthy fleet stays as it was",)"
    R"("call":"fleet.health","params":{"expect_text":"calm"},"roles":["control"]}],)"
    R"("judge":{"gold":{"expect":"VERIFIED","probes":[{"call":"file.read","params":{"path":)"
    R"("/fleet/host_vars/web2.conf"}}],"ir":{"v":1,"hypothesis":"stale-override","claim":"web2 )"
    R"(overrides app_root","evidence":["ev-1"],"falsifier":"web2 has no app_root override",)"
    R"("actions":[{"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},)"
    R"("key":"app_root"}}],"postconditions":["fleet-healthy"],"invariants":["fleet-converged"],)"
    R"("rollback":[{"call":"journal.undo","params":{}}]}},)"
    R"("bad":{"expect":"RECOVERED_UNPROVEN","probes":[{"call":"file.read","params":{"path":)"
    R"("/fleet/host_vars/web2.conf"}}],"ir":{"v":1,"hypothesis":"stale-override","claim":"web2 )"
    R"(is wrong","evidence":["ev-1"],"falsifier":"none","actions":[{"call":"vars.unset",)"
    R"("params":{"node":{"role":"web"},"key":"app_root"}}],"postconditions":["fleet-healthy"],)"
    R"("invariants":[],"rollback":[{"call":"journal.undo","params":{}}]}}}})";

// Appends events to the log, with an event of another stream after each.
class Writer {
 public:
  Writer(EventLog& log, std::string attempt) : log_(log), attempt_(std::move(attempt)) {}

  uint64_t add(std::string type, std::string actor, const std::string& members) {
    const std::string payload =
        R"({"v":1,"attempt":")" + attempt_ + "\"" + (members.empty() ? "" : ",") + members + "}";
    auto a = log_.append({"attempt/" + attempt_, std::move(type), std::move(actor), payload});
    REQUIRE_MESSAGE(a.ok(), a.status().message());
    stream_seqs.push_back(a->seq);
    noise();
    return a->seq;
  }

  std::vector<uint64_t> stream_seqs;

 private:
  void noise() {
    ++noise_;
    const bool lab = noise_ % 3 == 0;
    EventDraft d;
    d.stream = lab ? "lab/scenarios" : "attempt/" + std::string(kOtherAttempt);
    d.type = lab ? events::kScenarioRejected : events::kAttemptPhase;
    d.actor = "engine";
    d.payload =
        lab ? R"({"v":1,"dir":"/pkg/n)" + std::to_string(noise_) + R"(","reason":"unsigned"})"
            : R"({"v":1,"attempt":")" + std::string(kOtherAttempt) +
                  R"(","from":"observe","to":"predict","n":)" + std::to_string(noise_) + "}";
    auto a = log_.append(d);
    REQUIRE_MESSAGE(a.ok(), a.status().message());
  }

  EventLog& log_;
  std::string attempt_;
  int noise_ = 0;
};

EvidenceRef put_blob(BlobStore& blobs, std::string_view bytes, std::string id, std::string kind) {
  auto info = blobs.put(as_bytes(bytes));
  REQUIRE_MESSAGE(info.ok(), info.status().message());
  return {std::move(id), info->sha256, std::move(kind), info->bytes};
}

std::string refs_json(const EvidenceRef& ref) { return "[" + evidence_ref_json(ref) + "]"; }

std::string seqs_json(const std::vector<uint64_t>& seqs) {
  JsonArray a;
  for (uint64_t s : seqs) a.raw(std::to_string(s));
  return a.done();
}

}  // namespace

std::string fixture_manifest_json() { return kManifestJson; }

std::string fixture_sums() {
  std::string sums;
  for (const char* path :
       {"fleet/group_vars/web.conf", "fleet/host_vars/web2.conf", "fleet/inventory.conf",
        "manifest.json", "twin/fleet/host_vars/web3.conf"})
    sums += to_hex(sha256(std::string("bytes of ") + path)) + "  " + path + "\n";
  return sums;
}

std::string fixture_profile() {
  return "aura-test-policy 1\nseccomp_program_sha256=" + std::string(64, '5') + "\n";
}

gate::GateSpec fixture_gate_spec() {
  using scenario::CheckKind;
  using scenario::WorldRole;
  const std::vector<WorldRole> all = {WorldRole::kPrimary, WorldRole::kTwin, WorldRole::kControl};
  gate::GateSpec s;
  s.checks = {{"fleet-healthy", CheckKind::kPostcondition, all},
              {"web-content", CheckKind::kPostcondition, {WorldRole::kPrimary, WorldRole::kTwin}},
              {"fleet-converged", CheckKind::kInvariant, all},
              {"control-calm", CheckKind::kInvariant, {WorldRole::kControl}}};
  s.primary_world = "primary";
  s.twin_worlds = {"twin-1", "twin-2"};
  s.control_world = "control";
  s.promised = {"fleet-healthy", "fleet-converged"};
  return s;
}

AttemptFixture append_attempt(EventLog& log, BlobStore& blobs, const AttemptOptions& o) {
  AttemptFixture fx;
  fx.attempt_id = o.attempt_id;
  fx.stream = "attempt/" + o.attempt_id;
  fx.manifest_json = kManifestJson;
  fx.ir_json = kIrJson;
  fx.predicted_text = "web2-pins-an-old-root-" + o.attempt_id;
  Writer w(log, o.attempt_id);

  const EvidenceRef manifest = put_blob(blobs, kManifestJson, "manifest", "scenario.manifest");
  const std::string manifest_sha = to_hex(sha256(kManifestJson));
  fx.started_seq =
      w.add(events::kAttemptStarted, "learner:alice",
            R"("learner":"alice","mode":"learn","seed":7,"scenario":{"id":"t0-config-drift",)"
            R"("version":"1.0.0","package_digest":")" +
                to_hex(sha256(fixture_sums())) + R"(","manifest_sha256":")" + manifest_sha +
                R"(","publisher":"aura.publisher/test"},"probe_budget":12,"refs":)" +
                refs_json(manifest));
  w.add(events::kAttemptPhase, "engine", R"("from":"observe","to":"predict")");
  w.add(events::kAttemptPredicted, "learner:alice",
        R"("hypothesis":"stale-override","expect":")" + fx.predicted_text + R"(","confidence":70)");
  w.add(events::kAttemptPhase, "engine", R"("from":"predict","to":"inspect")");
  w.add(events::kProbeRequested, "learner:alice",
        R"("probe":1,"call":{"call":"file.read","params":{"path":"/fleet/host_vars/web2.conf"}},)"
        R"("cost":1,"spent":1)");
  const EvidenceRef ev1 = put_blob(blobs, "app_root: /srv/release-41\n", "ev-1", "probe.output");
  fx.evidence_seq =
      w.add(events::kProbeCompleted, "supervisor",
            R"("probe":1,"evidence":"ev-1","exit_code":0,"truncated":false,"error":"",)"
            R"("resolved":[],"refs":)" +
                refs_json(ev1));
  const EvidenceRef ir = put_blob(blobs, kIrJson, "ir-1", "intervention.ir");
  const std::string ir_sha = to_hex(sha256(kIrJson));
  fx.submitted_seq =
      w.add(events::kInterventionSubmitted, "learner:alice",
            R"("revision":1,"ir_sha256":")" + ir_sha + R"(","scripts":[],"refs":)" + refs_json(ir));
  w.add(events::kAttemptPhase, "engine", R"("from":"inspect","to":"contract")");
  if (o.stop_before_gate) {
    fx.stream_seqs = w.stream_seqs;
    return fx;
  }
  w.add(events::kApplyCompleted, "supervisor", R"("revision":1,"actions":1,"failed":0)");
  w.add(events::kAttemptPhase, "engine", R"("from":"verify","to":"transfer_gate")");

  // The capability panel the lab measured, in its own stream.
  if (o.record_capabilities) {
    auto caps = log.append({"lab/capabilities", events::kCapabilitiesMeasured, "supervisor",
                            R"({"v":1,"host":"test","capabilities":[{"name":"namespaces",)"
                            R"("available":true,"reason":""}]})"});
    REQUIRE_MESSAGE(caps.ok(), caps.status().message());
    fx.capabilities_seq = caps->seq;
  }
  fx.gate_seq =
      w.add(events::kGateStarted, "engine",
            R"("revision":1,"ir_sha256":")" + ir_sha +
                R"(","stop_at_first_failure":false,"environment":{"kernel_release":"6.8.0-test",)"
                R"("lab_build_digest":")" +
                o.lab_build_digest + R"(","sandbox_profile_digest":")" + std::string(64, '2') +
                R"(","capability_snapshot_digest":")" + std::string(64, '3') +
                R"("},"capabilities":{"filetree":true})");
  const std::string g = std::to_string(fx.gate_seq);

  // The worlds the gate built, as the supervisor records them.
  const auto built = [&](Property p, const std::string& world) {
    world::BuildRecord record;
    record.profile = fixture_profile();
    record.binaries = {{"/aura/bin/aura-runner", std::string(64, '7')},
                       {"/usr/sbin/nginx", std::string(64, '6')}};
    record.layers = {world == "twin-1" ? "twin" : "fleet"};
    JsonWriter j;
    j.num("gate", fx.gate_seq).str("property", gate::property_name(p));
    Status st = world::add_world_built_members(j, world, record, fixture_sums(), blobs);
    REQUIRE_MESSAGE(st.is_ok(), st.message());
    std::string members = j.done();
    if (o.forge_image && world == "primary") {
      const size_t at = members.find(R"("image_sha256":")") + 16;
      members.replace(at, 64, std::string(64, '9'));
    }
    if (!o.record_worlds) return;
    fx.world_seqs.push_back(
        w.add(events::kWorldBuilt, "supervisor", members.substr(1, members.size() - 2)));
  };
  built(Property::kPrimary, "primary");
  built(Property::kTwin, "twin-1");
  built(Property::kTwin, "twin-2");
  built(Property::kControl, "control");

  // The facts a VERIFIED gate records; `honest` is what the grader is told.
  std::vector<gate::Fact> honest;
  const auto fact = [&](Property p, const std::string& world, Stage stage, const std::string& check,
                        bool ok, bool recorded_ok, const std::string& value = "") {
    std::string m = R"("gate":)" + g + R"(,"property":")" + std::string(gate::property_name(p)) +
                    R"(","world":")" + world + R"(","stage":")" +
                    std::string(gate::stage_name(stage)) + R"(","check":")" + check + R"(","ok":)" +
                    (recorded_ok ? "true" : "false") + R"(,"observed":"checked )" + check + "\"";
    if (!value.empty()) m += R"(,"value":")" + value + "\"";
    const uint64_t seq = w.add(events::kGateFact, "supervisor", m);
    fx.fact_seqs.push_back(seq);
    honest.push_back({seq, p, world, stage, check, o.forge_verdict ? ok : recorded_ok, value});
  };
  const std::string fp_a(64, 'a'), fp_b(64, 'b');
  const std::string fp(gate::kFingerprintCheck);
  for (const char* c : {"fleet-healthy", "web-content", "fleet-converged"}) {
    const bool forged = o.forge_verdict && std::string(c) == "web-content";
    fact(Property::kPrimary, "primary", Stage::kAfterApply, c, true, !forged);
  }
  // A gate.fact by someone other than the supervisor: never a grading fact.
  w.add(events::kGateFact, "learner:alice",
        R"("gate":)" + g +
            R"(,"property":"primary","world":"primary","stage":"after_apply",)"
            R"("check":"fleet-healthy","ok":false,"observed":"forged")");
  for (const char* world : {"twin-1", "twin-2"}) {
    for (const char* c : {"fleet-healthy", "web-content", "fleet-converged"}) {
      const bool failing =
          o.fail_twin && std::string(world) == "twin-2" && std::string(c) == "web-content";
      fact(Property::kTwin, world, Stage::kAfterApply, c, !failing, !failing);
    }
  }
  for (const char* c : {"fleet-healthy", "fleet-converged", "control-calm"})
    fact(Property::kControl, "control", Stage::kAfterApply, c, true, true);
  fact(Property::kRepeat, "primary", Stage::kAfterApply, fp, true, true, fp_a);
  fact(Property::kRepeat, "primary", Stage::kAfterRepeat, fp, true, true, fp_a);
  for (const char* c : {"fleet-healthy", "web-content", "fleet-converged"})
    fact(Property::kRepeat, "primary", Stage::kAfterRepeat, c, true, true);
  fact(Property::kReversal, "primary", Stage::kBefore, fp, true, true, fp_b);
  fact(Property::kReversal, "primary", Stage::kAfterRollback, fp, true, true, fp_b);

  fx.recorded = gate::grade(fixture_gate_spec(), honest);
  for (const auto& r : fx.recorded.properties) {
    w.add(
        events::kGateProperty, "engine",
        R"("gate":)" + g + R"(,"property":")" + std::string(gate::property_name(r.property)) +
            R"(","status":")" + std::string(gate::outcome_name(r.status)) + R"(","reason":)" +
            [&] {
              std::string s;
              json_append_string(s, r.reason);
              return s;
            }() +
            R"(,"cited":)" + seqs_json(r.cited));
  }
  for (int i = 1; i <= o.coach_calls; ++i) {
    w.add(events::kCoachUsed, "engine",
          R"("call":)" + std::to_string(i) + R"(,"request_sha256":")" + std::string(64, 'd') +
              R"(","response_sha256":")" + std::string(64, 'e') + R"(","model":"coach-small")");
  }
  fx.verdict_seq = w.add(events::kGateVerdict, "engine",
                         R"("gate":)" + g + R"(,"verdict":")" +
                             std::string(gate::verdict_name(fx.recorded.verdict)) +
                             R"(","recovered":)" + (fx.recorded.recovered ? "true" : "false") +
                             R"(,"result":)" + gate::result_json(fx.recorded));
  fx.stream_seqs = w.stream_seqs;
  // After the verdict: not part of the receipt's range.
  w.add(events::kAttemptPhase, "engine", R"("from":"transfer_gate","to":"receipt")");
  return fx;
}

}  // namespace aura::testing
