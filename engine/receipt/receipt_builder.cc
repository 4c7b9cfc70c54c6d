#include "engine/receipt/receipt_builder.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include "engine/common/json_writer.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/receipt/raw_json.h"
#include "engine/receipt/receipt_format.h"

// Declares `lhs` from a Result, returning its status when it is an error.
#define RECEIPT_LET_OR_RETURN(lhs, expr)                \
  auto lhs##_result = (expr);                           \
  if (!lhs##_result.ok()) return lhs##_result.status(); \
  auto lhs = std::move(lhs##_result).value()

namespace aura::receipt {
namespace {

namespace rf = receipt_format;

// Stream events read before the range is cut at the verdict (a few follow it: receipt.issued,
// the reflection); more is refused rather than read without bound.
constexpr size_t kMaxStreamEvents = rf::kMaxEvents + 256;
constexpr size_t kMaxPayloadBytes = 8 << 20;

bool valid_attempt_id(std::string_view id) {
  return id.size() == rf::kAttemptIdHexDigits && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// One event's payload, parsed; every error names the stream, seq, type and member.
class Payload {
 public:
  static Result<Payload> parse(const StoredEvent& ev, std::string_view attempt) {
    Payload p;
    p.where_ = ev.stream + " seq " + std::to_string(ev.seq) + " (" + ev.type + ")";
    auto minified = minify_json(ev.payload, kMaxPayloadBytes, p.where_);
    if (!minified.ok()) return Status::corruption(minified.status().message());
    p.text_ = std::make_unique<std::string>(std::move(minified).value());
    p.parser_ = std::make_unique<simdjson::dom::parser>();
    simdjson::dom::element root;
    if (p.parser_->parse(*p.text_).get(root) != simdjson::SUCCESS ||
        root.get_object().get(p.object_) != simdjson::SUCCESS) {
      return p.error("payload is not a JSON object");
    }
    if (Status s = check_unique_members(p.object_, p.where_); !s.is_ok()) {
      return Status::corruption(s.message());
    }
    auto raw = raw_members(*p.text_, p.where_);
    if (!raw.ok()) return Status::corruption(raw.status().message());
    p.raw_ = std::move(raw).value();
    auto v = p.u64("v");
    if (!v.ok()) return v.status();
    if (*v != 1) return p.error("\"v\" is " + std::to_string(*v) + ", expected 1");
    auto a = p.str("attempt");
    if (!a.ok()) return a.status();
    if (*a != attempt) return p.error("\"attempt\" names another attempt");
    return p;
  }

  Status error(const std::string& what) const { return Status::corruption(where_ + ": " + what); }
  bool has(std::string_view key) const { return object_.at_key(key).error() == simdjson::SUCCESS; }

  Result<simdjson::dom::element> element(std::string_view key) const {
    simdjson::dom::element e;
    if (object_.at_key(key).get(e) != simdjson::SUCCESS) return missing(key);
    return e;
  }
  Result<std::string_view> str(std::string_view key) const {
    auto e = element(key);
    if (!e.ok()) return e.status();
    std::string_view s;
    if (e->get_string().get(s) != simdjson::SUCCESS) return wrong(key, "a string");
    return s;
  }
  Result<uint64_t> u64(std::string_view key) const {
    auto e = element(key);
    if (!e.ok()) return e.status();
    uint64_t v = 0;
    if (e->get_uint64().get(v) != simdjson::SUCCESS) return wrong(key, "a non-negative integer");
    return v;
  }
  Result<bool> boolean(std::string_view key) const {
    auto e = element(key);
    if (!e.ok()) return e.status();
    bool v = false;
    if (e->get_bool().get(v) != simdjson::SUCCESS) return wrong(key, "a boolean");
    return v;
  }
  Result<std::string_view> hex64(std::string_view key) const {
    auto s = str(key);
    if (!s.ok()) return s.status();
    if (!is_lower_hex64(*s)) return wrong(key, "64 lowercase hex digits");
    return *s;
  }
  // The member's exact bytes; `open` ('{' or '[') says which kind of value it must be.
  Result<std::string_view> raw(std::string_view key, char open) const {
    auto r = raw_member(raw_, key, where_);
    if (!r.ok()) return Status::corruption(r.status().message());
    if (r->empty() || r->front() != open) return wrong(key, open == '{' ? "an object" : "an array");
    return *r;
  }

 private:
  Status missing(std::string_view key) const {
    return error("no member \"" + std::string(key) + "\"");
  }
  Status wrong(std::string_view key, std::string_view what) const {
    return error("\"" + std::string(key) + "\" is not " + std::string(what));
  }

  std::string where_;
  std::unique_ptr<std::string> text_;  // the minified payload; raw_ points into it
  std::unique_ptr<simdjson::dom::parser> parser_;
  simdjson::dom::object object_;
  std::vector<RawMember> raw_;
};

// A string member of a nested object, for the scenario section.
Result<std::string_view> nested_str(const Payload& p, simdjson::dom::object o,
                                    std::string_view object_name, std::string_view key) {
  std::string_view s;
  if (o.at_key(key).get_string().get(s) != simdjson::SUCCESS) {
    return p.error("\"" + std::string(object_name) + "." + std::string(key) +
                   "\" is missing or not a string");
  }
  return s;
}

Result<std::string> scenario_section(const Payload& p) {
  RECEIPT_LET_OR_RETURN(e, p.element("scenario"));
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return p.error("\"scenario\" is not an object");
  if (Status s = check_unique_members(o, "scenario"); !s.is_ok()) return p.error(s.message());
  JsonWriter w;
  for (std::string_view key : {"id", "version", "package_digest", "manifest_sha256"}) {
    RECEIPT_LET_OR_RETURN(v, nested_str(p, o, "scenario", key));
    if (key == "manifest_sha256" && !is_lower_hex64(v)) {
      return p.error("\"scenario.manifest_sha256\" is not 64 lowercase hex digits");
    }
    w.str(key, v);
  }
  return w.done();
}

// The ref named `id` of kind `kind` in the event's refs.
Result<EvidenceRef> find_ref(const StoredEvent& ev, const Payload& p, std::string_view id,
                             std::string_view kind) {
  auto refs = extract_refs(ev.payload);
  if (!refs.ok()) return p.error(refs.status().message());
  for (const auto& r : *refs) {
    if (r.id != id) continue;
    if (r.kind != kind) return p.error("ref " + r.id + " has kind " + r.kind);
    return r;
  }
  return p.error("no ref with id " + std::string(id));
}

Result<std::vector<uint64_t>> u64_array(const Payload& p, std::string_view key) {
  RECEIPT_LET_OR_RETURN(e, p.element(key));
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) {
    return p.error("\"" + std::string(key) + "\" is not an array");
  }
  std::vector<uint64_t> out;
  for (auto x : a) {
    uint64_t v = 0;
    if (x.get_uint64().get(v) != simdjson::SUCCESS) {
      return p.error("\"" + std::string(key) + "\" holds a value that is not a seq");
    }
    out.push_back(v);
  }
  return out;
}

std::string seq_array(const std::vector<uint64_t>& seqs) {
  JsonArray a;
  for (uint64_t s : seqs) a.raw(std::to_string(s));
  return a.done();
}

// What one gate.fact event records.
struct FactRecord {
  gate::Fact fact;
  bool has_value = false;
  std::string json;  // the receipt's form of it
};

Result<FactRecord> parse_fact(const StoredEvent& ev, const Payload& p) {
  FactRecord r;
  r.fact.seq = ev.seq;
  RECEIPT_LET_OR_RETURN(property, p.str("property"));
  RECEIPT_LET_OR_RETURN(world, p.str("world"));
  RECEIPT_LET_OR_RETURN(stage, p.str("stage"));
  RECEIPT_LET_OR_RETURN(check, p.str("check"));
  RECEIPT_LET_OR_RETURN(ok, p.boolean("ok"));
  auto prop = gate::parse_property(property);
  if (!prop) return p.error("\"property\" is not a gate property");
  auto st = gate::parse_stage(stage);
  if (!st) return p.error("\"stage\" is not a gate stage");
  r.fact.property = *prop;
  r.fact.world = std::string(world);
  r.fact.stage = *st;
  r.fact.check = std::string(check);
  r.fact.ok = ok;
  JsonWriter w;
  w.num("seq", ev.seq)
      .str("property", property)
      .str("world", world)
      .str("stage", stage)
      .str("check", check)
      .boolean("ok", ok);
  if (p.has("value")) {
    RECEIPT_LET_OR_RETURN(value, p.str("value"));
    r.fact.value = std::string(value);
    r.has_value = true;
    w.str("value", value);
  }
  r.json = w.done();
  return r;
}

// The IR blob of the revision the gate ran, and the submission that referenced it.
struct Submission {
  uint64_t seq = 0;
  std::string ir_json;
  std::string actions, rollback;  // minified arrays
};

Result<Submission> load_submission(const std::vector<StoredEvent>& evs, std::string_view attempt,
                                   uint64_t gate_seq, uint64_t revision, std::string_view ir_sha256,
                                   const BlobStore& blobs) {
  const StoredEvent* found = nullptr;
  for (const auto& ev : evs) {
    if (ev.seq >= gate_seq || ev.type != "intervention.submitted") continue;
    RECEIPT_LET_OR_RETURN(p, Payload::parse(ev, attempt));
    RECEIPT_LET_OR_RETURN(rev, p.u64("revision"));
    if (rev != revision) continue;
    if (found != nullptr) {
      return p.error("a second submission of revision " + std::to_string(revision));
    }
    found = &ev;
  }
  const std::string rev = std::to_string(revision);
  if (found == nullptr) {
    return Status::corruption("attempt/" + std::string(attempt) +
                              ": no intervention.submitted of revision " + rev +
                              " before the gate");
  }
  RECEIPT_LET_OR_RETURN(p, Payload::parse(*found, attempt));
  RECEIPT_LET_OR_RETURN(submitted_sha, p.hex64("ir_sha256"));
  if (submitted_sha != ir_sha256) {
    return p.error("\"ir_sha256\" differs from the gate.started's");
  }
  RECEIPT_LET_OR_RETURN(ref, find_ref(*found, p, "ir-" + rev, "intervention.ir"));
  if (to_hex(ref.sha256) != ir_sha256) return p.error("ref ir-" + rev + " is not the IR digest");
  if (ref.bytes > intervention::kMaxIrBytes) {
    return p.error("ref ir-" + rev + " is over the IR size limit");
  }
  auto bytes = blobs.get(ref.sha256);
  if (!bytes.ok()) return bytes.status().with_context("IR blob ir-" + rev);
  Submission s;
  s.seq = found->seq;
  s.ir_json = std::move(bytes).value();
  const std::string what = "IR blob ir-" + rev;
  auto minified = minify_json(s.ir_json, intervention::kMaxIrBytes, what);
  if (!minified.ok()) return Status::corruption(minified.status().message());
  auto members = raw_members(*minified, what);
  if (!members.ok()) return Status::corruption(members.status().message());
  for (auto [name, out] : {std::pair<std::string_view, std::string*>{"actions", &s.actions},
                           {"rollback", &s.rollback}}) {
    auto raw = raw_member(*members, name, what);
    if (!raw.ok()) return Status::corruption(raw.status().message());
    if (raw->front() != '[') {
      return Status::corruption(what + ": \"" + std::string(name) + "\" is not an array");
    }
    *out = std::string(*raw);
  }
  return s;
}

}  // namespace

std::string_view ReceiptSections::section(std::string_view name) const {
  const std::array<std::pair<std::string_view, const std::string*>, 9> all = {{
      {"scenario", &scenario},
      {"environment", &environment},
      {"intervention", &intervention},
      {"actions", &actions},
      {"facts", &facts},
      {"gate", &gate},
      {"rollback", &rollback},
      {"model_assistance", &model_assistance},
      {"events", &events},
  }};
  for (const auto& [n, s] : all) {
    if (n == name) return *s;
  }
  return {};
}

Result<ReceiptSections> build_sections(const EventLog& log, const BlobStore& blobs,
                                       std::string_view attempt_id, uint64_t verdict_seq) {
  if (!valid_attempt_id(attempt_id)) {
    return Status::invalid("attempt id must be 16 lowercase hex digits");
  }
  ReceiptSections s;
  s.attempt = std::string(attempt_id);
  s.stream = "attempt/" + s.attempt;

  std::vector<StoredEvent> evs;
  bool too_many = false;
  AURA_RETURN_IF_ERROR(log.read_stream(s.stream, 1,
                                       [&](const EventView& v) {
                                         if (verdict_seq != 0 && v.seq > verdict_seq) return false;
                                         if (evs.size() == kMaxStreamEvents) {
                                           too_many = true;
                                           return false;
                                         }
                                         evs.push_back(StoredEvent::from_view(v));
                                         return true;
                                       })
                           .with_context("read " + s.stream));
  if (evs.empty()) return Status::not_found("no events in stream " + s.stream);
  if (too_many) {
    return Status::failed_precondition(s.stream + " has more than " +
                                       std::to_string(kMaxStreamEvents) + " events");
  }

  // The range ends at the verdict.
  size_t end = evs.size();
  if (verdict_seq != 0) {
    if (evs.back().seq != verdict_seq || evs.back().type != "gate.verdict") {
      return Status::corruption("seq " + std::to_string(verdict_seq) +
                                " is not a gate.verdict of " + s.stream);
    }
  } else {
    while (end > 0 && evs[end - 1].type != "gate.verdict") --end;
    if (end == 0) {
      return Status::failed_precondition(s.stream +
                                         " has no gate verdict; a receipt needs VERIFIED");
    }
    evs.resize(end);
  }
  if (evs.size() > rf::kMaxEvents) {
    return Status::failed_precondition(s.stream + " has " + std::to_string(evs.size()) +
                                       " events up to its verdict; a receipt covers at most " +
                                       std::to_string(rf::kMaxEvents));
  }
  const StoredEvent& started = evs.front();
  const StoredEvent& verdict_ev = evs.back();
  if (started.type != "attempt.started") {
    return Status::corruption(s.stream + " does not begin with attempt.started");
  }
  s.first_seq = started.seq;
  s.last_seq = verdict_ev.seq;

  // The verdict, and the gate it closes.
  RECEIPT_LET_OR_RETURN(vp, Payload::parse(verdict_ev, s.attempt));
  if (verdict_ev.actor != "engine") return vp.error("actor is not the engine");
  RECEIPT_LET_OR_RETURN(verdict, vp.str("verdict"));
  RECEIPT_LET_OR_RETURN(recovered, vp.boolean("recovered"));
  RECEIPT_LET_OR_RETURN(gate_seq, vp.u64("gate"));
  RECEIPT_LET_OR_RETURN(result, vp.raw("result", '{'));
  if (verdict != gate::verdict_name(gate::Verdict::kVerified)) {
    return Status::failed_precondition(s.stream + ": the gate verdict at seq " +
                                       std::to_string(s.last_seq) + " is " + std::string(verdict) +
                                       "; receipts are issued only for VERIFIED");
  }
  s.verdict_result = std::string(result);
  s.gate_seq = gate_seq;
  auto gate_it = std::find_if(evs.begin(), evs.end(),
                              [&](const StoredEvent& ev) { return ev.seq == gate_seq; });
  if (gate_it == evs.end() || gate_it->type != "gate.started" || gate_it->actor != "engine") {
    return vp.error("\"gate\" is not an engine gate.started of this attempt");
  }
  RECEIPT_LET_OR_RETURN(gp, Payload::parse(*gate_it, s.attempt));
  RECEIPT_LET_OR_RETURN(revision, gp.u64("revision"));
  RECEIPT_LET_OR_RETURN(ir_sha256, gp.hex64("ir_sha256"));
  RECEIPT_LET_OR_RETURN(environment, gp.raw("environment", '{'));
  s.environment = std::string(environment);

  // The scenario and its manifest.
  RECEIPT_LET_OR_RETURN(sp, Payload::parse(started, s.attempt));
  RECEIPT_LET_OR_RETURN(scenario, scenario_section(sp));
  s.scenario = std::move(scenario);
  RECEIPT_LET_OR_RETURN(manifest_ref, find_ref(started, sp, "manifest", "scenario.manifest"));
  if (s.scenario.find("\"manifest_sha256\":\"" + to_hex(manifest_ref.sha256) + "\"") ==
      std::string::npos) {
    return sp.error("ref manifest is not the scenario's manifest_sha256");
  }
  s.manifest_ref = manifest_ref;

  // The intervention the gate ran.
  RECEIPT_LET_OR_RETURN(sub, load_submission(evs, s.attempt, gate_seq, revision, ir_sha256, blobs));
  s.ir_json = std::move(sub.ir_json);
  s.actions = sub.actions;
  s.intervention = JsonWriter()
                       .num("revision", revision)
                       .str("ir_sha256", ir_sha256)
                       .raw("actions", s.actions)
                       .done();

  // Evidence, facts, property results and model assistance, in log order.
  JsonArray before, after, calls;
  std::vector<uint64_t> reversal_facts;
  std::array<std::optional<std::pair<uint64_t, std::string>>, 5> properties;
  size_t call_count = 0;
  for (const auto& ev : evs) {
    const bool in_gate = ev.seq > gate_seq;
    if (ev.type == "probe.completed" && ev.actor == "supervisor" && ev.seq < sub.seq) {
      RECEIPT_LET_OR_RETURN(p, Payload::parse(ev, s.attempt));
      RECEIPT_LET_OR_RETURN(evidence, p.str("evidence"));
      s.unlocked_evidence.insert(std::string(evidence));
    } else if (ev.type == "gate.fact" && ev.actor == "supervisor" && in_gate) {
      RECEIPT_LET_OR_RETURN(p, Payload::parse(ev, s.attempt));
      RECEIPT_LET_OR_RETURN(g, p.u64("gate"));
      if (g != gate_seq) continue;
      RECEIPT_LET_OR_RETURN(f, parse_fact(ev, p));
      (f.fact.stage == gate::Stage::kBefore ? before : after).raw(f.json);
      if (f.fact.property == gate::Property::kReversal) reversal_facts.push_back(ev.seq);
      s.grader_facts.push_back(std::move(f.fact));
    } else if (ev.type == "gate.property" && ev.actor == "engine" && in_gate) {
      RECEIPT_LET_OR_RETURN(p, Payload::parse(ev, s.attempt));
      RECEIPT_LET_OR_RETURN(g, p.u64("gate"));
      if (g != gate_seq) continue;
      RECEIPT_LET_OR_RETURN(property, p.str("property"));
      RECEIPT_LET_OR_RETURN(status, p.str("status"));
      RECEIPT_LET_OR_RETURN(reason, p.str("reason"));
      RECEIPT_LET_OR_RETURN(cited, u64_array(p, "cited"));
      const auto prop = gate::parse_property(property);
      if (!prop) return p.error("\"property\" is not a gate property");
      if (status != "pass" && status != "fail" && status != "not_run") {
        return p.error("\"status\" is not pass, fail or not_run");
      }
      auto& slot = properties[size_t(*prop)];
      if (slot) {
        return p.error("a second result for property " + std::string(property) + " (first at seq " +
                       std::to_string(slot->first) + ")");
      }
      if (status == "not_run") s.not_run.push_back(*prop);
      slot.emplace(ev.seq, JsonWriter()
                               .str("property", property)
                               .str("status", status)
                               .str("reason", reason)
                               .raw("cited", seq_array(cited))
                               .done());
    } else if (ev.type == "coach.used" && ev.actor == "engine") {
      RECEIPT_LET_OR_RETURN(p, Payload::parse(ev, s.attempt));
      RECEIPT_LET_OR_RETURN(call, p.u64("call"));
      RECEIPT_LET_OR_RETURN(request, p.hex64("request_sha256"));
      RECEIPT_LET_OR_RETURN(response, p.hex64("response_sha256"));
      RECEIPT_LET_OR_RETURN(model, p.str("model"));
      calls.raw(JsonWriter()
                    .num("call", call)
                    .str("request_sha256", request)
                    .str("response_sha256", response)
                    .str("model", model)
                    .done());
      ++call_count;
    }
  }
  s.facts = JsonWriter().raw("before", before.done()).raw("after", after.done()).done();

  JsonArray props;
  for (gate::Property p : gate::kProperties) {
    const auto& slot = properties[size_t(p)];
    if (!slot) {
      return Status::corruption(s.stream + ": no gate.property for " +
                                std::string(gate::property_name(p)) + " in gate " +
                                std::to_string(gate_seq));
    }
    props.raw(slot->second);
  }
  s.gate = JsonWriter()
               .boolean("recovered", recovered)
               .str("verdict", verdict)
               .raw("properties", props.done())
               .done();
  s.rollback =
      JsonWriter().raw("actions", sub.rollback).raw("facts", seq_array(reversal_facts)).done();
  s.model_assistance =
      JsonWriter().boolean("used", call_count > 0).raw("calls", calls.done()).done();

  JsonArray leaves;
  for (const auto& ev : evs) {
    s.leaves.emplace_back(ev.seq, ev.hash);
    leaves.raw(JsonWriter().num("seq", ev.seq).str("hash", to_hex(ev.hash)).done());
  }
  s.events = JsonWriter()
                 .str("stream", s.stream)
                 .num("first_seq", s.first_seq)
                 .num("last_seq", s.last_seq)
                 .num("count", uint64_t(evs.size()))
                 .raw("leaves", leaves.done())
                 .done();
  return s;
}

}  // namespace aura::receipt

#undef RECEIPT_LET_OR_RETURN
