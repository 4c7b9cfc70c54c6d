#include "engine/receipt/receipt.h"

#include <algorithm>
#include <set>
#include <variant>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/json_writer.h"
#include "engine/gate/change_set.h"
#include "engine/gate/grader.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/log/log_verifier.h"
#include "engine/merkle/merkle.h"
#include "engine/package/package_format.h"
#include "engine/receipt/raw_json.h"
#include "engine/receipt/receipt_builder.h"
#include "engine/receipt/receipt_document.h"
#include "engine/receipt/receipt_format.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/dsse.h"

namespace aura::receipt {
namespace {

namespace rf = receipt_format;

std::string hashes_json(const std::vector<Digest>& hs) {
  JsonArray a;
  for (const auto& h : hs) a.str(to_hex(h));
  return a.done();
}

// Adds the report's lines; `check` names a check that held, `fail` one that did not.
struct Recorder {
  ReceiptReport& report;
  void pass(std::string check) { report.passed.push_back(std::move(check)); }
  void fail(std::string field, std::string what) {
    report.failures.push_back({std::move(field), std::move(what)});
  }
  size_t failures() const { return report.failures.size(); }
};

void check_hashes(const ReceiptDocument& d, Recorder& rec) {
  for (const auto& [name, hex] : d.hashes) {
    const std::string actual = to_hex(sha256(d.section(name)));
    if (actual == hex) {
      rec.pass("hashes." + name);
    } else {
      rec.fail("hashes." + name,
               "the SHA-256 of section " + name + " is " + actual + ", the receipt says " + hex);
    }
  }
}

void check_gate_claims(const ReceiptDocument& d, Recorder& rec) {
  const size_t before = rec.failures();
  if (d.verdict != gate::verdict_name(gate::Verdict::kVerified)) {
    // The receipt field, not the event type: NOLINT(event-type)
    rec.fail("gate.verdict", "is " + d.verdict + "; a receipt is issued only for VERIFIED");
  }
  if (!d.recovered) rec.fail("gate.recovered", "false under a VERIFIED verdict");
  if (d.properties.size() != std::size(gate::kProperties)) {
    rec.fail("gate.properties",
             "lists " + std::to_string(d.properties.size()) + " properties, expected 5");
  }
  for (size_t i = 0; i < d.properties.size() && i < std::size(gate::kProperties); ++i) {
    const auto& p = d.properties[i];
    const std::string f = "gate.properties[" + std::to_string(i) + "]";
    if (p.property != gate::property_name(gate::kProperties[i])) {
      rec.fail(f + ".property", "is " + p.property + ", expected " +
                                    std::string(gate::property_name(gate::kProperties[i])));
    }
    if (p.status != "pass") rec.fail(f + ".status", "is " + p.status + " under VERIFIED");
  }
  if (rec.failures() == before) rec.pass("gate");
}

// The event list is one stream's, ascending and counted; every seq the document cites is in it.
void check_events(const ReceiptDocument& d, Recorder& rec) {
  const size_t before = rec.failures();
  if (d.stream != "attempt/" + d.attempt) {
    rec.fail("events.stream", "is " + d.stream + ", not the stream of attempt " + d.attempt);
  }
  if (d.count != d.leaves.size()) {
    rec.fail("events.count", "is " + std::to_string(d.count) + " but " +
                                 std::to_string(d.leaves.size()) + " leaves are listed");
  }
  if (d.leaves.empty()) {
    rec.fail("events.leaves", "empty");
  } else {
    if (d.leaves.front().seq != d.first_seq) {
      rec.fail("events.first_seq", "is " + std::to_string(d.first_seq) +
                                       " but the first leaf is seq " +
                                       std::to_string(d.leaves.front().seq));
    }
    if (d.leaves.back().seq != d.last_seq) {
      rec.fail("events.last_seq", "is " + std::to_string(d.last_seq) +
                                      " but the last leaf is seq " +
                                      std::to_string(d.leaves.back().seq));
    }
    for (size_t i = 0; i < d.leaves.size(); ++i) {
      if (d.leaves[i].seq == 0 || (i > 0 && d.leaves[i].seq <= d.leaves[i - 1].seq)) {
        rec.fail("events.leaves[" + std::to_string(i) + "].seq",
                 "seq " + std::to_string(d.leaves[i].seq) + " is not after the previous leaf");
        break;
      }
    }
  }
  std::set<uint64_t> seqs;
  for (const auto& l : d.leaves) seqs.insert(l.seq);
  const auto cited_outside = [&](const std::vector<uint64_t>& cited, const std::string& field) {
    for (uint64_t s : cited) {
      if (!seqs.count(s)) {
        rec.fail(field, "cites seq " + std::to_string(s) + ", which is not among events.leaves");
        return;
      }
    }
  };
  cited_outside(d.fact_seqs, "facts");
  cited_outside(d.evidence_seqs, "evidence");
  cited_outside(d.world_seqs, "environment.worlds");
  cited_outside(d.rollback_seqs, "rollback.facts");
  for (size_t i = 0; i < d.properties.size(); ++i) {
    cited_outside(d.properties[i].cited, "gate.properties[" + std::to_string(i) + "].cited");
  }
  if (rec.failures() == before) rec.pass("events");
}

// The checkpoint note verifies with the pinned key and covers the events; every event has an
// inclusion proof to its root. Returns the checkpoint when its note verified.
std::optional<Checkpoint> check_checkpoint_and_proofs(const ReceiptDocument& d,
                                                      const NoteVerifierKey& pinned,
                                                      Recorder& rec) {
  auto ck = open_checkpoint(d.checkpoint_note, std::span<const NoteVerifierKey>(&pinned, 1));
  if (!ck.ok()) {
    rec.fail("checkpoint.note", ck.status().message());
    rec.fail("inclusion_proofs", "not checked: no verified checkpoint root");
    return std::nullopt;
  }
  const size_t before = rec.failures();
  if (ck->size != d.checkpoint_size) {
    rec.fail("checkpoint.size", "is " + std::to_string(d.checkpoint_size) +
                                    " but the signed note is of size " + std::to_string(ck->size));
  }
  if (ck->size < d.last_seq) {
    rec.fail("checkpoint.size", "the checkpoint of size " + std::to_string(ck->size) +
                                    " does not cover last_seq " + std::to_string(d.last_seq));
  }
  if (rec.failures() == before) rec.pass("checkpoint");

  const size_t proofs_before = rec.failures();
  if (d.proofs.size() != d.leaves.size()) {
    rec.fail("inclusion_proofs", std::to_string(d.proofs.size()) + " proofs for " +
                                     std::to_string(d.leaves.size()) + " events");
  }
  for (size_t i = 0; i < d.proofs.size() && i < d.leaves.size(); ++i) {
    const std::string f = "inclusion_proofs[" + std::to_string(i) + "]";
    const auto& leaf = d.leaves[i];
    if (d.proofs[i].seq != leaf.seq) {
      rec.fail(f + ".seq", "is " + std::to_string(d.proofs[i].seq) + " but events.leaves[" +
                               std::to_string(i) + "] is seq " + std::to_string(leaf.seq));
      continue;
    }
    if (leaf.seq == 0 || leaf.seq > ck->size) {
      rec.fail(f, "seq " + std::to_string(leaf.seq) + " is outside the checkpoint of size " +
                      std::to_string(ck->size));
      continue;
    }
    Status s = merkle::verify_inclusion(merkle::leaf_hash(leaf.hash), leaf.seq - 1, ck->size,
                                        d.proofs[i].hashes, ck->root);
    if (!s.is_ok()) {
      rec.fail(f, "event seq " + std::to_string(leaf.seq) + " (hash " + to_hex(leaf.hash) +
                      ") is not proven in the checkpoint: " + s.message());
    }
  }
  if (rec.failures() == proofs_before) rec.pass("inclusion_proofs");
  return std::move(ck).value();
}

// The first member (objects) or element (arrays) at which two compact JSON values differ, as a
// path below `field` ("environment.binaries", "evidence[0]"); `field` itself when they are not
// comparable that way.
std::string differing_field(std::string_view field, std::string_view mine,
                            std::string_view theirs) {
  std::string path(field);
  if (field == "actions") path = "intervention.actions";
  if (mine.empty() || theirs.empty() || mine.front() != theirs.front()) return path;
  if (mine.front() == '{') {
    auto a = raw_members(mine, path);
    auto b = raw_members(theirs, path);
    if (!a.ok() || !b.ok()) return path;
    for (size_t i = 0; i < a->size() && i < b->size(); ++i) {
      if ((*a)[i].key != (*b)[i].key) return path + "." + std::string((*a)[i].key);
      if ((*a)[i].value != (*b)[i].value) {
        return differing_field(path + "." + std::string((*a)[i].key), (*a)[i].value, (*b)[i].value);
      }
    }
    return path;
  }
  if (mine.front() == '[') {
    // Elements of compact arrays of objects or strings: split at depth-one commas.
    const auto split = [](std::string_view arr) {
      std::vector<std::string_view> out;
      int depth = 0;
      bool in_string = false;
      size_t start = 1;
      for (size_t i = 1; i + 1 < arr.size(); ++i) {
        const char c = arr[i];
        if (in_string) {
          if (c == '\\')
            ++i;
          else if (c == '"')
            in_string = false;
        } else if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          --depth;
        } else if (c == ',' && depth == 0) {
          out.push_back(arr.substr(start, i - start));
          start = i + 1;
        }
      }
      if (arr.size() > 2) out.push_back(arr.substr(start, arr.size() - 1 - start));
      return out;
    };
    const auto a = split(mine), b = split(theirs);
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (a[i] != b[i]) {
        return differing_field(path + "[" + std::to_string(i) + "]", a[i], b[i]);
      }
    }
    return path;
  }
  return path;
}

