// The lab's event catalog: every event type the lab writes or reads (the `type` of an
// EventDraft / StoredEvent, engine/log/event.h), as one named constant. Nothing outside this
// folder spells an event type as a literal (scripts/check-event-literals.py checks it); payloads
// are described in docs/ATTEMPTS.md, docs/GATE.md, docs/WRITER.md and docs/CAPABILITIES.md, and
// the ones the lab reads back have a typed codec in attempt_events.h / registry_events.h.
// Each constant is a char array, so it converts as a literal would: to std::string (EventDraft),
// std::string_view (EventView) and const char*.
#pragma once

#include <string_view>

namespace aura::events {

// ---- an attempt's stream (attempt/<id>, docs/ATTEMPTS.md) ----
inline constexpr char kAttemptStarted[] = "attempt.started";
inline constexpr char kAttemptPhase[] = "attempt.phase";
inline constexpr char kAttemptPredicted[] = "attempt.predicted";
inline constexpr char kAttemptAcknowledged[] = "attempt.acknowledged";
inline constexpr char kAttemptVerified[] = "attempt.verified";
inline constexpr char kAttemptReflected[] = "attempt.reflected";
inline constexpr char kAttemptAbandoned[] = "attempt.abandoned";
inline constexpr char kProbeRequested[] = "probe.requested";
inline constexpr char kProbeCompleted[] = "probe.completed";
inline constexpr char kInterventionSubmitted[] = "intervention.submitted";
inline constexpr char kScriptAuthorized[] = "script.authorized";
inline constexpr char kActionCompleted[] = "action.completed";
inline constexpr char kApplyCompleted[] = "apply.completed";
inline constexpr char kAckReadback[] = "ack.readback";
inline constexpr char kWorldBuilt[] = "world.built";
inline constexpr char kWorldReset[] = "world.reset";
inline constexpr char kVerifyFact[] = "verify.fact";
inline constexpr char kCoachUsed[] = "coach.used";
// Who may drive the attempt through the lab's service: its capability's SHA-256 (app/lab/access.h).
inline constexpr char kAttemptAccess[] = "attempt.access";
// The TransferGate's (docs/GATE.md).
inline constexpr char kGateStarted[] = "gate.started";
inline constexpr char kGateAction[] = "gate.action";
inline constexpr char kGateFact[] = "gate.fact";
inline constexpr char kGateProperty[] = "gate.property";
inline constexpr char kGateVerdict[] = "gate.verdict";
inline constexpr char kReceiptIssued[] = "receipt.issued";

// ---- runs and the writer socket (docs/WRITER.md, docs/RUNNER.md) ----
inline constexpr char kRunStarted[] = "run.started";
inline constexpr char kRunEnded[] = "run.ended";
inline constexpr char kRunnerEvidence[] = "runner.evidence";
inline constexpr char kEvidenceRejected[] = "evidence.rejected";

// ---- the lab's registries (streams lab/...) ----
inline constexpr char kScenarioLoaded[] = "scenario.loaded";
inline constexpr char kScenarioRejected[] = "scenario.rejected";
inline constexpr char kScenarioSigned[] = "scenario.signed";
inline constexpr char kCapabilitiesMeasured[] = "capabilities.measured";
inline constexpr char kSupervisorReaped[] = "supervisor.reaped";

// ---- the operator's own events (`aura log append`): operator.NAME ----
inline constexpr char kOperatorTypePrefix[] = "operator.";
inline constexpr char kOperatorNote[] = "operator.note";  // the documented example

// Every type above (the operator prefix aside), for checks and tools.
inline constexpr std::string_view kAllTypes[] = {
    kAttemptStarted,
    kAttemptPhase,
    kAttemptPredicted,
    kAttemptAcknowledged,
    kAttemptVerified,
    kAttemptReflected,
    kAttemptAbandoned,
    kProbeRequested,
    kProbeCompleted,
    kInterventionSubmitted,
    kScriptAuthorized,
    kActionCompleted,
    kApplyCompleted,
    kAckReadback,
    kWorldBuilt,
    kWorldReset,
    kVerifyFact,
    kCoachUsed,
    kAttemptAccess,
    kGateStarted,
    kGateAction,
    kGateFact,
    kGateProperty,
    kGateVerdict,
    kReceiptIssued,
    kRunStarted,
    kRunEnded,
    kRunnerEvidence,
    kEvidenceRejected,
    kScenarioLoaded,
    kScenarioRejected,
    kScenarioSigned,
    kCapabilitiesMeasured,
    kSupervisorReaped,
    kOperatorNote,
};

}  // namespace aura::events
