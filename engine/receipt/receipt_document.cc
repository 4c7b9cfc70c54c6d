#include "engine/receipt/receipt_document.h"

#include <simdjson.h>

#include <algorithm>
#include <initializer_list>

#include "engine/gate/grader.h"
#include "engine/receipt/receipt_format.h"

namespace aura::receipt {
namespace {

namespace rf = receipt_format;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string index_field(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

// Reads typed values, keeping the first failure. Every method returns false once one failed.
class Reader {
 public:
  bool fail(const std::string& field, const std::string& what) {
    if (!failure) failure = ReceiptFailure{field, what};
    return false;
  }

  // `e` is an object whose members are exactly `names`, in that order; the last `optional_tail`
  // names may be absent.
  bool members(element e, const std::string& field, std::initializer_list<std::string_view> names,
               object* out, size_t optional_tail = 0) {
    if (failure) return false;
    if (e.get_object().get(*out) != simdjson::SUCCESS) return fail(field, "not an object");
    size_t i = 0;
    for (auto m : *out) {
      if (i >= names.size() || m.key != names.begin()[i]) {
        std::string expected;
        for (auto n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
        return fail(field, "unexpected member \"" + std::string(m.key) + "\"; members are " +
                               expected + ", in that order");
      }
      ++i;
    }
    if (i + optional_tail < names.size()) {
      return fail(field, "no member \"" + std::string(names.begin()[i]) + "\"");
    }
    return true;
  }
  bool u64(element e, const std::string& field, uint64_t* out) {
    if (failure) return false;
    if (e.get_uint64().get(*out) != simdjson::SUCCESS) {
      return fail(field, "not a non-negative integer");
    }
    return true;
  }
  bool str(element e, const std::string& field, std::string* out) {
    if (failure) return false;
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) return fail(field, "not a string");
    *out = std::string(s);
    return true;
  }
  bool boolean(element e, const std::string& field, bool* out) {
    if (failure) return false;
    if (e.get_bool().get(*out) != simdjson::SUCCESS) return fail(field, "not a boolean");
    return true;
  }
  bool hex64(element e, const std::string& field, std::string* out) {
    if (!str(e, field, out)) return false;
    if (!is_lower_hex64(*out)) return fail(field, "not 64 lowercase hex digits");
    return true;
  }
  bool digest(element e, const std::string& field, Digest* out) {
    std::string hex;
    if (!hex64(e, field, &hex)) return false;
    *out = *digest_from_hex(hex);
    return true;
  }
  bool list(element e, const std::string& field, size_t max, array* out) {
    if (failure) return false;
    if (e.get_array().get(*out) != simdjson::SUCCESS) return fail(field, "not an array");
    if (out->size() > max) return fail(field, "more than " + std::to_string(max) + " entries");
    return true;
  }
  bool seqs(element e, const std::string& field, std::vector<uint64_t>* out) {
    array a;
    if (!list(e, field, rf::kMaxEvents, &a)) return false;
    size_t i = 0;
    for (auto x : a) {
      uint64_t v = 0;
      if (!u64(x, index_field(field, i++), &v)) return false;
      out->push_back(v);
    }
    return true;
  }

  std::optional<ReceiptFailure> failure;
};

element at(object o, std::string_view key) { return o.at_key(key).value_unsafe(); }

void read_scenario(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "scenario", {"id", "version", "package_digest", "manifest_sha256"}, &o)) return;
  std::string ignored;
  r.str(at(o, "id"), "scenario.id", &d.scenario_id);
  r.str(at(o, "version"), "scenario.version", &ignored);
  r.str(at(o, "package_digest"), "scenario.package_digest", &ignored);
  r.hex64(at(o, "manifest_sha256"), "scenario.manifest_sha256", &ignored);
}

void read_environment(Reader& r, element e, ReceiptDocument& d) {
  object o;
  const auto& m = rf::kEnvironmentMembers;
  if (!r.members(e, "environment", {m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]}, &o)) return;
  static_assert(rf::kEnvironmentMembers.size() == 8, "read_environment lists every member");
  std::string text;
  uint64_t caps_seq = 0;
  r.str(at(o, "kernel_release"), "environment.kernel_release", &text);
  if (r.hex64(at(o, "lab_build_digest"), "environment.lab_build_digest", &d.lab_build_digest) &&
      d.lab_build_digest == rf::kUnknownDigest) {
    r.fail("environment.lab_build_digest", "a placeholder (all zeros): the lab build is unknown");
  }
  r.hex64(at(o, "sandbox_profile_digest"), "environment.sandbox_profile_digest", &text);
  r.hex64(at(o, "capability_snapshot_digest"), "environment.capability_snapshot_digest", &text);
  if (r.u64(at(o, "capabilities_seq"), "environment.capabilities_seq", &caps_seq) &&
      caps_seq == 0) {
    r.fail("environment.capabilities_seq", "seqs start at 1");
  }
  object bins;
  if (r.failure) return;
  if (at(o, "binaries").get_object().get(bins) != simdjson::SUCCESS) {
    r.fail("environment.binaries", "not an object");
    return;
  }
  size_t n = 0;
  std::string_view previous;
  for (auto field : bins) {
    const std::string f = "environment.binaries." + std::string(field.key);
    if (n > 0 && field.key <= previous) {
      r.fail(f, "not after the previous path (the paths are sorted and unique)");
      return;
    }
    previous = field.key;
    if (++n > rf::kMaxBinaries) {
      r.fail("environment.binaries", "more than " + std::to_string(rf::kMaxBinaries) + " entries");
      return;
    }
    if (field.key.empty() || field.key.front() != '/') {
      r.fail(f, "not an absolute path inside the world");
      return;
    }
    if (!r.hex64(field.value, f, &text)) return;
  }
  array images;
  if (!r.list(at(o, "world_images"), "environment.world_images", rf::kMaxWorldImages, &images)) {
    return;
  }
  if (images.size() == 0) r.fail("environment.world_images", "empty");
  size_t i = 0;
  for (auto x : images) {
    const std::string f = index_field("environment.world_images", i++);
    object img;
    if (!r.members(x, f, {"world", "layers", "sha256"}, &img)) return;
    array layers;
    r.str(at(img, "world"), f + ".world", &text);
    if (!r.list(at(img, "layers"), f + ".layers", rf::kMaxLayers, &layers)) return;
    size_t j = 0;
    for (auto l : layers) r.str(l, index_field(f + ".layers", j++), &text);
    r.hex64(at(img, "sha256"), f + ".sha256", &text);
  }
  r.seqs(at(o, "worlds"), "environment.worlds", &d.world_seqs);
  if (!r.failure && d.world_seqs.empty()) r.fail("environment.worlds", "empty");
}