// What differs, shortly: the byte offset in the section, and the log's value of the field when it
// is short.
std::string difference_text(std::string_view name, std::string_view mine, std::string_view theirs) {
  size_t at = 0;
  while (at < mine.size() && at < theirs.size() && mine[at] == theirs[at]) ++at;
  return "the section rebuilt from the log differs at byte " + std::to_string(at) + " of " +
         std::string(name);
}

// Re-runs the grader on the recorded facts, reading the manifest and IR as the gate did.
void regrade(const ReceiptDocument& d, const ReceiptSections& s, const BlobStore& blobs,
             Recorder& rec) {
  if (s.manifest_ref.bytes > package_format::kMaxManifestBytes) {
    rec.fail("regraded", "the manifest blob is over the manifest size limit");
    return;
  }
  auto bytes = blobs.get(s.manifest_ref.sha256);
  if (!bytes.ok()) {
    rec.fail("regraded", "manifest blob: " + bytes.status().message());
    return;
  }
  auto manifest = scenario::parse_manifest(*bytes);
  if (!manifest.ok()) {
    rec.fail("regraded", "manifest blob: " + manifest.status().message());
    return;
  }
  intervention::IrContext context;
  context.manifest = &*manifest;
  context.unlocked_evidence = s.unlocked_evidence;
  auto ir = intervention::parse_intervention(s.ir_json, context);
  if (!ir.ok()) {
    rec.fail("regraded", "IR blob: " + ir.status().message());
    return;
  }
  // Each change set judged again: the blob the fact refers to, read back whole, must judge as
  // the fact says against the signed manifest's surface (an edited blob no longer has its
  // digest; an edited fact no longer matches what its blob says).
  const size_t changes_before = rec.failures();
  for (const auto& c : s.change_sets) {
    const std::string at = "change set of fact seq " + std::to_string(c.fact.seq) + ": ";
    if (!manifest->changes) {
      rec.fail("changes", at + "the manifest declares no change surface");
      continue;
    }
    if (!c.ref || c.ref->bytes > gate::kMaxChangeSetBytes) {
      rec.fail("changes", at + "no change set blob (ref \"changes\") within the size limit");
      continue;
    }
    auto text = blobs.get(c.ref->sha256);
    if (!text.ok()) {
      rec.fail("changes", at + text.status().message());
      continue;
    }
    // get() checked the digest; the size is the ref's too.
    if (text->size() != c.ref->bytes) {
      rec.fail("changes", at + "the blob is not the size its reference says");
      continue;
    }
    auto parsed = gate::parse_change_set(*text);
    if (!parsed.ok()) {
      rec.fail("changes", at + parsed.status().message());
      continue;
    }
    const gate::ChangeJudgement j = gate::judge_changes(*manifest->changes, *parsed);
    if (j.fix_digest != c.fact.value || j.ok != c.fact.ok) {
      rec.fail("changes", at + "judged again it gives ok=" + (j.ok ? "true" : "false") +
                              " and digest " + j.fix_digest + ", the fact records ok=" +
                              (c.fact.ok ? "true" : "false") + " and " + c.fact.value);
    }
  }
  if (manifest->changes && rec.failures() == changes_before) rec.pass("changes");
  std::vector<std::string> promised = ir->postconditions;
  promised.insert(promised.end(), ir->invariants.begin(), ir->invariants.end());
  const gate::GateResult result =
      gate::grade(gate::GateSpec::from(*manifest, promised), s.grader_facts, s.not_run);
  const std::string graded = gate::result_json(result);
  const size_t before = rec.failures();
  if (graded != s.verdict_result) {
    rec.fail("gate", "re-grading the recorded facts gives " +
                         std::string(gate::verdict_name(result.verdict)) + " " + graded +
                         "; the gate.verdict event records " + s.verdict_result);
  }
  if (graded != d.section("gate")) {
    rec.fail("gate", "re-grading the recorded facts gives " +
                         std::string(gate::verdict_name(result.verdict)) +
                         ", not the receipt's gate section");
  }
  if (rec.failures() == before) rec.pass("regraded");
}

