#include "engine/receipt/receipt_document.h"

#include <algorithm>
#include <initializer_list>

#include "engine/gate/grader.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/json/json_reader.h"
#include "engine/receipt/receipt_format.h"

namespace aura::receipt {
namespace {

namespace rf = receipt_format;
using json::Array;
using json::Object;
using json::Value;

// The document is read whole by the strict reader first (UTF-8, no duplicate member at any depth)
// within bounds no receipt comes near; each list below has its own, tighter bound.
json::Limits document_limits() {
  json::Limits limits;
  limits.max_bytes = rf::kMaxEnvelopeBytes;
  // A receipt nests 6 levels (rollback.actions[i].params.<target>); an IR's actions, copied in
  // verbatim, cannot nest deeper than the IR allows.
  limits.max_depth = intervention::kMaxDepth;
  limits.max_members = rf::kMaxBinaries;  // the widest object: environment.binaries
  limits.max_elements = rf::kMaxEvents;   // the longest lists: leaves, proofs, facts
  // The longest string: a script's text in an action (other strings are digests, names, seqs).
  limits.max_string_bytes = intervention::kMaxScriptBytes;
  // Paths relative to the document: a failure names the field ("facts.after[17].stage").
  limits.style = json::PathStyle::kRelative;
  return limits;
}

// A value's field as a failure names it: its path in the document, "document" for the root.
std::string field_of(const Value& v) { return v.path().empty() ? "document" : v.path(); }

// Reads typed values, keeping the first failure. Every method returns false once one failed.
class Reader {
 public:
  bool fail(const std::string& field, const std::string& what) {
    if (!failure) failure = ReceiptFailure{field, what};
    return false;
  }
  // The reader's refusal of `v` itself, its path moved into the failure's field.
  bool fail(const Value& v, const Status& refused) {
    const std::string head = v.error("").message();  // "<path>: ", or "" at the root
    const std::string& m = refused.message();
    return fail(field_of(v), m.starts_with(head) ? m.substr(head.size()) : m);
  }

  // `v` is an object whose members are exactly `names`, in that order; the last `optional_tail`
  // names may be absent.
  bool members(const Value& v, std::initializer_list<std::string_view> names, Object* out,
               size_t optional_tail = 0) {
    if (failure) return false;
    auto o = v.as_object();
    if (!o.ok()) return fail(v, o.status());
    *out = std::move(o).value();
    size_t i = 0;
    for (std::string_view name : out->names()) {
      if (i >= names.size() || name != names.begin()[i]) {
        std::string expected;
        for (auto n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
        return fail(field_of(v), "unexpected member \"" + std::string(name) + "\"; members are " +
                                     expected + ", in that order");
      }
      ++i;
    }
    if (i + optional_tail < names.size()) {
      return fail(field_of(v), "no member \"" + std::string(names.begin()[i]) + "\"");
    }
    return true;
  }
  bool u64(const Value& v, uint64_t* out) {
    if (failure) return false;
    auto n = v.as_u64();
    if (!n.ok()) return fail(v, n.status());
    *out = *n;
    return true;
  }
  bool str(const Value& v, std::string* out) {
    if (failure) return false;
    auto s = v.as_string();
    if (!s.ok()) return fail(v, s.status());
    *out = std::string(*s);
    return true;
  }
  bool boolean(const Value& v, bool* out) {
    if (failure) return false;
    auto b = v.as_bool();
    if (!b.ok()) return fail(v, b.status());
    *out = *b;
    return true;
  }
  bool hex64(const Value& v, std::string* out) {
    if (!str(v, out)) return false;
    if (!is_lower_hex64(*out)) return fail(field_of(v), "not 64 lowercase hex digits");
    return true;
  }
  bool digest(const Value& v, Digest* out) {
    std::string hex;
    if (!hex64(v, &hex)) return false;
    *out = *digest_from_hex(hex);
    return true;
  }
  bool list(const Value& v, size_t max, Array* out) {
    if (failure) return false;
    auto a = v.as_array(max);
    if (!a.ok()) return fail(v, a.status());
    *out = std::move(a).value();
    return true;
  }
  bool seqs(const Value& v, std::vector<uint64_t>* out) {
    Array a;
    if (!list(v, rf::kMaxEvents, &a)) return false;
    for (const Value& x : a.elements()) {
      uint64_t n = 0;
      if (!u64(x, &n)) return false;
      out->push_back(n);
    }
    return true;
  }

  std::optional<ReceiptFailure> failure;
};

// A member members() has checked is there.
Value at(const Object& o, std::string_view name) { return *o.optional_value(name); }

void read_scenario(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"id", "version", "package_digest", "manifest_sha256"}, &o)) return;
  std::string ignored;
  r.str(at(o, "id"), &d.scenario_id);
  r.str(at(o, "version"), &ignored);
  r.str(at(o, "package_digest"), &ignored);
  r.hex64(at(o, "manifest_sha256"), &ignored);
}