void read_evidence(Reader& r, element e, ReceiptDocument& d) {
  array a;
  if (!r.list(e, "evidence", rf::kMaxEvidence, &a)) return;
  if (a.size() == 0) r.fail("evidence", "empty: an InterventionIR cites at least one EvidenceRef");
  size_t i = 0;
  const auto& m = rf::kEvidenceMembers;
  for (auto x : a) {
    const std::string f = index_field("evidence", i++);
    object ev;
    if (!r.members(x, f, {m[0], m[1], m[2], m[3], m[4]}, &ev)) return;
    std::string text;
    uint64_t bytes = 0, seq = 0;
    r.str(at(ev, "id"), f + ".id", &text);
    r.str(at(ev, "kind"), f + ".kind", &text);
    r.hex64(at(ev, "sha256"), f + ".sha256", &text);
    r.u64(at(ev, "bytes"), f + ".bytes", &bytes);
    r.u64(at(ev, "seq"), f + ".seq", &seq);
    d.evidence_seqs.push_back(seq);
  }
}

void read_intervention(Reader& r, element e) {
  object o;
  if (!r.members(e, "intervention", {"revision", "ir_sha256", "actions"}, &o)) return;
  uint64_t revision = 0;
  std::string hex;
  array actions;
  if (r.u64(at(o, "revision"), "intervention.revision", &revision) && revision == 0) {
    r.fail("intervention.revision", "revisions start at 1");
  }
  r.hex64(at(o, "ir_sha256"), "intervention.ir_sha256", &hex);
  r.list(at(o, "actions"), "intervention.actions", SIZE_MAX, &actions);
}

void read_facts(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "facts", {"before", "after"}, &o)) return;
  for (std::string_view side : {"before", "after"}) {
    const std::string field = "facts." + std::string(side);
    array a;
    if (!r.list(at(o, side), field, rf::kMaxEvents, &a)) return;
    size_t i = 0;
    for (auto x : a) {
      const std::string f = index_field(field, i++);
      object fact;
      if (!r.members(x, f, {"seq", "property", "world", "stage", "check", "ok", "value"}, &fact,
                     1)) {
        return;
      }
      uint64_t seq = 0;
      std::string property, world, stage, check, value;
      bool ok = false;
      r.u64(at(fact, "seq"), f + ".seq", &seq);
      r.str(at(fact, "property"), f + ".property", &property);
      r.str(at(fact, "world"), f + ".world", &world);
      r.str(at(fact, "stage"), f + ".stage", &stage);
      r.str(at(fact, "check"), f + ".check", &check);
      r.boolean(at(fact, "ok"), f + ".ok", &ok);
      element v;
      if (fact.at_key("value").get(v) == simdjson::SUCCESS) r.str(v, f + ".value", &value);
      if (r.failure) return;
      if (!gate::parse_property(property)) {
        r.fail(f + ".property", "not a gate property");
        return;
      }
      const auto st = gate::parse_stage(stage);
      if (!st) {
        r.fail(f + ".stage", "not a gate stage");
        return;
      }
      if ((side == "before") != (*st == gate::Stage::kBefore)) {
        r.fail(f + ".stage", "a fact at " + stage + " listed under " + std::string(side));
        return;
      }
      d.fact_seqs.push_back(seq);
    }
  }
}

