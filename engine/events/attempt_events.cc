#include "engine/events/attempt_events.h"

#include <algorithm>
#include <cstdint>

#include "engine/common/json_writer.h"
#include "engine/events/payload_codec.h"

namespace aura::events {

using namespace codec;

namespace {

Result<json::Object> open(PayloadReader& r, const EventView& e, std::string& attempt) {
  return open_attempt(r, e, attempt);
}

}  // namespace

Result<std::string_view> read_sha256_hex(const json::Object& o, std::string_view name) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_string(name));
  const bool hex = std::all_of(
      v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (v.size() != 64 || !hex) return o.error(name, "not 64 lowercase hex digits");
  return v;
}

// ---- attempt.started ----

std::string AttemptStarted::encode() const {
  return header(attempt)
      .str("learner", learner)
      .str("mode", mode)
      .num("seed", seed)
      .raw("scenario", JsonWriter()
                           .str("id", scenario.id)
                           .str("version", scenario.version)
                           .str("package_digest", scenario.package_digest)
                           .str("manifest_sha256", scenario.manifest_sha256)
                           .str("publisher", scenario.publisher)
                           .str("dir", scenario.dir)
                           .done())
      .num("probe_budget", probe_budget)
      .raw("refs", refs_json(refs))
      .done();
}

Result<AttemptStarted> AttemptStarted::decode(PayloadReader& r, const EventView& e) {
  AttemptStarted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.learner, read_string(o, "learner"));
  AURA_ASSIGN_OR_RETURN(p.mode, read_enum(o, "mode", kModes));
  AURA_ASSIGN_OR_RETURN(p.seed, o.required_u64("seed"));
  json::Object sc;
  AURA_ASSIGN_OR_RETURN(sc, o.object("scenario"));
  AURA_ASSIGN_OR_RETURN(p.scenario.id, read_string(sc, "id"));
  AURA_ASSIGN_OR_RETURN(p.scenario.version, read_string(sc, "version"));
  AURA_ASSIGN_OR_RETURN(p.scenario.package_digest, read_hex(sc, "package_digest"));
  AURA_ASSIGN_OR_RETURN(p.scenario.manifest_sha256, read_hex(sc, "manifest_sha256"));
  AURA_ASSIGN_OR_RETURN(p.scenario.publisher, read_string(sc, "publisher"));
  // The folder the package was loaded from: the engine needs it, no projection reads it.
  std::optional<std::string_view> dir;
  AURA_ASSIGN_OR_RETURN(dir, sc.optional_string("dir"));
  if (dir) p.scenario.dir = std::string(*dir);
  AURA_ASSIGN_OR_RETURN(p.probe_budget, read_count(o, "probe_budget"));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

// ---- attempt.phase ----

std::string AttemptPhase::encode() const {
  return header(attempt).str("from", from).str("to", to).done();
}

Result<AttemptPhase> AttemptPhase::decode(PayloadReader& r, const EventView& e) {
  AttemptPhase p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.from, read_enum(o, "from", kPhases));
  AURA_ASSIGN_OR_RETURN(p.to, read_enum(o, "to", kPhases));
  return p;
}

// ---- attempt.predicted ----

std::string AttemptPredicted::encode() const {
  return header(attempt)
      .str("hypothesis", hypothesis)
      .str("expect", expect)
      .num("confidence", confidence)
      .done();
}

Result<AttemptPredicted> AttemptPredicted::decode(PayloadReader& r, const EventView& e) {
  AttemptPredicted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.hypothesis, read_string(o, "hypothesis"));
  AURA_ASSIGN_OR_RETURN(p.expect, read_string(o, "expect"));
  AURA_ASSIGN_OR_RETURN(p.confidence, read_count(o, "confidence"));
  if (p.confidence > 100) return o.error("confidence", "above 100");
  return p;
}

// ---- probe.requested, probe.completed ----

std::string ProbeRequested::encode() const {
  return header(attempt)
      .num("probe", probe)
      .raw("call", call)
      .num("cost", cost)
      .num("spent", spent)
      .done();
}

Result<ProbeRequested> ProbeRequested::decode(PayloadReader& r, const EventView& e) {
  ProbeRequested p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.probe, read_count(o, "probe"));
  json::Value call;
  AURA_ASSIGN_OR_RETURN(call, o.value("call"));
  p.call = call.minified();
  AURA_ASSIGN_OR_RETURN(p.cost, read_count(o, "cost"));
  AURA_ASSIGN_OR_RETURN(p.spent, read_count(o, "spent"));
  return p;
}