void read_environment(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  const auto& m = rf::kEnvironmentMembers;
  if (!r.members(v, {m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]}, &o)) return;
  static_assert(rf::kEnvironmentMembers.size() == 8, "read_environment lists every member");
  std::string text;
  uint64_t caps_seq = 0;
  r.str(at(o, "kernel_release"), &text);
  if (r.hex64(at(o, "lab_build_digest"), &d.lab_build_digest) &&
      d.lab_build_digest == rf::kUnknownDigest) {
    r.fail("environment.lab_build_digest", "a placeholder (all zeros): the lab build is unknown");
  }
  r.hex64(at(o, "sandbox_profile_digest"), &text);
  r.hex64(at(o, "capability_snapshot_digest"), &text);
  if (r.u64(at(o, "capabilities_seq"), &caps_seq) && caps_seq == 0) {
    r.fail("environment.capabilities_seq", "seqs start at 1");
  }
  if (r.failure) return;
  const Value binaries = at(o, "binaries");
  auto bins = binaries.as_object();
  if (!bins.ok()) {
    r.fail(binaries, bins.status());
    return;
  }
  // At most rf::kMaxBinaries: the reader's bound on every object (document_limits()).
  std::string_view previous;
  size_t n = 0;
  for (std::string_view path : bins->names()) {
    const Value digest = at(*bins, path);
    if (n++ > 0 && path <= previous) {
      r.fail(field_of(digest), "not after the previous path (the paths are sorted and unique)");
      return;
    }
    previous = path;
    if (path.empty() || path.front() != '/') {
      r.fail(field_of(digest), "not an absolute path inside the world");
      return;
    }
    if (!r.hex64(digest, &text)) return;
  }
  Array images;
  if (!r.list(at(o, "world_images"), rf::kMaxWorldImages, &images)) return;
  if (images.size() == 0) r.fail("environment.world_images", "empty");
  for (const Value& x : images.elements()) {
    Object img;
    if (!r.members(x, {"world", "layers", "sha256"}, &img)) return;
    Array layers;
    r.str(at(img, "world"), &text);
    if (!r.list(at(img, "layers"), rf::kMaxLayers, &layers)) return;
    for (const Value& l : layers.elements()) r.str(l, &text);
    r.hex64(at(img, "sha256"), &text);
  }
  r.seqs(at(o, "worlds"), &d.world_seqs);
  if (!r.failure && d.world_seqs.empty()) r.fail("environment.worlds", "empty");
}

void read_evidence(Reader& r, const Value& v, ReceiptDocument& d) {
  Array a;
  if (!r.list(v, rf::kMaxEvidence, &a)) return;
  if (a.size() == 0) r.fail("evidence", "empty: an InterventionIR cites at least one EvidenceRef");
  const auto& m = rf::kEvidenceMembers;
  for (const Value& x : a.elements()) {
    Object ev;
    if (!r.members(x, {m[0], m[1], m[2], m[3], m[4]}, &ev)) return;
    std::string text;
    uint64_t bytes = 0, seq = 0;
    r.str(at(ev, "id"), &text);
    r.str(at(ev, "kind"), &text);
    r.hex64(at(ev, "sha256"), &text);
    r.u64(at(ev, "bytes"), &bytes);
    r.u64(at(ev, "seq"), &seq);
    d.evidence_seqs.push_back(seq);
  }
}