void read_gate(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "gate", {"recovered", "verdict", "properties"}, &o)) return;
  r.boolean(at(o, "recovered"), "gate.recovered", &d.recovered);
  // The receipt field, not the event type: NOLINT(event-type)
  r.str(at(o, "verdict"), "gate.verdict", &d.verdict);
  array a;
  if (!r.list(at(o, "properties"), "gate.properties", 5, &a)) return;
  size_t i = 0;
  for (auto x : a) {
    const std::string f = index_field("gate.properties", i++);
    object p;
    if (!r.members(x, f, {"property", "status", "reason", "cited"}, &p)) return;
    ReceiptDocument::PropertyClaim c;
    r.str(at(p, "property"), f + ".property", &c.property);
    r.str(at(p, "status"), f + ".status", &c.status);
    r.str(at(p, "reason"), f + ".reason", &c.reason);
    r.seqs(at(p, "cited"), f + ".cited", &c.cited);
    d.properties.push_back(std::move(c));
  }
}

void read_rollback(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "rollback", {"actions", "facts"}, &o)) return;
  array actions;
  r.list(at(o, "actions"), "rollback.actions", SIZE_MAX, &actions);
  r.seqs(at(o, "facts"), "rollback.facts", &d.rollback_seqs);
}

void read_model_assistance(Reader& r, element e) {
  object o;
  if (!r.members(e, "model_assistance", {"used", "calls"}, &o)) return;
  bool used = false;
  array calls;
  r.boolean(at(o, "used"), "model_assistance.used", &used);
  if (!r.list(at(o, "calls"), "model_assistance.calls", rf::kMaxEvents, &calls)) return;
  size_t i = 0;
  for (auto x : calls) {
    const std::string f = index_field("model_assistance.calls", i++);
    object c;
    if (!r.members(x, f, {"call", "request_sha256", "response_sha256", "model"}, &c)) return;
    uint64_t n = 0;
    std::string s;
    r.u64(at(c, "call"), f + ".call", &n);
    r.hex64(at(c, "request_sha256"), f + ".request_sha256", &s);
    r.hex64(at(c, "response_sha256"), f + ".response_sha256", &s);
    r.str(at(c, "model"), f + ".model", &s);
  }
  if (!r.failure && used != (calls.size() > 0)) {
    r.fail("model_assistance.used", used ? "true with no calls" : "false with calls listed");
  }
}

void read_events(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "events", {"stream", "first_seq", "last_seq", "count", "leaves"}, &o)) return;
  r.str(at(o, "stream"), "events.stream", &d.stream);
  r.u64(at(o, "first_seq"), "events.first_seq", &d.first_seq);
  r.u64(at(o, "last_seq"), "events.last_seq", &d.last_seq);
  r.u64(at(o, "count"), "events.count", &d.count);
  array a;
  if (!r.list(at(o, "leaves"), "events.leaves", rf::kMaxEvents, &a)) return;
  size_t i = 0;
  for (auto x : a) {
    const std::string f = index_field("events.leaves", i++);
    object leaf;
    if (!r.members(x, f, {"seq", "hash"}, &leaf)) return;
    ReceiptDocument::Leaf l;
    r.u64(at(leaf, "seq"), f + ".seq", &l.seq);
    r.digest(at(leaf, "hash"), f + ".hash", &l.hash);
    d.leaves.push_back(l);
  }
}

void read_checkpoint(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "checkpoint", {"size", "note"}, &o)) return;
  r.u64(at(o, "size"), "checkpoint.size", &d.checkpoint_size);
  r.str(at(o, "note"), "checkpoint.note", &d.checkpoint_note);
}

void read_proofs(Reader& r, element e, ReceiptDocument& d) {
  array a;
  if (!r.list(e, "inclusion_proofs", rf::kMaxEvents, &a)) return;
  size_t i = 0;
  for (auto x : a) {
    const std::string f = index_field("inclusion_proofs", i++);
    object p;
    if (!r.members(x, f, {"seq", "hashes"}, &p)) return;
    ReceiptDocument::Proof proof;
    r.u64(at(p, "seq"), f + ".seq", &proof.seq);
    array hashes;
    if (!r.list(at(p, "hashes"), f + ".hashes", rf::kMaxProofHashes, &hashes)) return;
    size_t j = 0;
    for (auto h : hashes) {
      Digest dg{};
      if (!r.digest(h, index_field(f + ".hashes", j++), &dg)) return;
      proof.hashes.push_back(dg);
    }
    d.proofs.push_back(std::move(proof));
  }
}

