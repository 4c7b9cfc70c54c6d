#include "engine/events/attempt_events.h"

#include <algorithm>
#include <cstdint>

#include "engine/common/json_writer.h"

namespace aura::events {

namespace {

JsonWriter header(const std::string& attempt) {
  JsonWriter j;
  j.num("v", kPayloadVersion).str("attempt", attempt);
  return j;
}

std::string refs_json(const std::vector<EvidenceRef>& refs) {
  JsonArray a;
  for (const EvidenceRef& r : refs) a.raw(evidence_ref_json(r));
  return a.done();
}

std::string seqs_json(const std::vector<uint64_t>& seqs) {
  JsonArray a;
  for (uint64_t s : seqs) a.raw(std::to_string(s));
  return a.done();
}

std::string strings_json(const std::vector<std::string>& strings) {
  JsonArray a;
  for (const std::string& s : strings) a.str(s);
  return a.done();
}

// A non-negative integer that fits int64 (counts, seqs, sizes: SQLite's integers).
Result<uint64_t> read_count(const json::Object& o, std::string_view name) {
  uint64_t v = 0;
  AURA_ASSIGN_OR_RETURN(v, o.required_u64(name));
  if (v > uint64_t(INT64_MAX)) return o.error(name, "larger than 2^63-1");
  return v;
}

Result<std::string> read_string(const json::Object& o, std::string_view name) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_string(name));
  return std::string(v);
}

Result<std::string> read_enum(const json::Object& o, std::string_view name,
                              std::span<const std::string_view> allowed) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_enum(name, allowed));
  return std::string(v);
}

Result<std::string> read_hex(const json::Object& o, std::string_view name) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, read_sha256_hex(o, name));
  return std::string(v);
}

Result<std::optional<std::string>> read_string_or_null(const json::Object& o,
                                                       std::string_view name) {
  std::optional<std::string_view> v;
  AURA_ASSIGN_OR_RETURN(v, o.string_or_null(name));
  if (!v) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*v));
}

Result<std::vector<std::string>> read_strings(const json::Array& a) {
  std::vector<std::string_view> views;
  AURA_ASSIGN_OR_RETURN(views, a.strings());
  return std::vector<std::string>(views.begin(), views.end());
}

// Opens `e`'s payload and reads its "attempt" (PayloadReader checked it against the stream).
Result<json::Object> open(PayloadReader& r, const EventView& e, std::string& attempt) {
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, r.open(e));
  AURA_ASSIGN_OR_RETURN(attempt, read_string(o, "attempt"));
  return o;
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
  return header(attempt)
      .num("probe", probe)
      .str("evidence", evidence)
      .num("exit_code", exit_code)
      .boolean("truncated", truncated)
      .str("error", error.value_or(""))
      .raw("resolved", strings_json(resolved))
      .raw("refs", refs_json(refs))
      .done();
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

// ---- action.completed ----

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
  if (auto call = o.optional_value("call")) {
    p.call = call->minified();
  } else {
    AURA_ASSIGN_OR_RETURN(p.script_sha256, read_hex(o, "script_sha256"));
  }
  AURA_ASSIGN_OR_RETURN(p.exit_code, o.required_i64("exit_code"));
  AURA_ASSIGN_OR_RETURN(p.error, read_string_or_null(o, "error"));
  std::optional<bool> truncated;
  AURA_ASSIGN_OR_RETURN(truncated, o.optional_bool("truncated"));
  p.truncated = truncated.value_or(false);
  std::optional<json::Array> resolved;
  AURA_ASSIGN_OR_RETURN(resolved, o.optional_array("resolved"));
  if (resolved) AURA_ASSIGN_OR_RETURN(p.resolved, read_strings(*resolved));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
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
  return header(attempt)
      .num("gate", gate)
      .str("property", property)
      .str("status", status)
      .str("reason", reason)
      .raw("cited", seqs_json(cited))
      .done();
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

// ---- attempt.abandoned ----

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