void read_intervention(Reader& r, const Value& v) {
  Object o;
  if (!r.members(v, {"revision", "ir_sha256", "actions"}, &o)) return;
  uint64_t revision = 0;
  std::string hex;
  Array actions;
  if (r.u64(at(o, "revision"), &revision) && revision == 0) {
    r.fail("intervention.revision", "revisions start at 1");
  }
  r.hex64(at(o, "ir_sha256"), &hex);
  r.list(at(o, "actions"), json::kUnbounded, &actions);
}

void read_facts(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"before", "after"}, &o)) return;
  for (std::string_view side : {"before", "after"}) {
    Array a;
    if (!r.list(at(o, side), rf::kMaxEvents, &a)) return;
    for (const Value& x : a.elements()) {
      const std::string f = field_of(x);
      Object fact;
      if (!r.members(x, {"seq", "property", "world", "stage", "check", "ok", "value"}, &fact, 1)) {
        return;
      }
      uint64_t seq = 0;
      std::string property, world, stage, check, value;
      bool ok = false;
      r.u64(at(fact, "seq"), &seq);
      r.str(at(fact, "property"), &property);
      r.str(at(fact, "world"), &world);
      r.str(at(fact, "stage"), &stage);
      r.str(at(fact, "check"), &check);
      r.boolean(at(fact, "ok"), &ok);
      if (auto fact_value = fact.optional_value("value")) r.str(*fact_value, &value);
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

void read_gate(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"recovered", "verdict", "properties"}, &o)) return;
  r.boolean(at(o, "recovered"), &d.recovered);
  // The receipt field, not the event type: NOLINT(event-type)
  r.str(at(o, "verdict"), &d.verdict);
  Array a;
  if (!r.list(at(o, "properties"), 5, &a)) return;
  for (const Value& x : a.elements()) {
    Object p;
    if (!r.members(x, {"property", "status", "reason", "cited"}, &p)) return;
    ReceiptDocument::PropertyClaim c;
    r.str(at(p, "property"), &c.property);
    r.str(at(p, "status"), &c.status);
    r.str(at(p, "reason"), &c.reason);
    r.seqs(at(p, "cited"), &c.cited);
    d.properties.push_back(std::move(c));
  }
}

void read_rollback(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"actions", "facts"}, &o)) return;
  Array actions;
  r.list(at(o, "actions"), json::kUnbounded, &actions);
  r.seqs(at(o, "facts"), &d.rollback_seqs);
}

void read_model_assistance(Reader& r, const Value& v) {
  Object o;
  if (!r.members(v, {"used", "calls"}, &o)) return;
  bool used = false;
  Array calls;
  r.boolean(at(o, "used"), &used);
  if (!r.list(at(o, "calls"), rf::kMaxEvents, &calls)) return;
  for (const Value& x : calls.elements()) {
    Object c;
    if (!r.members(x, {"call", "request_sha256", "response_sha256", "model"}, &c)) return;
    uint64_t n = 0;
    std::string s;
    r.u64(at(c, "call"), &n);
    r.hex64(at(c, "request_sha256"), &s);
    r.hex64(at(c, "response_sha256"), &s);
    r.str(at(c, "model"), &s);
  }
  if (!r.failure && used != (calls.size() > 0)) {
    r.fail("model_assistance.used", used ? "true with no calls" : "false with calls listed");
  }
}