std::string ProbeCompleted::encode() const {
  JsonWriter j = header(attempt);
  j.num("probe", probe).str("evidence", evidence).num("exit_code", exit_code);
  j.boolean("truncated", truncated);
  str_or_null(j, "error", error);
  j.raw("resolved", strings_json(resolved)).raw("refs", refs_json(refs));
  if (refused) j.boolean("refused", true);
  return j.done();
}

Result<ProbeCompleted> ProbeCompleted::decode(PayloadReader& r, const EventView& e) {
  ProbeCompleted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.probe, read_count(o, "probe"));
  AURA_ASSIGN_OR_RETURN(p.evidence, read_string(o, "evidence"));
  AURA_ASSIGN_OR_RETURN(p.exit_code, o.required_i64("exit_code"));
  AURA_ASSIGN_OR_RETURN(p.truncated, o.required_bool("truncated"));
  AURA_ASSIGN_OR_RETURN(p.error, read_string_or_null(o, "error"));
  std::optional<json::Array> resolved;
  AURA_ASSIGN_OR_RETURN(resolved, o.optional_array("resolved"));
  if (resolved) AURA_ASSIGN_OR_RETURN(p.resolved, read_strings(*resolved));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  std::optional<bool> refused;
  AURA_ASSIGN_OR_RETURN(refused, o.optional_bool("refused"));
  if (refused && !*refused) return Status::invalid("member \"refused\": written only when true");
  p.refused = refused.value_or(false);
  return p;
}

// ---- intervention.submitted, script.authorized ----

std::string InterventionSubmitted::encode() const {
  JsonArray list;
  for (const Script& s : scripts)
    list.raw(JsonWriter().str("sha256", s.sha256).str("status", s.status).done());
  return header(attempt)
      .num("revision", revision)
      .str("ir_sha256", ir_sha256)
      .raw("scripts", list.done())
      .raw("refs", refs_json(refs))
      .done();
}

Result<InterventionSubmitted> InterventionSubmitted::decode(PayloadReader& r, const EventView& e) {
  InterventionSubmitted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.revision, read_count(o, "revision"));
  AURA_ASSIGN_OR_RETURN(p.ir_sha256, read_hex(o, "ir_sha256"));
  json::Array scripts;
  AURA_ASSIGN_OR_RETURN(scripts, o.array("scripts"));
  for (const json::Value& v : scripts.elements()) {
    json::Object s;
    AURA_ASSIGN_OR_RETURN(s, v.as_object());
    Script script;
    AURA_ASSIGN_OR_RETURN(script.sha256, read_hex(s, "sha256"));
    AURA_ASSIGN_OR_RETURN(script.status, read_enum(s, "status", kScriptStatuses));
    p.scripts.push_back(std::move(script));
  }
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

std::string ScriptAuthorized::encode() const {
  return header(attempt).num("revision", revision).str("sha256", sha256).done();
}

Result<ScriptAuthorized> ScriptAuthorized::decode(PayloadReader& r, const EventView& e) {
  ScriptAuthorized p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.revision, read_count(o, "revision"));
  AURA_ASSIGN_OR_RETURN(p.sha256, read_hex(o, "sha256"));
  return p;
}

// ---- action.completed, apply.completed ----

std::string ActionCompleted::encode() const {
  JsonWriter j = header(attempt);
  j.str("world", world).str("stage", stage).num("index", index);
  write_action_members(j, *this);
  return j.raw("refs", refs_json(refs)).done();
}

Result<ActionCompleted> ActionCompleted::decode(PayloadReader& r, const EventView& e) {
  ActionCompleted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  std::optional<std::string_view> text;
  AURA_ASSIGN_OR_RETURN(text, o.optional_string("world"));
  p.world = std::string(text.value_or(""));
  AURA_ASSIGN_OR_RETURN(text, o.optional_string("stage"));
  p.stage = std::string(text.value_or(""));
  AURA_ASSIGN_OR_RETURN(p.index, read_count(o, "index"));
  AURA_RETURN_IF_ERROR(read_action_members(o, p));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

std::string ApplyCompleted::encode() const {
  return header(attempt)
      .num("revision", revision)
      .num("actions", actions)
      .num("failed", failed)
      .boolean("aborted", aborted)
      .done();
}

Result<ApplyCompleted> ApplyCompleted::decode(PayloadReader& r, const EventView& e) {
  ApplyCompleted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.revision, read_count(o, "revision"));
  AURA_ASSIGN_OR_RETURN(p.actions, read_count(o, "actions"));
  AURA_ASSIGN_OR_RETURN(p.failed, read_count(o, "failed"));
  if (p.failed > p.actions) return o.error("failed", "more than actions");
  AURA_ASSIGN_OR_RETURN(p.aborted, o.required_bool("aborted"));
  return p;
}

