// Typed payloads of the attempt's events (docs/ATTEMPTS.md; the gate's and the worlds' are in
// gate_events.h and world_events.h), each with ONE
// encoder (the exact bytes the engine appends: members in the documented order, compact JSON)
// and ONE strict decoder on PayloadReader (no duplicate member, "v":1 first, the stream's
// attempt, each member's type and bounds). Every payload begins "v":1,"attempt":ID.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/json/json_reader.h"
#include "engine/log/event.h"

namespace aura::events {

// The attempt phases, in order (docs/ATTEMPTS.md, "Phases").
inline constexpr std::string_view kPhases[] = {"observe", "predict", "inspect", "contract",
                                               "apply",   "ack",     "verify",  "transfer_gate",
                                               "receipt", "reflect", "done"};
inline constexpr std::string_view kModes[] = {"learn", "judge"};
inline constexpr std::string_view kVerdicts[] = {"NOT_RECOVERED", "RECOVERED_UNPROVEN", "VERIFIED"};
inline constexpr std::string_view kProperties[] = {"primary", "twin", "control", "repeat",
                                                   "reversal"};
inline constexpr std::string_view kPropertyStatuses[] = {"pass", "fail", "not_run"};
inline constexpr std::string_view kScriptStatuses[] = {"pending_feedback", "pending_execution"};
inline constexpr std::string_view kCheckKinds[] = {"postcondition", "invariant"};

// A string of 64 lowercase hex digits (a SHA-256), or an error naming the member.
Result<std::string_view> read_sha256_hex(const json::Object& o, std::string_view name);

struct AttemptStarted {
  static constexpr std::string_view kType = kAttemptStarted;
  struct Scenario {
    std::string id, version, package_digest, manifest_sha256, publisher, dir;
  };
  std::string attempt, learner, mode;
  uint64_t seed = 0;
  Scenario scenario;
  uint64_t probe_budget = 0;
  std::vector<EvidenceRef> refs;  // the manifest: id "manifest", kind "scenario.manifest"

  std::string encode() const;
  static Result<AttemptStarted> decode(PayloadReader& r, const EventView& e);
};

struct AttemptPhase {
  static constexpr std::string_view kType = kAttemptPhase;
  std::string attempt, from, to;  // phase names (kPhases)

  std::string encode() const;
  static Result<AttemptPhase> decode(PayloadReader& r, const EventView& e);
};

struct AttemptPredicted {
  static constexpr std::string_view kType = kAttemptPredicted;
  std::string attempt, hypothesis, expect;
  uint64_t confidence = 0;  // 0..100

  std::string encode() const;
  static Result<AttemptPredicted> decode(PayloadReader& r, const EventView& e);
};

struct ProbeRequested {
  static constexpr std::string_view kType = kProbeRequested;
  std::string attempt;
  uint64_t probe = 0;
  std::string call;  // the validated call as compact JSON (scenario::call_reader)
  uint64_t cost = 0, spent = 0;

  std::string encode() const;
  static Result<ProbeRequested> decode(PayloadReader& r, const EventView& e);
};

struct ProbeCompleted {
  static constexpr std::string_view kType = kProbeCompleted;
  std::string attempt;
  uint64_t probe = 0;
  std::string evidence;  // "ev-<probe>"
  int64_t exit_code = 0;
  bool truncated = false;
  std::optional<std::string> error;  // the engine always writes a string; none is written null
  std::vector<std::string> resolved;
  std::vector<EvidenceRef> refs;  // id evidence, kind "probe.output" (none: no output)
  // The driver's own checks refused the probe's target before anything was read (a folder, a
  // missing path, a symlink out of bounds): nothing was done, and probe.requested charged 0.
  // Written only when true ("refused":true after refs), so other payloads keep their bytes.
  bool refused = false;

  std::string encode() const;
  static Result<ProbeCompleted> decode(PayloadReader& r, const EventView& e);
};

struct InterventionSubmitted {
  static constexpr std::string_view kType = kInterventionSubmitted;
  struct Script {
    std::string sha256, status;  // status: kScriptStatuses
  };
  std::string attempt;
  uint64_t revision = 0;
  std::string ir_sha256;
  std::vector<Script> scripts;
  std::vector<EvidenceRef> refs;  // id "ir-<revision>", kind "intervention.ir"

  std::string encode() const;
  static Result<InterventionSubmitted> decode(PayloadReader& r, const EventView& e);
};

struct ScriptAuthorized {
  static constexpr std::string_view kType = kScriptAuthorized;
  std::string attempt;
  uint64_t revision = 0;
  std::string sha256;

  std::string encode() const;
  static Result<ScriptAuthorized> decode(PayloadReader& r, const EventView& e);
};

// What an action event (action.completed here, gate.action in gate_events.h) records of one
// action after its own members.
struct ActionMembers {
  std::optional<std::string> call;           // compact JSON; or
  std::optional<std::string> script_sha256;  // for a script
  int64_t exit_code = 0;
  std::optional<std::string> error;  // the supervisor always writes a string; none is written null
  bool truncated = false;
  std::vector<std::string> resolved;
};

// One action of the IR run on the live world by apply.
struct ActionCompleted : ActionMembers {
  static constexpr std::string_view kType = kActionCompleted;
  std::string attempt, world, stage;  // "live", "apply"
  uint64_t index = 0;
  std::vector<EvidenceRef> refs;  // id "act-<n>", kind "action.output"