void replay(const ReceiptDocument& d, const std::optional<Checkpoint>& ck,
            const NoteVerifierKey& pinned, const ReplayContext& ctx, Recorder& rec) {
  rec.report.replayed = true;
  if (ctx.log == nullptr || ctx.blobs == nullptr) {
    rec.fail("replay", "no log or no blob store to replay against");
    return;
  }
  const EventLog& log = *ctx.log;

  if (ctx.whole_log) {
    // The whole log, as `aura log verify` checks it.
    VerifyOptions o;
    o.keys = {pinned};
    o.blobs = ctx.blobs;
    VerifyReport vr = verify_log(log, o);
    if (vr.ok()) {
      rec.pass("log");
    } else {
      for (size_t i = 0; i < vr.problems.size() && i < 10; ++i) {
        rec.fail("log", "seq " + std::to_string(vr.problems[i].seq) + ": " + vr.problems[i].what);
      }
    }
  } else if (!ck) {
    rec.fail("log", "no checkpoint verified: the log's events cannot be bound to a signed root");
  } else {
    // The receipt's events alone: each as stored, linked to the one before it, with its blobs,
    // and in the log's tree under the checkpoint's signed root.
    std::vector<uint64_t> seqs;
    seqs.reserve(d.leaves.size());
    for (const auto& leaf : d.leaves) seqs.push_back(leaf.seq);
    VerifyReport vr = verify_events(log, seqs, ck->size, ck->root, ctx.blobs);
    if (vr.ok()) {
      rec.pass("log events");
    } else {
      for (size_t i = 0; i < vr.problems.size() && i < 10; ++i) {
        rec.fail("log", "seq " + std::to_string(vr.problems[i].seq) + ": " + vr.problems[i].what);
      }
    }
  }

  // The checkpoint is of this log.
  if (ck) {
    if (ck->size > log.head().seq) {
      rec.fail("checkpoint.size", "the log holds only " + std::to_string(log.head().seq) +
                                      " events, the checkpoint " + std::to_string(ck->size));
    } else if (auto root = log.root_at(ck->size); !root.ok()) {
      rec.fail("checkpoint", "the log's tree at size " + std::to_string(ck->size) + ": " +
                                 root.status().message());
    } else if (*root != ck->root) {
      rec.fail("checkpoint",
               "its root differs from the log's tree at size " + std::to_string(ck->size));
    } else {
      rec.pass("checkpoint in log");
    }
  }

  // Every bound event is the log's, and the stream has no other event in range.
  const size_t before = rec.failures();
  for (size_t i = 0; i < d.leaves.size(); ++i) {
    const auto& leaf = d.leaves[i];
    const std::string f = "events.leaves[" + std::to_string(i) + "]";
    auto ev = log.get(leaf.seq);
    if (!ev.ok()) {
      rec.fail(f, "seq " + std::to_string(leaf.seq) + ": " + ev.status().message());
    } else if (ev->stream != d.stream) {
      rec.fail(f, "seq " + std::to_string(leaf.seq) + " is in stream " + ev->stream + ", not " +
                      d.stream);
    } else if (ev->hash != leaf.hash) {
      rec.fail(f + ".hash",
               "seq " + std::to_string(leaf.seq) + ": the log's event hash is " + to_hex(ev->hash));
    }
  }
  std::vector<uint64_t> in_log;
  Status s = log.read_stream(d.stream, d.first_seq, [&](const EventView& v) {
    if (v.seq > d.last_seq || in_log.size() > rf::kMaxEvents) return false;
    in_log.push_back(v.seq);
    return true;
  });
  if (!s.is_ok()) {
    rec.fail("events", "read " + d.stream + ": " + s.message());
  } else {
    std::set<uint64_t> listed;
    for (const auto& l : d.leaves) listed.insert(l.seq);
    for (uint64_t seq : in_log) {
      if (!listed.count(seq)) {
        rec.fail("events.leaves", "the log's stream " + d.stream + " holds seq " +
                                      std::to_string(seq) + ", which the receipt does not list");
        break;
      }
    }
  }
  if (rec.failures() == before) rec.pass("events in log");

  // Every section, rebuilt from the log's events by the issuer's code.
  auto rebuilt = build_sections(log, *ctx.blobs, d.attempt, d.last_seq);
  if (!rebuilt.ok()) {
    rec.fail("replay", "rebuilding the receipt from the log: " + rebuilt.status().message());
    return;
  }
  for (std::string_view name : rf::kHashedSections) {
    const std::string_view mine = d.section(name);
    const std::string_view theirs = rebuilt->section(name);
    if (mine == theirs) {
      rec.pass("rebuilt " + std::string(name));
      continue;
    }
    std::string field = differing_field(name, mine, theirs);
    const bool named = std::any_of(rec.report.failures.begin(), rec.report.failures.end(),
                                   [&](const ReceiptFailure& f) { return f.field == field; });
    if (!named) {
      rec.fail(std::move(field),
               "differs from what the log records: " + difference_text(name, mine, theirs));
    }
  }
  regrade(d, *rebuilt, *ctx.blobs, rec);
}

}  // namespace

