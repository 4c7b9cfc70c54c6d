#include "engine/receipt/receipt_builder.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>

#include "engine/common/json_writer.h"
#include "engine/events/attempt_events.h"
#include "engine/events/event_types.h"
#include "engine/events/gate_events.h"
#include "engine/events/world_events.h"
#include "engine/gate/change_set.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/receipt/raw_json.h"
#include "engine/receipt/receipt_format.h"
#include "engine/world/world_built.h"

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

// `e` decoded as T through the event catalog (engine/events: no duplicate member, "v":1 first,
// the stream's attempt, typed members); an error is corruption naming the stream, seq and type.
template <class T>
Result<T> decode_event(const StoredEvent& e) {
  thread_local events::PayloadReader reader;
  const EventView v{e.seq, e.prev_hash, e.ts_us, e.stream, e.type, e.actor, e.payload, e.hash};
  auto p = T::decode(reader, v);
  if (!p.ok()) {
    return Status::corruption(e.stream + " seq " + std::to_string(e.seq) + " (" + e.type +
                              "): " + p.status().message());
  }
  return p;
}

// An error about event `e` ("attempt/ID seq N (type): what").
Status event_error(const StoredEvent& e, const std::string& what) {
  return Status::corruption(e.stream + " seq " + std::to_string(e.seq) + " (" + e.type +
                            "): " + what);
}

// The ref named `id` of kind `kind` among a decoded event's refs.
Result<EvidenceRef> find_decoded_ref(const StoredEvent& ev, const std::vector<EvidenceRef>& refs,
                                     std::string_view id, std::string_view kind) {
  for (const auto& r : refs) {
    if (r.id != id) continue;
    if (r.kind != kind) return event_error(ev, "ref " + r.id + " has kind " + r.kind);
    return r;
  }
  return event_error(ev, "no ref with id " + std::string(id));
}