// ---- ack.readback, attempt.acknowledged ----

std::string AckReadback::actions_json() const {
  JsonArray list;
  for (const Line& l : actions) {
    JsonWriter j;
    j.num("index", l.index);
    if (l.call) {
      j.raw("call", *l.call);
    } else {
      j.str("script_sha256", l.script_sha256.value_or(""));
    }
    list.raw(j.boolean("typed", l.typed)
                 .str("observed", l.observed)
                 .raw("differences", strings_json(l.differences))
                 .done());
  }
  return list.done();
}

std::string AckReadback::encode() const {
  return header(attempt)
      .num("revision", revision)
      .boolean("as_requested", as_requested)
      .raw("actions", actions_json())
      .done();
}

Result<AckReadback> AckReadback::decode(PayloadReader& r, const EventView& e) {
  AckReadback p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.revision, read_count(o, "revision"));
  AURA_ASSIGN_OR_RETURN(p.as_requested, o.required_bool("as_requested"));
  json::Array list;
  AURA_ASSIGN_OR_RETURN(list, o.array("actions"));
  for (const json::Value& v : list.elements()) {
    json::Object a;
    AURA_ASSIGN_OR_RETURN(a, v.as_object());
    Line l;
    AURA_ASSIGN_OR_RETURN(l.index, read_count(a, "index"));
    if (auto call = a.optional_value("call")) {
      l.call = call->minified();
    } else {
      AURA_ASSIGN_OR_RETURN(l.script_sha256, read_hex(a, "script_sha256"));
    }
    AURA_ASSIGN_OR_RETURN(l.typed, a.required_bool("typed"));
    AURA_ASSIGN_OR_RETURN(l.observed, read_string(a, "observed"));
    json::Array differences;
    AURA_ASSIGN_OR_RETURN(differences, a.array("differences"));
    AURA_ASSIGN_OR_RETURN(l.differences, read_strings(differences));
    p.actions.push_back(std::move(l));
  }
  return p;
}

std::string AttemptAcknowledged::encode() const {
  return header(attempt)
      .num("readback", readback)
      .str("readback_sha256", readback_sha256)
      .str("note", note)
      .done();
}

Result<AttemptAcknowledged> AttemptAcknowledged::decode(PayloadReader& r, const EventView& e) {
  AttemptAcknowledged p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.readback, read_count(o, "readback"));
  AURA_ASSIGN_OR_RETURN(p.readback_sha256, read_hex(o, "readback_sha256"));
  AURA_ASSIGN_OR_RETURN(p.note, read_string(o, "note"));
  return p;
}

// ---- verify.fact ----

std::string VerifyFact::encode() const {
  return header(attempt)
      .str("check", check)
      .str("kind", kind)
      .boolean("ok", ok)
      .str("observed", observed)
      .done();
}

Result<VerifyFact> VerifyFact::decode(PayloadReader& r, const EventView& e) {
  VerifyFact p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.check, read_string(o, "check"));
  AURA_ASSIGN_OR_RETURN(p.kind, read_enum(o, "kind", kCheckKinds));
  AURA_ASSIGN_OR_RETURN(p.ok, o.required_bool("ok"));
  AURA_ASSIGN_OR_RETURN(p.observed, read_string(o, "observed"));
  return p;
}

// ---- attempt.verified ----

std::string AttemptVerified::encode() const {
  return header(attempt).boolean("recovered", recovered).raw("facts", seqs_json(facts)).done();
}

Result<AttemptVerified> AttemptVerified::decode(PayloadReader& r, const EventView& e) {
  AttemptVerified p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.recovered, o.required_bool("recovered"));
  std::optional<json::Array> facts;
  AURA_ASSIGN_OR_RETURN(facts, o.optional_array("facts"));
  if (facts) AURA_ASSIGN_OR_RETURN(p.facts, facts->u64s());
  return p;
}

// ---- gate.property, gate.verdict ----