Result<IssuedReceipt> issue_receipt(EventLog& log, std::string_view attempt_id,
                                    const NoteSigner& lab_signer, const BlobStore& blobs) {
  auto built = build_sections(log, blobs, attempt_id, 0);
  if (!built.ok())
    return built.status().with_context("receipt for attempt " + std::string(attempt_id));
  const ReceiptSections& s = *built;

  auto stored = log.checkpoint();
  if (!stored.ok()) return stored.status().with_context("receipt checkpoint");
  const NoteVerifierKey self = lab_signer.verifier();
  auto ck = open_checkpoint(stored->signed_note, std::span<const NoteVerifierKey>(&self, 1));
  if (!ck.ok()) return ck.status().with_context("receipt checkpoint (not signed by the lab key)");
  if (ck->size < s.last_seq) {
    return Status::failed_precondition("the checkpoint of size " + std::to_string(ck->size) +
                                       " does not cover seq " + std::to_string(s.last_seq));
  }

  JsonArray proofs;
  for (const auto& [seq, hash] : s.leaves) {
    auto proof = merkle::inclusion_proof(seq - 1, ck->size, log.nodes());
    if (!proof.ok()) {
      return proof.status().with_context("inclusion proof of seq " + std::to_string(seq));
    }
    proofs.raw(JsonWriter().num("seq", seq).raw("hashes", hashes_json(*proof)).done());
  }
  JsonWriter hashes;
  for (std::string_view name : rf::kHashedSections)
    hashes.str(name, to_hex(sha256(s.section(name))));

  IssuedReceipt out;
  out.document =
      JsonWriter()
          .num("v", rf::kVersion)
          .str("attempt", s.attempt)
          .raw("scenario", s.scenario)
          .raw("environment", s.environment)
          .raw("intervention", s.intervention)
          .raw("evidence", s.evidence)
          .raw("facts", s.facts)
          .raw("gate", s.gate)
          .raw("rollback", s.rollback)
          .raw("model_assistance", s.model_assistance)
          .raw("events", s.events)
          .raw("checkpoint",
               JsonWriter().num("size", ck->size).str("note", stored->signed_note).done())
          .raw("inclusion_proofs", proofs.done())
          .raw("hashes", hashes.done())
          .done();
  out.envelope = dsse_sign(rf::kPayloadType, out.document, lab_signer);
  if (out.envelope.size() > rf::kMaxEnvelopeBytes) {
    return Status::failed_precondition("the receipt envelope of " +
                                       std::to_string(out.envelope.size()) +
                                       " bytes is over the limit");
  }
  out.envelope_sha256 = sha256(out.envelope);
  out.first_seq = s.first_seq;
  out.last_seq = s.last_seq;
  out.checkpoint_size = ck->size;
  return out;
}