std::string scenario_section(const events::AttemptStarted& started) {
  return JsonWriter()
      .str("id", started.scenario.id)
      .str("version", started.scenario.version)
      .str("package_digest", started.scenario.package_digest)
      .str("manifest_sha256", started.scenario.manifest_sha256)
      .done();
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

FactRecord fact_record(const StoredEvent& ev, const events::GateFact& p) {
  FactRecord r;
  r.fact.seq = ev.seq;
  // The catalog checked the property and the stage against their enumerations.
  r.fact.property = *gate::parse_property(p.property);
  r.fact.world = p.world;
  r.fact.stage = *gate::parse_stage(p.stage);
  r.fact.check = p.check;
  r.fact.ok = p.ok;
  JsonWriter w;
  w.num("seq", ev.seq)
      .str("property", p.property)
      .str("world", p.world)
      .str("stage", p.stage)
      .str("check", p.check)
      .boolean("ok", p.ok);
  if (p.value) {
    r.fact.value = *p.value;
    r.has_value = true;
    w.str("value", *p.value);
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
  std::optional<events::InterventionSubmitted> submitted;
  for (const auto& ev : evs) {
    if (ev.seq >= gate_seq || ev.type != events::kInterventionSubmitted) continue;
    RECEIPT_LET_OR_RETURN(p, decode_event<events::InterventionSubmitted>(ev));
    if (p.revision != revision) continue;
    if (found != nullptr) {
      return event_error(ev, "a second submission of revision " + std::to_string(revision));
    }
    found = &ev;
    submitted = std::move(p);
  }
  (void)attempt;  // the catalog's reader checked each payload's attempt against the stream
  const std::string rev = std::to_string(revision);
  if (found == nullptr) {
    return Status::corruption("attempt/" + std::string(attempt) +
                              ": no intervention.submitted of revision " + rev +
                              " before the gate");
  }
  if (submitted->ir_sha256 != ir_sha256) {
    return event_error(*found, "\"ir_sha256\" differs from the gate.started's");
  }
  RECEIPT_LET_OR_RETURN(ref,
                        find_decoded_ref(*found, submitted->refs, "ir-" + rev, "intervention.ir"));
  if (to_hex(ref.sha256) != ir_sha256)
    return event_error(*found, "ref ir-" + rev + " is not the IR digest");
  if (ref.bytes > intervention::kMaxIrBytes) {
    return event_error(*found, "ref ir-" + rev + " is over the IR size limit");
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

// What one world.built event of the gate records (docs/ATTEMPTS.md).
struct WorldBuilt {
  std::string world;
  std::string profile_sha256, image_sha256;
  std::map<std::string, std::string> binaries;
  std::vector<std::string> layers;
  EvidenceRef profile, sums;
};

Result<WorldBuilt> world_built_record(const StoredEvent& ev, const events::WorldBuilt& p) {
  WorldBuilt w;
  w.world = p.world;
  w.profile_sha256 = p.profile_sha256;
  w.image_sha256 = p.image_sha256;
  // The catalog refused a duplicate path and a digest that is not 64 lowercase hex.
  w.binaries = std::map<std::string, std::string>(p.binaries.begin(), p.binaries.end());
  w.layers = p.layers;
  AURA_ASSIGN_OR_RETURN(w.profile, find_decoded_ref(ev, p.refs, "profile", world::kProfileRefKind));
  AURA_ASSIGN_OR_RETURN(w.sums, find_decoded_ref(ev, p.refs, "sums", world::kSumsRefKind));
  return w;
}

// The evidence section: each EvidenceRef the IR cites, in its order, with the seq of the
// probe.completed that unlocked it before the submission.
Result<std::string> evidence_section(
    const ReceiptSections& s,
    const std::map<std::string, std::pair<uint64_t, EvidenceRef>>& unlocked) {
  simdjson::dom::parser parser;
  simdjson::dom::array cited;
  if (parser.parse(s.ir_json).get_object()["evidence"].get_array().get(cited) !=
      simdjson::SUCCESS) {
    return Status::corruption(s.stream + ": the IR blob has no \"evidence\" array");
  }
  JsonArray out;
  size_t n = 0;
  for (auto e : cited) {
    std::string_view id;
    if (e.get_string().get(id) != simdjson::SUCCESS) {
      return Status::corruption(s.stream + ": the IR cites evidence that is not an id");
    }
    auto it = unlocked.find(std::string(id));
    if (it == unlocked.end()) {
      return Status::corruption(s.stream + ": the IR cites " + std::string(id) +
                                ", which no probe.completed unlocked before the submission");
    }
    if (++n > rf::kMaxEvidence) return Status::corruption(s.stream + ": the IR cites too much");
    const auto& [seq, ref] = it->second;
    out.raw(JsonWriter()
                .str("id", ref.id)
                .str("kind", ref.kind)
                .str("sha256", to_hex(ref.sha256))
                .num("bytes", ref.bytes)
                .num("seq", seq)
                .done());
  }
  return out.done();
}

// The environment section, every part recomputed from the log and its blobs.
Result<std::string> environment_section(
    const EventLog& log, const BlobStore& blobs, const ReceiptSections& s, uint64_t gate_seq,
    std::string_view kernel_release, std::string_view lab_build_digest,
    std::string_view package_digest, const std::vector<std::pair<uint64_t, WorldBuilt>>& worlds) {
  const std::string gate = "gate " + std::to_string(gate_seq);
  // The capability panel: the latest measurement recorded before the gate.
  uint64_t caps_seq = 0;
  Digest caps_digest{};
  AURA_RETURN_IF_ERROR(log.read_stream(std::string(rf::kCapabilityStream), 1,
                                       [&](const EventView& v) {
                                         if (v.seq >= gate_seq) return false;
                                         if (v.type == rf::kCapabilityEventType &&
                                             v.actor == "supervisor") {
                                           caps_seq = v.seq;
                                           caps_digest = sha256(v.payload);
                                         }
                                         return true;
                                       })
                           .with_context("read " + std::string(rf::kCapabilityStream)));
  if (caps_seq == 0) {
    return Status::failed_precondition(
        s.stream + ": no capability panel (capabilities.measured) was recorded before " + gate +
        "; a receipt binds the panel the gate ran under ('aura caps' or 'aura setup' records it)");
  }
  if (worlds.empty()) {
    return Status::failed_precondition(s.stream + ": " + gate +
                                       " recorded no world.built; a receipt binds what the "
                                       "gate's worlds were built from");
  }
  std::string profile_sha256;
  std::map<std::string, std::string> binaries;
  std::vector<std::pair<std::string, const WorldBuilt*>> images;  // first build of each world
  JsonArray world_seqs;
  for (const auto& [seq, w] : worlds) {
    const std::string where = s.stream + " seq " + std::to_string(seq) + " (world.built)";
    world_seqs.raw(std::to_string(seq));
    // The profile, as stored, is the one the digest names.
    if (to_hex(w.profile.sha256) != w.profile_sha256) {
      return Status::corruption(where + ": ref profile is not profile_sha256");
    }
    auto profile = blobs.get(w.profile.sha256);
    if (!profile.ok()) return profile.status().with_context(where + ": profile blob");
    if (to_hex(sha256(*profile)) != w.profile_sha256) {
      return Status::corruption(where + ": the profile blob does not hash to profile_sha256");
    }
    if (profile_sha256.empty()) profile_sha256 = w.profile_sha256;
    if (w.profile_sha256 != profile_sha256) {
      return Status::corruption(where + ": the gate's worlds ran under different profiles (" +
                                profile_sha256 + ", " + w.profile_sha256 + ")");
    }
    // The image: the package's own SHA256SUMS, under the world's layers.
    if (to_hex(w.sums.sha256) != package_digest) {
      return Status::corruption(where + ": ref sums is not the scenario's package digest");
    }
    auto sums = blobs.get(w.sums.sha256);
    if (!sums.ok()) return sums.status().with_context(where + ": sums blob");
    if (to_hex(sha256(*sums)) != package_digest) {
      return Status::corruption(where + ": the sums blob does not hash to the package digest");
    }
    auto image = world::image_digest(*sums, w.layers);
    if (!image.ok()) return Status::corruption(where + ": " + image.status().message());
    if (to_hex(*image) != w.image_sha256) {
      return Status::corruption(where +
                                ": image_sha256 is not the digest of the package's "
                                "SHA256SUMS lines under its layers (" +
                                to_hex(*image) + ")");
    }
    for (const auto& [path, digest] : w.binaries) {
      auto [it, added] = binaries.emplace(path, digest);
      if (!added && it->second != digest) {
        return Status::corruption(where + ": " + path + " differs from the gate's other worlds");
      }
    }
    auto found = std::find_if(images.begin(), images.end(),
                              [&](const auto& i) { return i.first == w.world; });
    if (found == images.end()) {
      images.emplace_back(w.world, &w);
    } else if (found->second->image_sha256 != w.image_sha256) {
      return Status::corruption(where + ": world " + w.world + " was built from another image");
    }
  }
  if (binaries.size() > rf::kMaxBinaries || images.size() > rf::kMaxWorldImages) {
    return Status::corruption(s.stream + ": " + gate + " recorded too many binaries or worlds");
  }
  JsonWriter bins;
  for (const auto& [path, digest] : binaries) bins.str(path, digest);
  JsonArray imgs;
  for (const auto& [world, w] : images) {
    JsonArray layers;
    for (const auto& l : w->layers) layers.str(l);
    imgs.raw(JsonWriter()
                 .str("world", world)
                 .raw("layers", layers.done())
                 .str("sha256", w->image_sha256)
                 .done());
  }
  return JsonWriter()
      .str("kernel_release", kernel_release)
      .str("lab_build_digest", lab_build_digest)
      .str("sandbox_profile_digest", profile_sha256)
      .str("capability_snapshot_digest", to_hex(caps_digest))
      .num("capabilities_seq", caps_seq)
      .raw("binaries", bins.done())
      .raw("world_images", imgs.done())
      .raw("worlds", world_seqs.done())
      .done();
}

}  // namespace

std::string_view ReceiptSections::section(std::string_view name) const {
  const std::array<std::pair<std::string_view, const std::string*>, 10> all = {{
      {"scenario", &scenario},
      {"environment", &environment},
      {"intervention", &intervention},
      {"actions", &actions},
      {"evidence", &evidence},
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
    if (evs.back().seq != verdict_seq || evs.back().type != events::kGateVerdict) {
      return Status::corruption("seq " + std::to_string(verdict_seq) +
                                " is not a gate.verdict of " + s.stream);
    }
  } else {
    while (end > 0 && evs[end - 1].type != events::kGateVerdict) --end;
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
  if (started.type != events::kAttemptStarted) {
    return Status::corruption(s.stream + " does not begin with attempt.started");
  }
  s.first_seq = started.seq;
  s.last_seq = verdict_ev.seq;

  // The verdict, and the gate it closes.
  RECEIPT_LET_OR_RETURN(vp, Payload::parse(verdict_ev, s.attempt));
  if (verdict_ev.actor != "engine") return vp.error("actor is not the engine");
  RECEIPT_LET_OR_RETURN(verdict_payload, decode_event<events::GateVerdict>(verdict_ev));
  const std::string verdict = verdict_payload.verdict;
  const bool recovered = verdict_payload.recovered;
  const uint64_t gate_seq = verdict_payload.gate;
  // The result's exact bytes, as the log holds them (the receipt binds them).
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
  if (gate_it == evs.end() || gate_it->type != events::kGateStarted || gate_it->actor != "engine") {
    return vp.error("\"gate\" is not an engine gate.started of this attempt");
  }
  RECEIPT_LET_OR_RETURN(gate_started, decode_event<events::GateStarted>(*gate_it));
  const uint64_t revision = gate_started.revision;
  const std::string& ir_sha256 = gate_started.ir_sha256;
  const std::string& kernel_release = gate_started.environment.kernel_release;
  const std::string& lab_build_digest = gate_started.environment.lab_build_digest;
  if (!is_lower_hex64(lab_build_digest) || lab_build_digest == rf::kUnknownDigest) {
    return Status::failed_precondition(
        s.stream + ": the lab build digest of gate " + std::to_string(gate_seq) +
        " is unknown (\"" + std::string(lab_build_digest.substr(0, 64)) +
        "\"); a receipt never binds a placeholder: run the gate with a lab whose own program can "
        "be hashed");
  }

  // The scenario and its manifest.
  RECEIPT_LET_OR_RETURN(started_payload, decode_event<events::AttemptStarted>(started));
  s.scenario = scenario_section(started_payload);
  RECEIPT_LET_OR_RETURN(manifest_ref, find_decoded_ref(started, started_payload.refs, "manifest",
                                                       "scenario.manifest"));
  if (to_hex(manifest_ref.sha256) != started_payload.scenario.manifest_sha256) {
    return event_error(started, "ref manifest is not the scenario's manifest_sha256");
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

  // Evidence, facts, property results, the gate's worlds and model assistance, in log order.
  std::map<std::string, std::pair<uint64_t, EvidenceRef>> unlocked;  // id -> probe.completed
  std::vector<std::pair<uint64_t, WorldBuilt>> worlds;
  JsonArray before, after, calls;
  std::vector<uint64_t> reversal_facts;
  std::array<std::optional<std::pair<uint64_t, std::string>>, 5> properties;
  size_t call_count = 0;
  for (const auto& ev : evs) {
    const bool in_gate = ev.seq > gate_seq;
    if (ev.type == events::kProbeCompleted && ev.actor == "supervisor" && ev.seq < sub.seq) {
      RECEIPT_LET_OR_RETURN(p, decode_event<events::ProbeCompleted>(ev));
      s.unlocked_evidence.insert(p.evidence);
      RECEIPT_LET_OR_RETURN(ref, find_decoded_ref(ev, p.refs, p.evidence, "probe.output"));
      unlocked[p.evidence] = {ev.seq, ref};
    } else if (ev.type == world::kWorldBuiltType && ev.actor == "supervisor" && in_gate) {
      RECEIPT_LET_OR_RETURN(p, decode_event<events::WorldBuilt>(ev));
      if (!p.gate) return event_error(ev, "member \"gate\": missing (a live world in the gate)");
      if (p.gate->gate != gate_seq) continue;
      RECEIPT_LET_OR_RETURN(w, world_built_record(ev, p));
      worlds.emplace_back(ev.seq, std::move(w));
    } else if (ev.type == events::kGateFact && ev.actor == "supervisor" && in_gate) {
      RECEIPT_LET_OR_RETURN(p, decode_event<events::GateFact>(ev));
      if (p.gate != gate_seq) continue;
      FactRecord f = fact_record(ev, p);
      (f.fact.stage == gate::Stage::kBefore ? before : after).raw(f.json);
      if (f.fact.property == gate::Property::kReversal) reversal_facts.push_back(ev.seq);
      if (f.fact.check == gate::kChangesCheck) {
        ReceiptSections::ChangeSetFact c{f.fact, std::nullopt};
        for (const EvidenceRef& ref : p.refs)
          if (ref.id == gate::kChangesRefId && ref.kind == gate::kChangesBlobKind) c.ref = ref;
        s.change_sets.push_back(std::move(c));
      }
      s.grader_facts.push_back(std::move(f.fact));
    } else if (ev.type == events::kGateProperty && ev.actor == "engine" && in_gate) {
      RECEIPT_LET_OR_RETURN(p, decode_event<events::GateProperty>(ev));
      if (p.gate != gate_seq) continue;
      // The catalog checked the property and the status against their enumerations.
      const auto prop = gate::parse_property(p.property);
      if (!prop) return event_error(ev, "\"property\" is not a gate property");
      auto& slot = properties[size_t(*prop)];
      if (slot) {
        return event_error(ev, "a second result for property " + p.property + " (first at seq " +
                                   std::to_string(slot->first) + ")");
      }
      if (p.status == "not_run") s.not_run.push_back(*prop);
      slot.emplace(ev.seq, JsonWriter()
                               .str("property", p.property)
                               .str("status", p.status)
                               .str("reason", p.reason)
                               .raw("cited", seq_array(p.cited))
                               .done());
    } else if (ev.type == events::kCoachUsed && ev.actor == "engine") {
      RECEIPT_LET_OR_RETURN(p, decode_event<events::CoachUsed>(ev));
      calls.raw(JsonWriter()
                    .num("call", p.call)
                    .str("request_sha256", p.request_sha256)
                    .str("response_sha256", p.response_sha256)
                    .str("model", p.model)
                    .done());
      ++call_count;
    }
  }
  s.facts = JsonWriter().raw("before", before.done()).raw("after", after.done()).done();
  RECEIPT_LET_OR_RETURN(evidence, evidence_section(s, unlocked));
  s.evidence = std::move(evidence);
  RECEIPT_LET_OR_RETURN(
      environment, environment_section(log, blobs, s, gate_seq, kernel_release, lab_build_digest,
                                       started_payload.scenario.package_digest, worlds));
  s.environment = std::move(environment);

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