void read_events(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"stream", "first_seq", "last_seq", "count", "leaves"}, &o)) return;
  r.str(at(o, "stream"), &d.stream);
  r.u64(at(o, "first_seq"), &d.first_seq);
  r.u64(at(o, "last_seq"), &d.last_seq);
  r.u64(at(o, "count"), &d.count);
  Array a;
  if (!r.list(at(o, "leaves"), rf::kMaxEvents, &a)) return;
  for (const Value& x : a.elements()) {
    Object leaf;
    if (!r.members(x, {"seq", "hash"}, &leaf)) return;
    ReceiptDocument::Leaf l;
    r.u64(at(leaf, "seq"), &l.seq);
    r.digest(at(leaf, "hash"), &l.hash);
    d.leaves.push_back(l);
  }
}

void read_checkpoint(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v, {"size", "note"}, &o)) return;
  r.u64(at(o, "size"), &d.checkpoint_size);
  r.str(at(o, "note"), &d.checkpoint_note);
}

void read_proofs(Reader& r, const Value& v, ReceiptDocument& d) {
  Array a;
  if (!r.list(v, rf::kMaxEvents, &a)) return;
  for (const Value& x : a.elements()) {
    Object p;
    if (!r.members(x, {"seq", "hashes"}, &p)) return;
    ReceiptDocument::Proof proof;
    r.u64(at(p, "seq"), &proof.seq);
    Array hashes;
    if (!r.list(at(p, "hashes"), rf::kMaxProofHashes, &hashes)) return;
    for (const Value& h : hashes.elements()) {
      Digest dg{};
      if (!r.digest(h, &dg)) return;
      proof.hashes.push_back(dg);
    }
    d.proofs.push_back(std::move(proof));
  }
}

void read_hashes(Reader& r, const Value& v, ReceiptDocument& d) {
  Object o;
  if (!r.members(v,
                 {rf::kHashedSections[0], rf::kHashedSections[1], rf::kHashedSections[2],
                  rf::kHashedSections[3], rf::kHashedSections[4], rf::kHashedSections[5],
                  rf::kHashedSections[6], rf::kHashedSections[7], rf::kHashedSections[8],
                  rf::kHashedSections[9]},
                 &o)) {
    return;
  }
  for (std::string_view name : rf::kHashedSections) {
    std::string hex;
    if (!r.hex64(at(o, name), &hex)) return;
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
  json::Reader reader(document_limits());
  auto root = reader.parse(payload);
  if (!root.ok()) return ReceiptFailure{"document", root.status().message()};
  // The signed bytes are hashed and compared as they are: no whitespace may hide in them.
  if (without_whitespace(payload) != payload) {
    return ReceiptFailure{"document", "not compact JSON (insignificant whitespace)"};
  }
  ReceiptDocument d;
  Reader r;
  // The version first, before the members (another version has other members).
  auto top_object = root->as_object();
  if (!top_object.ok()) return ReceiptFailure{"document", "not an object"};
  {
    const std::optional<Value> v_value = top_object->optional_value("v");
    uint64_t v = 0;
    if (!v_value) return ReceiptFailure{"v", "missing"};
    if (r.u64(*v_value, &v) && v != rf::kVersion) {
      return ReceiptFailure{
          "v", "receipt format version " + std::to_string(v) + "; this verifier reads version " +
                   std::to_string(rf::kVersion) +
                   " only (a version 1 receipt has no evidence section and an environment that was "
                   "copied, not recomputed: it is not verified here)"};
    }
    if (r.failure) return *r.failure;
  }
  Object top;
  r.members(*root,
            {rf::kMembers[0], rf::kMembers[1], rf::kMembers[2], rf::kMembers[3], rf::kMembers[4],
             rf::kMembers[5], rf::kMembers[6], rf::kMembers[7], rf::kMembers[8], rf::kMembers[9],
             rf::kMembers[10], rf::kMembers[11], rf::kMembers[12], rf::kMembers[13]},
            &top);
  static_assert(rf::kMembers.size() == 14, "parse_receipt_document lists every member");
  if (r.failure) return *r.failure;

  if (r.str(at(top, "attempt"), &d.attempt) &&
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

  // The sections' exact bytes, cut from the text (the reader has refused duplicates already).
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