void read_hashes(Reader& r, element e, ReceiptDocument& d) {
  object o;
  if (!r.members(e, "hashes",
                 {rf::kHashedSections[0], rf::kHashedSections[1], rf::kHashedSections[2],
                  rf::kHashedSections[3], rf::kHashedSections[4], rf::kHashedSections[5],
                  rf::kHashedSections[6], rf::kHashedSections[7], rf::kHashedSections[8],
                  rf::kHashedSections[9]},
                 &o)) {
    return;
  }
  for (std::string_view name : rf::kHashedSections) {
    std::string hex;
    if (!r.hex64(at(o, name), "hashes." + std::string(name), &hex)) return;
    d.hashes.emplace_back(std::string(name), hex);
  }
}

}  // namespace

std::string_view ReceiptDocument::section(std::string_view name) const {
  if (name == "actions") return actions;
  if (std::find(rf::kHashedSections.begin(), rf::kHashedSections.end(), name) ==
      rf::kHashedSections.end()) {
    return {};
  }
  for (const auto& m : members) {
    if (m.key == name) return m.value;
  }
  return {};
}

std::variant<ReceiptDocument, ReceiptFailure> parse_receipt_document(std::string_view payload) {
  static_assert(rf::kHashedSections.size() == 10, "read_hashes lists every section");
  auto minified = minify_json(payload, rf::kMaxEnvelopeBytes, "document");
  if (!minified.ok()) return ReceiptFailure{"document", minified.status().message()};
  if (*minified != payload) {
    return ReceiptFailure{"document", "not compact JSON (insignificant whitespace)"};
  }
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(payload.data(), payload.size()).get(root) != simdjson::SUCCESS) {
    return ReceiptFailure{"document", "not JSON"};
  }
  ReceiptDocument d;
  Reader r;
  // The version first, before the members (another version has other members).
  object top;
  if (root.get_object().get(top) != simdjson::SUCCESS)
    return ReceiptFailure{"document", "not an object"};
  {
    element v_e;
    uint64_t v = 0;
    if (top.at_key("v").get(v_e) != simdjson::SUCCESS) return ReceiptFailure{"v", "missing"};
    if (r.u64(v_e, "v", &v) && v != rf::kVersion) {
      return ReceiptFailure{
          "v", "receipt format version " + std::to_string(v) + "; this verifier reads version " +
                   std::to_string(rf::kVersion) +
                   " only (a version 1 receipt has no evidence section and an environment that was "
                   "copied, not recomputed: it is not verified here)"};
    }
    if (r.failure) return *r.failure;
  }
  r.members(root, "document",
            {rf::kMembers[0], rf::kMembers[1], rf::kMembers[2], rf::kMembers[3], rf::kMembers[4],
             rf::kMembers[5], rf::kMembers[6], rf::kMembers[7], rf::kMembers[8], rf::kMembers[9],
             rf::kMembers[10], rf::kMembers[11], rf::kMembers[12], rf::kMembers[13]},
            &top);
  static_assert(rf::kMembers.size() == 14, "parse_receipt_document lists every member");
  if (r.failure) return *r.failure;

  if (r.str(at(top, "attempt"), "attempt", &d.attempt) &&
      (d.attempt.size() != rf::kAttemptIdHexDigits ||
       !std::all_of(d.attempt.begin(), d.attempt.end(),
                    [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))) {
    r.fail("attempt", "not 16 lowercase hex digits");
  }
  read_scenario(r, at(top, "scenario"), d);
  read_environment(r, at(top, "environment"), d);
  read_intervention(r, at(top, "intervention"));
  read_evidence(r, at(top, "evidence"), d);
  read_facts(r, at(top, "facts"), d);
  read_gate(r, at(top, "gate"), d);
  read_rollback(r, at(top, "rollback"), d);
  read_model_assistance(r, at(top, "model_assistance"));
  read_events(r, at(top, "events"), d);
  read_checkpoint(r, at(top, "checkpoint"), d);
  read_proofs(r, at(top, "inclusion_proofs"), d);
  read_hashes(r, at(top, "hashes"), d);
  if (r.failure) return *r.failure;

  // Raw bytes: duplicate members anywhere a section is cut are refused here.
  auto members = raw_members(payload, "document");
  if (!members.ok()) return ReceiptFailure{"document", members.status().message()};
  d.members = std::move(members).value();
  for (std::string_view name : {"environment", "intervention"}) {
    auto inner = raw_members(*raw_member(d.members, name, "document"), name);
    if (!inner.ok()) return ReceiptFailure{std::string(name), inner.status().message()};
    if (name == "intervention") d.actions = *raw_member(*inner, "actions", name);
  }
  return d;
}

}  // namespace aura::receipt