std::string GateProperty::encode() const {
  JsonWriter w = header(attempt);
  w.num("gate", gate)
      .str("property", property)
      .str("status", status)
      .str("reason", reason)
      .raw("cited", seqs_json(cited));
  if (!finding_observed.empty()) {
    w.raw("finding", JsonWriter()
                         .str("check", finding_check)
                         .str("description", finding_description)
                         .str("observed", finding_observed)
                         .done());
  }
  return w.done();
}

Result<GateProperty> GateProperty::decode(PayloadReader& r, const EventView& e) {
  GateProperty p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.gate, read_count(o, "gate"));
  AURA_ASSIGN_OR_RETURN(p.property, read_enum(o, "property", kProperties));
  AURA_ASSIGN_OR_RETURN(p.status, read_enum(o, "status", kPropertyStatuses));
  AURA_ASSIGN_OR_RETURN(p.reason, read_string(o, "reason"));
  json::Array cited;
  AURA_ASSIGN_OR_RETURN(cited, o.array("cited"));
  AURA_ASSIGN_OR_RETURN(p.cited, cited.u64s());
  std::optional<json::Object> finding;
  AURA_ASSIGN_OR_RETURN(finding, o.optional_object("finding"));
  if (finding) {
    AURA_ASSIGN_OR_RETURN(p.finding_check, read_string(*finding, "check"));
    AURA_ASSIGN_OR_RETURN(p.finding_description, read_string(*finding, "description"));
    AURA_ASSIGN_OR_RETURN(p.finding_observed, read_string(*finding, "observed"));
  }
  return p;
}

std::string GateVerdict::encode() const {
  return header(attempt)
      .num("gate", gate)
      .str("verdict", verdict)
      .boolean("recovered", recovered)
      .raw("result", result)
      .done();
}

Result<GateVerdict> GateVerdict::decode(PayloadReader& r, const EventView& e) {
  GateVerdict p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.gate, read_count(o, "gate"));
  AURA_ASSIGN_OR_RETURN(p.verdict, read_enum(o, "verdict", kVerdicts));
  AURA_ASSIGN_OR_RETURN(p.recovered, o.required_bool("recovered"));
  json::Value result;
  AURA_ASSIGN_OR_RETURN(result, o.value("result"));
  p.result = result.minified();
  return p;
}

// ---- receipt.issued ----

std::string ReceiptIssued::encode() const {
  return header(attempt)
      .str("receipt_sha256", receipt_sha256)
      .num("first_seq", first_seq)
      .num("last_seq", last_seq)
      .num("checkpoint_size", checkpoint_size)
      .raw("refs", refs_json(refs))
      .done();
}

Result<ReceiptIssued> ReceiptIssued::decode(PayloadReader& r, const EventView& e) {
  ReceiptIssued p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.receipt_sha256, read_hex(o, "receipt_sha256"));
  AURA_ASSIGN_OR_RETURN(p.first_seq, read_count(o, "first_seq"));
  AURA_ASSIGN_OR_RETURN(p.last_seq, read_count(o, "last_seq"));
  AURA_ASSIGN_OR_RETURN(p.checkpoint_size, read_count(o, "checkpoint_size"));
  if (p.first_seq > p.last_seq) return o.error("first_seq", "after last_seq");
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

// ---- coach.used ----

std::string CoachUsed::encode() const {
  return header(attempt)
      .num("call", call)
      .str("request_sha256", request_sha256)
      .str("response_sha256", response_sha256)
      .str("model", model)
      .done();
}

Result<CoachUsed> CoachUsed::decode(PayloadReader& r, const EventView& e) {
  CoachUsed p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.call, read_count(o, "call"));
  AURA_ASSIGN_OR_RETURN(p.request_sha256, read_hex(o, "request_sha256"));
  AURA_ASSIGN_OR_RETURN(p.response_sha256, read_hex(o, "response_sha256"));
  AURA_ASSIGN_OR_RETURN(p.model, read_string(o, "model"));
  return p;
}

// ---- attempt.reflected, attempt.abandoned ----

std::string AttemptReflected::encode() const { return header(attempt).str("text", text).done(); }

Result<AttemptReflected> AttemptReflected::decode(PayloadReader& r, const EventView& e) {
  AttemptReflected p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.text, read_string(o, "text"));
  return p;
}

std::string AttemptAbandoned::encode() const {
  return header(attempt).str("reason", reason).done();
}

Result<AttemptAbandoned> AttemptAbandoned::decode(PayloadReader& r, const EventView& e) {
  AttemptAbandoned p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.reason, read_string(o, "reason"));
  return p;
}

}  // namespace aura::events