  std::string encode() const;
  static Result<ActionCompleted> decode(PayloadReader& r, const EventView& e);
};

struct ApplyCompleted {
  static constexpr std::string_view kType = kApplyCompleted;
  std::string attempt;
  uint64_t revision = 0, actions = 0, failed = 0;  // failed: a non-zero exit or an error
  bool aborted = false;                            // a host failure stopped the apply

  std::string encode() const;
  static Result<ApplyCompleted> decode(PayloadReader& r, const EventView& e);
};

// The supervisor's readback of the last apply (docs/ATTEMPTS.md, "ACK").
struct AckReadback {
  static constexpr std::string_view kType = kAckReadback;
  struct Line {
    uint64_t index = 0;
    std::optional<std::string> call;           // compact JSON; or
    std::optional<std::string> script_sha256;  // for a script
    bool typed = false;                        // false: nothing to compare
    std::string observed;
    std::vector<std::string> differences;
  };
  std::string attempt;
  uint64_t revision = 0;
  bool as_requested = false;
  std::vector<Line> actions;

  // The "actions" member's bytes: attempt.acknowledged's readback_sha256 is their SHA-256.
  std::string actions_json() const;
  std::string encode() const;
  static Result<AckReadback> decode(PayloadReader& r, const EventView& e);
};

struct AttemptAcknowledged {
  static constexpr std::string_view kType = kAttemptAcknowledged;
  std::string attempt;
  uint64_t readback = 0;        // the seq of the ack.readback confirmed
  std::string readback_sha256;  // of its actions_json()
  std::string note;             // may be empty

  std::string encode() const;
  static Result<AttemptAcknowledged> decode(PayloadReader& r, const EventView& e);
};

struct VerifyFact {
  static constexpr std::string_view kType = kVerifyFact;
  std::string attempt, check, kind;  // kind: kCheckKinds
  bool ok = false;
  std::string observed;

  std::string encode() const;
  static Result<VerifyFact> decode(PayloadReader& r, const EventView& e);
};

struct AttemptVerified {
  static constexpr std::string_view kType = kAttemptVerified;
  std::string attempt;
  bool recovered = false;
  std::vector<uint64_t> facts;  // seqs of the verify.facts

  std::string encode() const;
  static Result<AttemptVerified> decode(PayloadReader& r, const EventView& e);
};

struct GateProperty {
  static constexpr std::string_view kType = kGateProperty;
  std::string attempt;
  uint64_t gate = 0;
  std::string property, status, reason;
  std::vector<uint64_t> cited;
  // What a learner is told of a failed property (gate::Finding): the deciding check, its public
  // description, and what was observed in the grader's words. Written as "finding" after
  // "cited" only when observed is set; an older event without it decodes with all three empty.
  std::string finding_check, finding_description, finding_observed;

  std::string encode() const;
  static Result<GateProperty> decode(PayloadReader& r, const EventView& e);
};

struct GateVerdict {
  static constexpr std::string_view kType = kGateVerdict;
  std::string attempt;
  uint64_t gate = 0;
  std::string verdict;
  bool recovered = false;
  std::string result;  // gate::result_json, as compact JSON

  std::string encode() const;
  static Result<GateVerdict> decode(PayloadReader& r, const EventView& e);
};

struct ReceiptIssued {
  static constexpr std::string_view kType = kReceiptIssued;
  std::string attempt, receipt_sha256;
  uint64_t first_seq = 0, last_seq = 0, checkpoint_size = 0;
  std::vector<EvidenceRef> refs;  // id "receipt", kind "receipt.dsse"

  std::string encode() const;
  static Result<ReceiptIssued> decode(PayloadReader& r, const EventView& e);
};

// Reserved for the Evidence Coach; disclosed on receipts (docs/formats/receipt.md).
struct CoachUsed {
  static constexpr std::string_view kType = kCoachUsed;
  std::string attempt;
  uint64_t call = 0;  // 1, 2, ...
  std::string request_sha256, response_sha256, model;

  std::string encode() const;
  static Result<CoachUsed> decode(PayloadReader& r, const EventView& e);
};

struct AttemptReflected {
  static constexpr std::string_view kType = kAttemptReflected;
  std::string attempt, text;

  std::string encode() const;
  static Result<AttemptReflected> decode(PayloadReader& r, const EventView& e);
};

struct AttemptAbandoned {
  static constexpr std::string_view kType = kAttemptAbandoned;
  std::string attempt, reason;

  std::string encode() const;
  static Result<AttemptAbandoned> decode(PayloadReader& r, const EventView& e);
};

// Decodes `e` as T, refusing an event of another type.
template <class T>
Result<T> decode(PayloadReader& r, const EventView& e) {
  if (e.type != T::kType) {
    return Status::invalid(std::string(e.type) + ": not a " + std::string(T::kType) + " event");
  }
  return T::decode(r, e);
}

// An EventDraft of `payload`'s type in its attempt's stream.
template <class T>
EventDraft attempt_draft(const T& payload, std::string actor) {
  return {std::string(kAttemptStreamPrefix) + payload.attempt, std::string(T::kType),
          std::move(actor), payload.encode()};
}

}  // namespace aura::events