ReceiptReport verify_receipt(std::string_view envelope, const NoteVerifierKey& pinned,
                             std::optional<ReplayContext> replay_context) {
  ReceiptReport report;
  Recorder rec{report};
  if (envelope.size() > rf::kMaxEnvelopeBytes) {
    rec.fail("envelope", std::to_string(envelope.size()) + " bytes, over the limit of " +
                             std::to_string(rf::kMaxEnvelopeBytes));
    return report;
  }
  auto payload =
      dsse_open(envelope, rf::kPayloadType, std::span<const NoteVerifierKey>(&pinned, 1));
  if (!payload.ok()) {
    // Malformed or of another payload type: the envelope; a signature that fails: the signature.
    rec.fail(payload.status().code() == ErrorCode::kCorruption ? "signature" : "envelope",
             payload.status().message());
    return report;
  }
  rec.pass("signature");

  auto parsed = parse_receipt_document(*payload);
  if (auto* f = std::get_if<ReceiptFailure>(&parsed)) {
    rec.fail(f->field, f->what);
    return report;
  }
  const ReceiptDocument& d = std::get<ReceiptDocument>(parsed);
  rec.pass("document");
  report.attempt = d.attempt;
  report.scenario_id = d.scenario_id;
  report.verdict = d.verdict;
  report.first_seq = d.first_seq;
  report.last_seq = d.last_seq;
  report.checkpoint_size = d.checkpoint_size;

  check_hashes(d, rec);
  check_gate_claims(d, rec);
  check_events(d, rec);
  const auto ck = check_checkpoint_and_proofs(d, pinned, rec);
  if (replay_context) replay(d, ck, pinned, *replay_context, rec);
  return report;
}

}  // namespace aura::receipt
