// The receipt's sections, rebuilt from one attempt's events in the log: what issue_receipt()
// signs, and what verify_receipt() with replay rebuilds and compares byte for byte. One function
// builds both, so an auditor's replay runs exactly the issuer's code. Layout:
// docs/formats/receipt.md.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/gate/grader.h"
#include "engine/log/event_log.h"

namespace aura::receipt {

struct ReceiptSections {
  std::string attempt;                              // 16 lowercase hex
  std::string stream;                               // "attempt/<attempt>"
  uint64_t first_seq = 0;                           // attempt.started
  uint64_t last_seq = 0;                            // the gate.verdict
  std::vector<std::pair<uint64_t, Digest>> leaves;  // every event of the stream in range

  // Compact JSON of each hashed section, exactly as the document holds it.
  std::string scenario, environment, intervention, actions, evidence, facts, gate, rollback,
      model_assistance, events;

  // What re-grading needs (docs/ATTEMPTS.md: only these feed the grader).
  uint64_t gate_seq = 0;                    // the gate.started the verdict belongs to
  EvidenceRef manifest_ref;                 // attempt.started's refs id "manifest"
  std::string ir_json;                      // the IR blob's exact bytes
  std::set<std::string> unlocked_evidence;  // probe.completed evidence ids before the submission
  std::vector<gate::Fact> grader_facts;     // supervisor gate.facts of this gate
  // The change-set facts among them (gate::kChangesCheck): the fact and its blob ref "changes",
  // judged again against the manifest's surface by the replay (receipt.cc, "changes").
  struct ChangeSetFact {
    gate::Fact fact;
    std::optional<EvidenceRef> ref;
  };
  std::vector<ChangeSetFact> change_sets;
  std::vector<gate::Property> not_run;  // properties whose gate.property is not_run
  std::string verdict_result;           // gate.verdict's "result", exact bytes

  // The section named (one of receipt_format::kHashedSections); empty for another name.
  std::string_view section(std::string_view name) const;
};

// Reads the stream attempt/<attempt_id> and builds the sections for the events from its
// attempt.started through its gate.verdict at `verdict_seq` (0: the stream's last gate.verdict).
// Reads the IR blob from `blobs`. Refuses with kFailedPrecondition when there is no gate verdict
// or it is not VERIFIED, or the range holds more than receipt_format::kMaxEvents events;
// kNotFound for an attempt with no events; kInvalidArgument for a malformed id; kCorruption,
// naming the seq and member, when an event does not follow docs/ATTEMPTS.md. The environment is
// recomputed from the log, never copied: the profile digest and world images from the gate's
// world.built events and their blobs (the package's SHA256SUMS must hash to the scenario's
// package digest), the capability digest from the latest capabilities.measured before the gate;
// kFailedPrecondition when the gate.started's lab build digest is unknown (empty, or all zeros),
// no capability panel was recorded before the gate, or the gate recorded no world.built.
// Thread-safe as far as the log's reads are.
Result<ReceiptSections> build_sections(const EventLog& log, const BlobStore& blobs,
                                       std::string_view attempt_id, uint64_t verdict_seq = 0);

}  // namespace aura::receipt
